import { ApplicationFailure } from '@temporalio/activity';
import { erc20Abi, parseEventLogs, type Address, type Hex } from 'viem';
import { tokenBalance } from '../src/chain/erc20.ts';
import type { BridgeLeg, BridgeOrderRef, RoutePlan } from '../workflows/types.ts';
import { cctpLegs } from './cctpLeg.ts';
import type { ActivityDeps } from './deps.ts';
import { directLegs } from './directLeg.ts';
import type { LegMover, LegRequest } from './legs.ts';
import { recordLedger } from './projection.ts';
import { relayLegs } from './relayLeg.ts';

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
  leg === 'in' ? { originChainId: plan.sourceChainId, destinationChainId: plan.hubChainId } : { originChainId: plan.hubChainId, destinationChainId: plan.destChainId };

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

/** The two bridge legs, moved by the configured bridge (or by a plain transfer when a leg stays on one chain). */
export function bridgeActivities(deps: ActivityDeps) {
  const movers = legMovers(deps);

  return {
    /** Bridge in: the deposit, exactly the quoted amount, to the route's hub account as the hub asset. */
    async bridgeIn({ plan, generation }: { plan: RoutePlan; generation: number }): Promise<BridgeOrderRef> {
      const { deposit } = deps.keyring.routeAccounts(plan.accountIndex);
      const request: LegRequest = {
        routeId: plan.routeId,
        leg: 'in',
        generation,
        from: deposit,
        ...ends(plan, 'in'),
        originCurrency: plan.sourceToken,
        destinationCurrency: plan.hubToken,
        amount: BigInt(plan.amount),
        tradeType: 'EXACT_INPUT',
        recipient: plan.hubAccount,
        available: BigInt(plan.amount),
        gasFunder: deps.gasAccount,
      };
      return movers.forLeg(request).start(request);
    },

    /**
     * Bridge out from the exit account: the burn of burn-and-mint mode (the pool withdrawal paid the exit
     * account), or a new order after the pool-funded one was refunded to it.
     */
    async bridgeOut({ plan, generation }: { plan: RoutePlan; generation: number }): Promise<BridgeOrderRef> {
      const available = await tokenBalance(deps.chains, plan.hubChainId, plan.hubToken, plan.exitAccount);
      const request = outboundLeg(deps, plan, generation, available);
      return movers.forLeg(request).start(request);
    },

    /** Waits until a leg's funds arrived on its destination chain; returns the delivering transactions. */
    async awaitBridgeFill({ plan, leg, order }: { plan: RoutePlan; leg: BridgeLeg; order: BridgeOrderRef }): Promise<{ txHashes: Hex[] }> {
      return { txHashes: await movers.ofOrder(order).awaitArrival({ routeId: plan.routeId, leg, ...ends(plan, leg), order }) };
    },

    /** Confirms on chain that a delivering transaction paid `recipient` at least `amount` of `token`, and books it. */
    async confirmDelivery(check: DeliveryCheck): Promise<{ txHash: Hex; amount: string }> {
      const client = deps.chains.publicClient(check.chainId);
      const expected = BigInt(check.amount);
      for (const hash of check.txHashes) {
        const receipt = await client.getTransactionReceipt({ hash });
        const transfers = parseEventLogs({ abi: erc20Abi, eventName: 'Transfer', logs: receipt.logs }).filter(
          (log) => log.address.toLowerCase() === check.token.toLowerCase() && log.args.to.toLowerCase() === check.recipient.toLowerCase(),
        );
        const delivered = transfers.reduce((sum, log) => sum + log.args.value, 0n);
        if (receipt.status === 'success' && delivered >= expected) {
          await recordLedger(deps, {
            routeId: check.routeId,
            kind: check.leg === 'in' ? 'arrived_on_hub' : 'paid',
            chainId: check.chainId,
            token: check.token,
            amount: delivered.toString(),
            txHash: hash,
          });
          return { txHash: hash, amount: delivered.toString() };
        }
      }
      throw ApplicationFailure.nonRetryable(
        `bridge-${check.leg} fill ${check.txHashes.join(', ')} did not pay ${check.amount} of ${check.token} to ${check.recipient} on chain ${check.chainId}`,
        'DeliveryMismatch',
      );
    },
  };
}
