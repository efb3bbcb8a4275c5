import { heartbeat, sleep } from '@temporalio/activity';
import type { Address, Hex, LocalAccount } from 'viem';
import { BridgeUnavailableError } from '../src/providers/bridge.ts';
import type { ActivityDeps } from './deps.ts';
import { recordLedger } from '../src/transfers/ledgerStore.ts';
import type { BridgeLeg, BridgeOrderRef } from '../src/domain/plan.ts';
import { updateTransfer } from '../src/transfers/transferStore.ts';

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
  /**
   * The recorded send (its txSender step) that funds the order when it is not the leg's own send from `from`:
   * the pool withdrawal ('unshield') that pays the first bridge-out order directly.
   */
  fundedBy?: string;
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

/**
 * Books the send that funded a leg (bridged_in / bridged_out, keyed by generation after a refund). A bridge-in
 * send (from the deposit account) is also the transfer's bridge_in_tx_hash; the latest order's after a refund.
 */
export async function bookLegSend(deps: ActivityDeps, request: LegRequest, amount: string, txHash: Hex): Promise<void> {
  if (request.leg === 'in') await updateTransfer(deps.db, request.routeId, { bridgeInTxHash: txHash });
  await recordLedger(deps.db, {
    routeId: request.routeId,
    kind: request.leg === 'in' ? 'bridged_in' : 'bridged_out',
    key: request.generation === 1 ? undefined : String(request.generation),
    chainId: request.originChainId,
    token: request.originCurrency,
    amount,
    txHash,
  });
}

/** Longest wait between two tries of a provider that keeps failing transiently. */
const TRANSIENT_BACKOFF_CAP_MS = 30_000;
/** Heartbeat at least this often during a wait, well inside the waiting activities' heartbeat timeout. */
const HEARTBEAT_EVERY_MS = 10_000;

/** Sleeps `ms` (cancellably), heartbeating `details` every few seconds so a long wait never misses a heartbeat. */
export async function sleepHeartbeating(ms: number, details?: unknown): Promise<void> {
  for (let left = ms; left > 0; left -= HEARTBEAT_EVERY_MS) {
    heartbeat(details);
    await sleep(Math.min(left, HEARTBEAT_EVERY_MS));
  }
}

/**
 * One poll of a provider inside a waiting loop (Relay's order status, Iris' attestation). Transient failures
 * (network errors, 5xx, 429: a transient BridgeUnavailableError) are retried here with capped exponential
 * backoff from `initialMs`, heartbeating meanwhile, so a provider outage spends no step attempt; a rate limit
 * waits at least as long as the provider asks. Anything else escapes to the activity's retry policy.
 */
export async function pollProvider<T>(what: string, poll: () => Promise<T>, initialMs: number): Promise<T> {
  for (let failures = 0; ; failures++) {
    try {
      return await poll();
    } catch (error) {
      if (!(error instanceof BridgeUnavailableError) || !error.transient) throw error;
      const backoff = Math.min(Math.max(initialMs, 100) * 2 ** failures, TRANSIENT_BACKOFF_CAP_MS);
      const retryAfterMs = 'retryAfterMs' in error && typeof error.retryAfterMs === 'number' ? error.retryAfterMs : 0;
      const waitMs = Math.max(backoff, retryAfterMs);
      await sleepHeartbeating(waitMs, { waitingFor: what, transientFailures: failures + 1, retryInMs: waitMs, error: error.message });
    }
  }
}
