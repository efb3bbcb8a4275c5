import { continueAsNew, proxyActivities, workflowInfo } from '@temporalio/workflow';
import type { TransferActivities } from '../activities/index.ts';
import { taskQueues } from './types.ts';

/** Runs of the watch activity before the workflow continues as new (each run is a handful of history events). */
const RUNS_PER_EXECUTION = 100;
const RUN_SECONDS = 600;

/**
 * The deposit watcher of one source chain (workflow id `deposit-watcher-<chainId>`, started by every worker
 * and API if missing): runs the watch activity (activities/depositWatcher.ts) back to back, forever. Its
 * cursor is in Postgres, so a new run, a retry on another worker or a restart continues where the last stopped.
 */
export async function depositWatcherWorkflow(input: { chainId: number }): Promise<void> {
  const { watchDeposits } = proxyActivities<TransferActivities>({
    taskQueue: taskQueues(workflowInfo().taskQueue).waits,
    startToCloseTimeout: `${RUN_SECONDS * 2} seconds`,
    heartbeatTimeout: '10 seconds',
    // An RPC outage is retried for as long as it lasts; the routes' deadlines check the chain themselves.
    retry: { initialInterval: '1 second', maximumInterval: '30 seconds' },
  });
  for (let run = 0; run < RUNS_PER_EXECUTION; run++) await watchDeposits({ chainId: input.chainId, runForSeconds: RUN_SECONDS });
  await continueAsNew<typeof depositWatcherWorkflow>(input);
}
