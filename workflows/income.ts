import { log, proxyActivities, sleep } from '@temporalio/workflow';
import type { TransferActivities } from '../activities/index.ts';
import { finalTypes } from '../src/domain/failures.ts';

export const INCOME_SWEEP_WORKFLOW_TYPE = 'incomeSweepWorkflow';
/** One sweep at a time: a second start while one runs is refused. */
export const INCOME_SWEEP_WORKFLOW_ID = 'income-sweep';

const planning = proxyActivities<TransferActivities>({
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '1 second', maximumInterval: '30 seconds', maximumAttempts: 10, nonRetryableErrorTypes: ['IncomeNotConfigured'] },
});

/** A withdrawal proof and its relay; retried, each try settling the recorded one (the sender's write-ahead record). */
const sweeping = proxyActivities<TransferActivities>({
  startToCloseTimeout: '10 minutes',
  heartbeatTimeout: '30 seconds',
  retry: {
    initialInterval: '5 seconds',
    backoffCoefficient: 2,
    maximumInterval: '5 minutes',
    maximumAttempts: 8,
    nonRetryableErrorTypes: [...finalTypes('operator'), 'UnknownChangeNote', 'SweepAmountInvalid', 'IncomeNotConfigured'],
  },
});

export interface IncomeSweepInput {
  /** The sweeps are spread over this many seconds, in a random order, each at a random moment (0: one after another). */
  spreadSeconds?: number;
}

export interface IncomeSweepResult {
  reason: string;
  due: number;
  swept: Array<{ routeId: string; generation: number; amount: string; delivered: string; txHash: string }>;
}

/**
 * `routectl income sweep`: takes the change notes due (src/income/sweepPlan.ts: a batch of old notes, grid amounts) to
 * the treasury, in a shuffled order at random moments of the spread, so neither their order nor their pace follows
 * the routes'. A sweep that fails after its retries is left for the next run (its note stays unswept).
 */
export async function incomeSweepWorkflow(input: IncomeSweepInput = {}): Promise<IncomeSweepResult> {
  const plan = await planning.planIncomeSweep();
  const swept: IncomeSweepResult['swept'] = [];
  if (plan.sweeps.length === 0) return { reason: plan.reason, due: plan.due, swept };
  // Workflow randomness is replayed from history: the same order and moments on every replay.
  const order = [...plan.sweeps];
  for (let i = order.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [order[i], order[j]] = [order[j]!, order[i]!];
  }
  const spreadMs = Math.max(0, input.spreadSeconds ?? 0) * 1000;
  const moments = order.map(() => Math.floor(Math.random() * spreadMs)).sort((a, b) => a - b);
  let waited = 0;
  for (const [i, sweep] of order.entries()) {
    await sleep(moments[i]! - waited);
    waited = moments[i]!;
    try {
      const result = await sweeping.sweepChangeNote(sweep);
      swept.push({ ...sweep, ...result });
    } catch (error) {
      log.warn('an income sweep failed; its note waits for the next run', { error: error instanceof Error ? error.message : String(error) });
    }
  }
  return { reason: plan.reason, due: plan.due, swept };
}
