import type { Address, Hex, LocalAccount } from 'viem';
import type { ActivityDeps } from './deps.ts';
import { recordLedger } from './projection.ts';
import type { BridgeLeg, BridgeOrderRef } from '../workflows/types.ts';

/** One bridge leg as the activities see it, whatever moves the funds. */
export interface LegRequest {
  routeId: string;
  leg: BridgeLeg;
  /** 1 for the first order of the leg; a refunded order is final and the next one gets the next generation. */
  generation: number;
  from: LocalAccount;
  originChainId: number;
  destinationChainId: number;
  originCurrency: Address;
  destinationCurrency: Address;
  /** bridge-in: the exact input; bridge-out: the exact output the recipient must get. */
  amount: bigint;
  tradeType: 'EXACT_INPUT' | 'EXACT_OUTPUT';
  recipient: Address;
  /** What `from` holds for this leg: an order that needs more is not placed. */
  available: bigint;
  /** Who tops up `from` with gas: the gas account before the pool, the pool's relayer after it. */
  gasFunder: LocalAccount;
}

/** A leg's order, recorded but not yet funded: `payTo` must receive exactly `order.amountIn` of the origin token. */
export interface PreparedLeg {
  order: BridgeOrderRef;
  payTo: Address;
}

export interface LegMover {
  /** Records the leg's order once (what to send where); a retry returns the recorded one. Moves no funds. */
  prepare(request: LegRequest): Promise<PreparedLeg>;
  /** Prepares the leg and funds it from `request.from` once; a retry returns the recorded order and transaction. */
  start(request: LegRequest): Promise<BridgeOrderRef>;
  /** Waits until the funds arrived on the destination chain; returns the delivering transactions. */
  awaitArrival(request: { routeId: string; leg: BridgeLeg; originChainId: number; destinationChainId: number; order: BridgeOrderRef }): Promise<Hex[]>;
}

/** The key of a leg's order and sends: `in`, `out`, then `in#2`… after a refunded order. */
export const orderKey = (leg: BridgeLeg, generation: number) => (generation === 1 ? leg : `${leg}#${generation}`);

/** Books the send that funded a leg (bridged_in / bridged_out, keyed by generation after a refund). */
export function bookLegSend(deps: ActivityDeps, request: LegRequest, amount: string, txHash: Hex): Promise<void> {
  return recordLedger(deps, {
    routeId: request.routeId,
    kind: request.leg === 'in' ? 'bridged_in' : 'bridged_out',
    key: request.generation === 1 ? undefined : String(request.generation),
    chainId: request.originChainId,
    token: request.originCurrency,
    amount,
    txHash,
  });
}
