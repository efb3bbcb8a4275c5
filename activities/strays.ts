import { randomInt } from 'node:crypto';
import { heartbeat, log } from '@temporalio/activity';
import { and, eq, gt, inArray, isNull, or, sql } from 'drizzle-orm';
import { BaseError, ContractFunctionRevertedError, ContractFunctionZeroDataError, type Address } from 'viem';
import { isNativeToken, tokenBalance } from '../src/chain/erc20.ts';
import { depositTokens, transfers } from '../src/db/schema.ts';
import { redactUrls } from '../src/redact.ts';
import { isRefundFailedNote } from '../src/domain/refundNote.ts';
import type { ActivityDeps } from './deps.ts';
import { nativeUserBalance } from './nativeFunds.ts';
import { belowRefundMinimum, PAST_DEPOSIT } from './refundRules.ts';
import { isTerminalStatus, TERMINAL_STATUSES } from '../src/domain/status.ts';
import type { HeldFunds } from '../src/domain/heldFunds.ts';
import { recordHeldFunds, type Transfer, transferOf, updateTransfer } from '../src/transfers/transferStore.ts';

const SCAN_BATCH = 8;
/** Routes checked per scan; the next scan continues with the rest. */
const SCAN_LIMIT = 2_000;

export interface StrayDeposit {
  routeId: string;
  amount: string;
  refundAddress: Address | null;
  /** The token contract to refund: the route's source token, or another ERC-20 sent to its deposit address. */
  token?: Address;
  /** How long its refund waits before it is sent (drawn from REFUND_DELAY_MIN/MAX_SECONDS). */
  delaySeconds?: number;
}

const same = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();

/**
 * Surplus, second and late deposits: money that reaches a route's deposit address after the route took
 * (or stopped waiting for) its deposit. Routes are checked once their own deposit has left the address (from
 * RECEIVED_ON_HUB on), so a running transfer's own deposit is never mistaken for a stray one, and only when there is
 * something to check: once, and again whenever the deposit watcher (activities/depositWatcher.ts) sees a transfer
 * into its deposit address after that, and once more when it finishes. A route still in flight only has its strays
 * refunded (after their own delay, from when they were found, not from the route's end: a dust poke learns nothing of
 * its completion); what cannot be refunded automatically is listed for an operator once it has finished. Besides the route's source token, every other ERC-20 contract the watcher saw
 * sending to the address is checked: a deposit of another token with the same symbol is held or refunded,
 * never missed.
 */
export function strayActivities(deps: ActivityDeps) {
  /** A refund's own wait, drawn here (the activity's result is recorded, so the scanner workflow replays it). */
  const refundDelay = () => (deps.refundDelay ? { delaySeconds: randomInt(deps.refundDelay.minSeconds, deps.refundDelay.maxSeconds + 1) } : {});

  /** Tokens the bridge lists on a chain (verified ones): only those are refunded without an operator. */
  async function knownTokens(chainId: number): Promise<Set<string> | null> {
    try {
      if (deps.bridge.mode === 'cctp') {
        const chain = deps.bridge.cctp.chains().find((c) => c.chainId === chainId);
        return new Set(chain ? [chain.usdc.toLowerCase()] : []);
      }
      return new Set((await deps.bridge.relay.listTokens(chainId)).map((t) => t.address.toLowerCase()));
    } catch {
      return null; // the provider is down: decide about other tokens on a later scan
    }
  }

  /** The balance of a token that may not be an ERC-20 at all (anyone can emit a Transfer log): null then. */
  async function balanceOrNull(chainId: number, token: Address, owner: Address): Promise<bigint | null> {
    try {
      return await tokenBalance(deps.chains, chainId, token, owner);
    } catch (error) {
      if (error instanceof BaseError && error.walk((e) => e instanceof ContractFunctionRevertedError || e instanceof ContractFunctionZeroDataError))
        return null;
      throw error;
    }
  }

  return {
    /**
     * Checks the finished routes that have something to check (see above): whether their deposit address holds
     * funds, of their source token or of any other ERC-20. Routes with a refundAddress are returned for refunding
     * (another token only if the bridge lists it: an unknown contract could make the service pay gas for
     * nothing); the rest is marked as held funds that need an operator decision. Routes flagged after a failed
     * refund are left to the operator. The cost follows the deposits seen, not the number of routes.
     */
    async scanStrayDeposits(_input: { retentionDays?: number } = {}): Promise<StrayDeposit[]> {
      const finished = await deps.db
        .select()
        .from(transfers)
        .where(
          and(
            inArray(transfers.status, [...PAST_DEPOSIT, ...TERMINAL_STATUSES]),
            or(isNull(transfers.depositCheckedAt), gt(transfers.depositSeenAt, transfers.depositCheckedAt)),
          ),
        )
        .limit(SCAN_LIMIT);
      const known = new Map<number, Promise<Set<string> | null>>();
      const knownOn = (chainId: number) => {
        let set = known.get(chainId);
        if (!set) known.set(chainId, (set = knownTokens(chainId)));
        return set;
      };
      const found: StrayDeposit[] = [];
      // A few routes at a time, heartbeating between batches, so thousands of routes stay within the budget.
      for (let i = 0; i < finished.length; i += SCAN_BATCH) {
        const batch = finished.slice(i, i + SCAN_BATCH);
        const others = await deps.db
          .select()
          .from(depositTokens)
          .where(
            inArray(
              depositTokens.routeId,
              batch.map((r) => r.routeId),
            ),
          );
        await Promise.all(
          batch.map(async (route) => {
            try {
              // Taken before the balances are read: a transfer the watcher sees while they are read is checked again.
              const checkedAt = new Date();
              await inspectRoute(
                route,
                others.filter((o) => o.routeId === route.routeId).map((o) => o.token as Address),
              );
              // A route in flight is checked again when it finishes (writeStatus clears the mark): what it could not
              // refund is listed for an operator then.
              await updateTransfer(deps.db, route.routeId, { depositCheckedAt: checkedAt });
            } catch (error) {
              log.warn('stray scan: a deposit address could not be checked', {
                routeId: route.routeId,
                error: redactUrls(error instanceof Error ? error.message : String(error)),
              });
            }
          }),
        );
        heartbeat({ scanned: i + batch.length, of: finished.length });
      }
      await flagDueBatch();
      return found;

      /** Strays listed for a batch that has come: their routes are flagged for an operator now (all of that batch at once). */
      async function flagDueBatch(): Promise<void> {
        const now = new Date();
        const due = await deps.db
          .select({ routeId: transfers.routeId })
          .from(transfers)
          .where(
            and(
              eq(transfers.needsAttention, false),
              sql`exists (select 1 from jsonb_array_elements(case when jsonb_typeof(${transfers.heldFunds}) = 'array' then ${transfers.heldFunds} else '[]'::jsonb end) h where h->>'listedFrom' <= ${now.toISOString()})`,
            ),
          )
          .limit(SCAN_LIMIT);
        for (const { routeId } of due) await updateTransfer(deps.db, routeId, { needsAttention: true });
      }

      async function inspectRoute(route: Transfer, otherTokens: Address[]): Promise<void> {
        // A refund of this route gave up (flagged for an operator): nothing is refunded automatically, and the flag
        // stays, until an operator's `routectl refund` succeeds (an earlier refund may still be pending or mine).
        if (route.needsAttention && isRefundFailedNote(route.lastError)) return;
        const owner = route.depositAddress as Address;
        // A native-currency route's address also keeps the rest of the gas the service topped up: not a stray.
        const sourceBalance = isNativeToken(route.sourceToken)
          ? nativeUserBalance(deps, route)
          : tokenBalance(deps.chains, route.sourceChainId, route.sourceToken as Address, owner);
        const balances = await Promise.all([
          sourceBalance.then((balance) => ({ token: route.sourceToken as Address, balance: balance as bigint | null })),
          ...otherTokens.map(async (token) => ({ token, balance: await balanceOrNull(route.sourceChainId, token, owner) })),
        ]);
        const known = otherTokens.length > 0 ? await knownOn(route.sourceChainId) : null;
        if (isTerminalStatus(route.status)) await inspect(route, balances, known);
        else refundInFlight(route, balances, known);
      }

      /**
       * The refund of one balance when the service makes it without an operator: to the refundAddress, of the source
       * token or one the bridge lists, not below REFUND_MIN_AMOUNT (its gas would cost more); null otherwise.
       */
      function automaticRefund(route: Transfer, token: Address, balance: bigint, known: Set<string> | null): StrayDeposit | null {
        const refundable = same(token, route.sourceToken) || (known?.has(token.toLowerCase()) ?? false);
        if (!route.refundAddress || !refundable || belowRefundMinimum(deps, route, token, balance)) return null;
        return { routeId: route.routeId, amount: balance.toString(), refundAddress: route.refundAddress as Address, token, ...refundDelay() };
      }

      /** A route in flight: its refundable strays are refunded; its holdings (the workflow's to write) are not touched. */
      function refundInFlight(route: Transfer, balances: Array<{ token: Address; balance: bigint | null }>, known: Set<string> | null): void {
        for (const { token, balance } of balances) {
          const refund = balance ? automaticRefund(route, token, balance, known) : null;
          if (refund) found.push(refund);
        }
      }

      async function inspect(route: Transfer, balances: Array<{ token: Address; balance: bigint | null }>, known: Set<string> | null) {
        const listed = (route.heldFunds ?? []).filter((h) => h.place === 'deposit');
        const next: HeldFunds[] = [];
        const notes: string[] = [];
        for (const { token, balance } of balances) {
          if (balance === null || balance === 0n) continue;
          const own = same(token, route.sourceToken);
          // Dust below REFUND_MIN_AMOUNT is listed, never refunded automatically: its gas would cost more.
          const dust = belowRefundMinimum(deps, route, token, balance);
          const refund = automaticRefund(route, token, balance, known);
          if (refund) {
            found.push(refund);
            // Being refunded: an existing listing stays until the refund clears it.
            next.push(...listed.filter((h) => same(h.token, token)));
            continue;
          }
          if (route.refundAddress && !own && known === null) {
            next.push(...listed.filter((h) => same(h.token, token)));
            continue; // whether the bridge lists it is unknown right now: decide on a later scan
          }
          // Flagged for an operator with the next batch, not now: the moment a route's stray is flagged (and an
          // operator acts on it) must not follow the route's end. A listing of this token keeps its batch.
          const listedFrom = listed.find((h) => same(h.token, token))?.listedFrom ?? nextBatch(deps.strayListBatchSeconds);
          next.push({
            place: 'deposit',
            chainId: route.sourceChainId,
            token,
            address: route.depositAddress as Address,
            amount: balance.toString(),
            ...(listedFrom && { listedFrom }),
          });
          notes.push(
            own
              ? `${balance} ${route.symbol} (smallest units) is held at the deposit address: it arrived after the route took or stopped waiting for its deposit (overpayment, second or late deposit) and ${dust ? 'is below REFUND_MIN_AMOUNT, so it is not refunded' : 'there is no refundAddress'}`
              : `${balance} (smallest units) of token ${token} is held at the deposit address: it is not this route's ${route.symbol} (${route.sourceToken}), so it never funded the transfer${route.refundAddress ? ', and it is not a token the bridge lists, so it is not refunded automatically' : ''}`,
          );
        }
        if (sameHoldings(listed, next)) return;
        const how = `Refund it with: routectl refund ${route.routeId} --to <address>${notes.length > 1 ? ' (once per token)' : ''}`;
        await setDepositHolding(deps, route.routeId, route.heldFunds ?? [], next, notes.length > 0 ? `${notes.join('; ')}. ${how}` : null);
      }
    },

    /** After a refund: the deposit address no longer holds that token (without one: anything) for an operator to decide on. */
    async clearDepositHolding(input: { routeId: string; token?: Address }): Promise<void> {
      const route = await transferOf(deps.db, input.routeId);
      if (!route) return;
      const listed = (route.heldFunds ?? []).filter((h) => h.place === 'deposit');
      const { token } = input;
      await setDepositHolding(deps, route.routeId, route.heldFunds ?? [], token ? listed.filter((h) => !same(h.token, token)) : [], null);
    },
  };
}

/**
 * The token a refund without an explicit one moves: the route's source token while the deposit address holds
 * some, otherwise another token the scanner listed as held there (an operator's `routectl refund` of a
 * wrong-token deposit). One token per refund; refund again for the next.
 */
export async function depositTokenToRefund(deps: ActivityDeps, route: Transfer): Promise<Address> {
  const source = route.sourceToken as Address;
  const held = isNativeToken(source)
    ? await nativeUserBalance(deps, route)
    : await tokenBalance(deps.chains, route.sourceChainId, source, route.depositAddress as Address);
  if (held > 0n) return source;
  for (const held of route.heldFunds ?? []) {
    if (held.place !== 'deposit' || same(held.token, source)) continue;
    if ((await tokenBalance(deps.chains, route.sourceChainId, held.token as Address, route.depositAddress as Address)) > 0n) return held.token as Address;
  }
  return source;
}

function sameHoldings(a: HeldFunds[], b: HeldFunds[]): boolean {
  const key = (h: HeldFunds) => `${h.token.toLowerCase()}:${h.amount}`;
  const left = a.map(key).sort();
  const right = b.map(key).sort();
  return left.length === right.length && left.every((k, i) => k === right[i]);
}

/** Replaces the route's deposit-address holdings; needsAttention follows whether it still holds anything. */
/** The start of the next stray batch (ISO): the first multiple of `batchSeconds` after now; none without batches. */
function nextBatch(batchSeconds: number | undefined): string | undefined {
  if (!batchSeconds) return undefined;
  const length = batchSeconds * 1000;
  return new Date(Math.floor(Date.now() / length) * length + length).toISOString();
}

async function setDepositHolding(deps: ActivityDeps, routeId: string, held: HeldFunds[], deposit: HeldFunds[], note: string | null): Promise<void> {
  const next = [...held.filter((h) => h.place !== 'deposit'), ...deposit];
  await recordHeldFunds(deps.db, routeId, next, note);
}
