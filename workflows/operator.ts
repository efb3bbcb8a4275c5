import { ActivityFailure, ApplicationFailure, log, proxyActivities } from '@temporalio/workflow';
import type { TransferActivities } from '../activities/index.ts';
import { finalFailure } from '../src/failures.ts';
import { finalTypes } from '../src/domain/failures.ts';
import type { IntentSummary, Recovered } from '../src/domain/operatorResults.ts';
import type { Address } from '../src/domain/address.ts';
import type { HeldFunds } from '../src/domain/heldFunds.ts';

export const RECOVER_WORKFLOW_TYPE = 'recoverWorkflow';
export const VOID_INTENT_WORKFLOW_TYPE = 'voidIntentWorkflow';
export const recoverWorkflowId = (routeId: string) => `${routeId}:recover`;
export const voidIntentWorkflowId = (intentId: number) => `void-intent:${intentId}`;

/** Errors a retry cannot change: the operator reads them and decides. */
const FINAL = finalTypes('operator');

/** Moves money: a few tries within a time budget, then the route is flagged for an operator. */
const moves = proxyActivities<TransferActivities>({
  startToCloseTimeout: '10 minutes',
  // Every activity heartbeats while it runs (src/temporal/activityKeepalive.ts).
  heartbeatTimeout: '10 seconds',
  scheduleToCloseTimeout: '30 minutes',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds', maximumAttempts: 5, nonRetryableErrorTypes: FINAL },
});

/** Bookkeeping: retried until it works. */
const bookkeeping = proxyActivities<TransferActivities>({
  startToCloseTimeout: '30 seconds',
  heartbeatTimeout: '10 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '30 seconds' },
});

export interface RecoverInput {
  routeId: string;
  to: Address;
  /** The operator's audit row (operator_actions) that asked for this recovery; the activities require it. */
  actionId?: number;
  operator?: string;
  reason?: string;
  /**
   * `deposit`: the pool note (ragequit) and the hub account; `exit`: the exit account. Absent (recoveries requested
   * before sides): both.
   */
  side?: 'deposit' | 'exit';
  /** The operator's recorded reason for a destination the side's rule refuses. */
  override?: string;
}

export interface RecoverResult {
  recovered: Recovered[];
  /** What the route still holds afterwards (e.g. at its deposit address: `routectl refund`). */
  held: HeldFunds[];
}

/**
 * `routectl recover`: one side of a FAILED route's funds on the hub chain goes to `to`: the deposit side (pool note
 * via ragequit, hub account) or the exit side (exit account). Workflow id `<routeId>:recover`, one at a time per route; survives crashes like any workflow, and
 * every send is written ahead (activities/recover.ts), so a rerun completes or finds nothing left.
 */
export async function recoverWorkflow(input: RecoverInput): Promise<RecoverResult> {
  try {
    const recovered: Recovered[] = [];
    const { side } = input;
    const step = { routeId: input.routeId, to: input.to, actionId: input.actionId, ...(side && { side }), ...(input.override && { override: input.override }) };
    if (side !== 'exit') {
      const pool = await moves.recoverPoolNote(step);
      if (pool) recovered.push(pool);
      recovered.push(...(await moves.recoverAccount({ ...step, place: 'hub' })));
    }
    if (side !== 'deposit') recovered.push(...(await moves.recoverAccount({ ...step, place: 'exit' })));
    const held = await bookkeeping.refreshHeldFunds({ routeId: input.routeId, actionId: input.actionId });
    log.info('route funds recovered', { routeId: input.routeId, moves: recovered.length, actionId: input.actionId });
    return { recovered, held };
  } catch (error) {
    const cause = causeOf(error);
    // A refused operator check (no audit row, a route not FAILED, a destination not allowed) says nothing about the
    // route's funds: no flag. Only activities of this version fail with this type, so recorded histories replay as before.
    if (typeOf(error) === 'OperatorActionRefused') throw finalFailure('OperatorActionRefused', cause);
    await bookkeeping.flagRoute({
      routeId: input.routeId,
      error: `recovery to ${input.to} stopped: ${cause}. Fix the cause, then run routectl recover again`,
      actionId: input.actionId,
    });
    throw finalFailure('RecoveryFailed', `recovery stopped: ${cause}`);
  }
}

export interface VoidIntentInput {
  intentId: number;
  /** First replace it with a 0-value self-send at its nonce (it may still mine otherwise). */
  cancel: boolean;
  reason: string;
  /** The operator's audit row (operator_actions) that asked for this void; the activities require it. */
  actionId?: number;
  operator?: string;
}

/** `routectl void`: workflow id `void-intent:<id>`; runs in the worker, which holds the keys a cancel needs. */
export async function voidIntentWorkflow(
  input: VoidIntentInput,
): Promise<{ intent: IntentSummary | null; cancelTxHash: string | null; originalMined: boolean }> {
  try {
    let cancelTxHash: string | null = null;
    if (input.cancel) {
      const cancel = await moves.cancelIntent({ intentId: input.intentId, actionId: input.actionId });
      if (!cancel.replaced) return { intent: null, cancelTxHash: null, originalMined: true };
      cancelTxHash = cancel.txHash;
    }
    return { intent: await moves.voidIntent({ intentId: input.intentId, reason: input.reason, actionId: input.actionId }), cancelTxHash, originalMined: false };
  } catch (error) {
    const refused = typeOf(error) === 'VoidRefused' || typeOf(error) === 'OperatorActionRefused';
    throw finalFailure(refused ? 'VoidRefused' : 'VoidFailed', causeOf(error));
  }
}

/** The type of an activity's own ApplicationFailure, if that is what failed. */
function typeOf(error: unknown): string | null {
  return error instanceof ActivityFailure && error.cause instanceof ApplicationFailure ? (error.cause.type ?? null) : null;
}

/** The innermost message: an activity's own failure rather than "Activity task failed". */
function causeOf(error: unknown): string {
  if (error instanceof ActivityFailure && error.cause) return error.cause.message;
  return error instanceof Error ? error.message : String(error);
}
