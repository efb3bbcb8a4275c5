import { continueAsNew, proxyActivities, workflowInfo } from '@temporalio/workflow';
import type { TransferActivities } from '../activities/index.ts';
import { taskQueues } from './types.ts';

/** Runs of the watch activity before a watcher continues as new (each run is a handful of history events). */
const RUNS_PER_EXECUTION = 100;
const RUN_SECONDS = 600;

function watching() {
  return proxyActivities<TransferActivities>({
    taskQueue: taskQueues(workflowInfo().taskQueue).waits,
    startToCloseTimeout: `${RUN_SECONDS * 2} seconds`,
    heartbeatTimeout: '10 seconds',
    // An outage (RPC, ASP) is retried for as long as it lasts; the routes check for themselves at their deadlines.
    retry: { initialInterval: '1 second', maximumInterval: '30 seconds' },
  });
}

/**
 * The deposit watcher of one source chain (workflow id `deposit-watcher-<chainId>`, started by every worker
 * and API if missing): runs the watch activity (activities/depositWatcher.ts) back to back, forever. Its
 * cursor is in Postgres, so a new run, a retry on another worker or a restart continues where the last stopped.
 */
export async function depositWatcherWorkflow(input: { chainId: number }): Promise<void> {
  const { watchDeposits } = watching();
  for (let run = 0; run < RUNS_PER_EXECUTION; run++) await watchDeposits({ chainId: input.chainId, runForSeconds: RUN_SECONDS });
  await continueAsNew<typeof depositWatcherWorkflow>(input);
}

/**
 * The privacy watcher (workflow id `privacy-watcher`, one per deployment): tells every shielded transfer when
 * the ASP reviewed its note and when its anonymity set is reached (activities/privacyWatcher.ts).
 */
export async function privacyWatcherWorkflow(): Promise<void> {
  const { watchPrivacyGates } = watching();
  for (let run = 0; run < RUNS_PER_EXECUTION; run++) await watchPrivacyGates({ runForSeconds: RUN_SECONDS });
  await continueAsNew<typeof privacyWatcherWorkflow>();
}
