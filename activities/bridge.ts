import { and, isNull, ne, sql } from 'drizzle-orm';
import { erc20Abi, parseEventLogs, type Address, type Hex, type Transaction, type TransactionReceipt } from 'viem';
import { isNativeToken, tokenBalance } from '../src/chain/erc20.ts';
import { ledgerEntries, transfers } from '../src/db/schema.ts';
import type { BridgeLeg, BridgeOrderRef, RoutePlan } from '../src/domain/plan.ts';
import { cctpLegs } from './cctpLeg.ts';
import { exitAddressOf, type ActivityDeps } from './deps.ts';
import { assertPlanIsRecorded } from './planGuard.ts';
import { directLegs } from './directLeg.ts';
import type { LegMover, LegRequest } from './legs.ts';
import { relayLegs } from './relayLeg.ts';
import { nativeUserBalance } from './nativeFunds.ts';
import { ledgerEntryOf, recordLedger } from '../src/transfers/ledgerStore.ts';
import { recordServiceFee, writeStatus } from './projection.ts';
import type { StatusProjection } from '../src/domain/projection.ts';
import { failure } from '../src/failures.ts';
import { updateTransfer } from '../src/transfers/transferStore.ts';
import { legFirstOrderedAt } from '../src/transfers/bridgeOrderStore.ts';

export interface DeliveryWait {
  plan: RoutePlan;
  leg: BridgeLeg;
  order: BridgeOrderRef;
  /** The status the route moved to, written before the wait (see writeStatus). */
  projection?: StatusProjection;
  /** The last leg: once delivered, book the service fee and project COMPLETED with this sequence number. */
  completion?: { seq: number; shielded: string };
}

export interface DeliveryCheck {
  routeId: string;
  leg: BridgeLeg;
  chainId: number;
  token: Address;
  recipient: Address;
  amount: string;
  txHashes: Hex[];
}

const ends = (plan: RoutePlan, leg: BridgeLeg) =>
  leg === 'in'
    ? { originChainId: plan.sourceChainId, destinationChainId: plan.hubChainId }
    : { originChainId: plan.hubChainId, destinationChainId: plan.destChainId };

/** The leg movers of the configured bridge: a plain transfer when a leg stays on one chain. */
export function legMovers(deps: ActivityDeps) {
  const bridged: LegMover = deps.bridge.mode === 'relay' ? relayLegs(deps, deps.bridge.relay) : cctpLegs(deps, deps.bridge.cctp);
  const direct = directLegs(deps);
  return {
    forLeg: (request: Pick<LegRequest, 'originChainId' | 'destinationChainId'>) => (request.originChainId === request.destinationChainId ? direct : bridged),
    ofOrder: (order: BridgeOrderRef) => (order.kind === 'direct' ? direct : bridged),
  };
}

/**
 * The outbound leg: exact output, so the recipient receives quotedOutputAmount. It is sent from the exit
 * account, a fresh account that never touched the route's deposit, whose gas comes from the pool's relayer.
 */
export function outboundLeg(deps: ActivityDeps, plan: RoutePlan, generation: number, available: bigint): LegRequest {
  const { exit } = deps.keyring.routeAccounts(plan.accountIndex);
  return {
    routeId: plan.routeId,
    leg: 'out',
    generation,
    from: exit,
    ...ends(plan, 'out'),
    originCurrency: plan.hubToken,
    destinationCurrency: plan.destToken,
    amount: BigInt(plan.quotedOutputAmount),
    tradeType: 'EXACT_OUTPUT',
    recipient: plan.recipient,
    available,
    gasFunder: deps.poolRelayer,
  };
}

/** What a transaction paid `recipient` of an ERC-20: the sum of the token's Transfer logs to it. */
export function tokenDelivered(receipt: Pick<TransactionReceipt, 'logs'>, token: Address, recipient: Address): bigint {
  return parseEventLogs({ abi: erc20Abi, eventName: 'Transfer', logs: receipt.logs })
    .filter((log) => log.address.toLowerCase() === token.toLowerCase() && log.args.to.toLowerCase() === recipient.toLowerCase())
    .reduce((sum, log) => sum + log.args.value, 0n);
}

/**
 * What a transaction paid `recipient` of the native currency: its value, when it is sent to the recipient itself (as
 * Relay's solver fills native orders). Value passed on by a contract (an internal call) leaves no trace in the
 * transaction or its receipt, so such a fill is refused (DeliveryMismatch: an operator compares the balance).
 */
export function nativeDelivered(tx: Pick<Transaction, 'to' | 'value'>, recipient: Address): bigint {
  return tx.to?.toLowerCase() === recipient.toLowerCase() ? tx.value : 0n;
}

/**
 * How far a fill's block time may lag the order's record (chain clock against the database clock). A real fill
 * comes after the order was funded, so it is never close to this.
 */
const FILL_CLOCK_SKEW_SECONDS = 60;

/** The two bridge legs, moved by the configured bridge (or by a plain transfer when a leg stays on one chain). */
export function bridgeActivities(deps: ActivityDeps) {
  const movers = legMovers(deps);

  /**
   * Books a fill for the route unless another route already booked the same transaction: checked and written
   * under a lock on the transaction hash, so two routes can never both take it. A retry finds its own booking.
   * Returns null once the route's entry is this fill, else why it was refused (another route took it, or the
   * route's entry holds another fill: then nothing was written and this one is not the route's).
   */
  async function bookFill(entry: typeof ledgerEntries.$inferInsert & { txHash: Hex }): Promise<string | null> {
    const hash = entry.txHash.toLowerCase();
    return deps.db.transaction(async (tx) => {
      await tx.execute(sql`select pg_advisory_xact_lock(hashtext(${`fill:${hash}`}))`);
      const [other] = await tx
        .select({ routeId: ledgerEntries.routeId })
        .from(ledgerEntries)
        .where(and(sql`lower(${ledgerEntries.txHash}) = ${hash}`, ne(ledgerEntries.routeId, entry.routeId)))
        .limit(1);
      if (other) return `${entry.txHash} is already booked by another route`;
      await tx.insert(ledgerEntries).values(entry).onConflictDoNothing();
      const stored = await ledgerEntryOf(tx, entry.routeId, entry.entryKey);
      if (stored?.txHash?.toLowerCase() === hash) return null;
      return `${entry.txHash}: the route already booked another fill as ${entry.entryKey} (${stored?.txHash ?? 'without a transaction'})`;
    });
  }

  /**
   * Confirms on chain that a delivering transaction paid `recipient` at least `amount` of `token`, and books it.
   * A fill counts only once it is this route's alone (no other route booked it) and was mined after the leg's
   * first order was recorded: a provider that reports someone else's payment is never taken for ours.
   */
  async function confirmDelivery(check: DeliveryCheck): Promise<{ txHash: Hex; amount: string }> {
    const client = deps.chains.publicClient(check.chainId);
    const expected = BigInt(check.amount);
    // A plain transfer (the leg stays on one chain) has no order: null.
    const ordered = await legFirstOrderedAt(deps.db, check.routeId, check.leg);
    const refused: string[] = [];
    for (const hash of check.txHashes) {
      const receipt = await client.getTransactionReceipt({ hash });
      const delivered = isNativeToken(check.token)
        ? nativeDelivered(await client.getTransaction({ hash }), check.recipient)
        : tokenDelivered(receipt, check.token, check.recipient);
      if (receipt.status !== 'success' || delivered < expected) {
        refused.push(`${hash} paid ${delivered}`);
        continue;
      }
      if (ordered) {
        const block = await client.getBlock({ blockNumber: receipt.blockNumber });
        if (Number(block.timestamp) < Math.floor(ordered.getTime() / 1000) - FILL_CLOCK_SKEW_SECONDS) {
          refused.push(
            `${hash} was mined at ${new Date(Number(block.timestamp) * 1000).toISOString()}, before the order was recorded at ${ordered.toISOString()}`,
          );
          continue;
        }
      }
      const kind = check.leg === 'in' ? 'arrived_on_hub' : 'paid';
      const entry = { routeId: check.routeId, kind, entryKey: kind, chainId: check.chainId, token: check.token, amount: delivered.toString(), txHash: hash };
      const refusal = await bookFill(entry);
      if (refusal) {
        refused.push(refusal);
        continue;
      }
      return { txHash: hash, amount: delivered.toString() };
    }
    throw failure(
      'DeliveryMismatch',
      `bridge-${check.leg} fill did not pay ${check.amount} of ${check.token} to ${check.recipient} on chain ${check.chainId} (${refused.join('; ') || 'no fill transaction'})`,
    );
  }

  return {
    /**
     * Bridge in: the deposit, exactly the quoted amount, to the route's hub account as the hub asset. A later
     * order (after a refund) moves what the deposit account holds of it: what the refund brought back.
     */
    async bridgeIn({
      plan,
      generation,
      received,
      projection,
    }: {
      plan: RoutePlan;
      generation: number;
      received?: string;
      projection?: StatusProjection;
    }): Promise<BridgeOrderRef> {
      await assertPlanIsRecorded(deps, plan);
      await writeStatus(deps, projection);
      // What the deposit address held when the route took its deposit (transfers before the deposit watcher booked it while waiting).
      if (received !== undefined) {
        await recordLedger(deps.db, { routeId: plan.routeId, kind: 'received', chainId: plan.sourceChainId, token: plan.sourceToken, amount: received });
      }
      // For operators (routectl show, recover): the API could not write it, having no exit xpub.
      await updateTransfer(deps.db, plan.routeId, { exitAccount: exitAddressOf(deps, plan.accountIndex) }, isNull(transfers.exitAccount));
      const { deposit } = deps.keyring.routeAccounts(plan.accountIndex);
      let amount = BigInt(plan.amount);
      if (generation > 1) {
        // Of the native currency, the user's part: the rest of an earlier gas top-up is not the route's to send.
        const held = isNativeToken(plan.sourceToken)
          ? await nativeUserBalance(deps, { routeId: plan.routeId, sourceChainId: plan.sourceChainId, depositAddress: deposit.address })
          : await tokenBalance(deps.chains, plan.sourceChainId, plan.sourceToken, deposit.address);
        if (held < amount) amount = held;
      }
      const request: LegRequest = {
        routeId: plan.routeId,
        leg: 'in',
        generation,
        from: deposit,
        ...ends(plan, 'in'),
        originCurrency: plan.sourceToken,
        destinationCurrency: plan.hubToken,
        amount,
        tradeType: 'EXACT_INPUT',
        recipient: plan.hubAccount,
        available: amount,
        gasFunder: deps.gasAccount,
      };
      return movers.forLeg(request).start(request);
    },

    /**
     * Bridge out from the exit account: the burn of burn-and-mint mode (the pool withdrawal paid the exit
     * account), or a new order after the pool-funded one was refunded to it.
     */
    async bridgeOut({ plan, generation, projection }: { plan: RoutePlan; generation: number; projection?: StatusProjection }): Promise<BridgeOrderRef> {
      await assertPlanIsRecorded(deps, plan);
      await writeStatus(deps, projection);
      const available = await tokenBalance(deps.chains, plan.hubChainId, plan.hubToken, exitAddressOf(deps, plan.accountIndex));
      const request = outboundLeg(deps, plan, generation, available);
      return movers.forLeg(request).start(request);
    },

    /** Waits until a leg's funds arrived on its destination chain, confirms that on chain and books it (both steps below in one). */
    async awaitDelivery(input: DeliveryWait): Promise<{ txHash: Hex; amount: string }> {
      const { plan, leg, order } = input;
      await writeStatus(deps, input.projection);
      const txHashes = await movers.ofOrder(order).awaitArrival({ routeId: plan.routeId, leg, ...ends(plan, leg), order });
      const delivery = await confirmDelivery(
        leg === 'in'
          ? { routeId: plan.routeId, leg, chainId: plan.hubChainId, token: plan.hubToken, recipient: plan.hubAccount, amount: order.amountOut, txHashes }
          : {
              routeId: plan.routeId,
              leg,
              chainId: plan.destChainId,
              token: plan.destToken,
              recipient: plan.recipient,
              amount: plan.quotedOutputAmount,
              txHashes,
            },
      );
      if (input.completion) {
        await recordServiceFee(deps, {
          routeId: plan.routeId,
          chainId: plan.hubChainId,
          token: plan.hubToken,
          shielded: input.completion.shielded,
          bridgedOut: order.amountIn,
        });
        await writeStatus(deps, { routeId: plan.routeId, seq: input.completion.seq, status: 'COMPLETED', payoutTxHash: delivery.txHash });
      }
      return delivery;
    },

    /** Waits until a leg's funds arrived on its destination chain; returns the delivering transactions (transferWorkflow v1). */
    async awaitBridgeFill({ plan, leg, order }: { plan: RoutePlan; leg: BridgeLeg; order: BridgeOrderRef }): Promise<{ txHashes: Hex[] }> {
      return { txHashes: await movers.ofOrder(order).awaitArrival({ routeId: plan.routeId, leg, ...ends(plan, leg), order }) };
    },

    /** The on-chain check of a fill (transferWorkflow v1; later transfers run it inside awaitDelivery). */
    confirmDelivery,
  };
}
