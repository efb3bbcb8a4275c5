import { type Client, WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import type { Config } from '../config.ts';
import {
  DEPOSIT_WATCHER_WORKFLOW_TYPE,
  PRIVACY_WATCHER_WORKFLOW_ID,
  PRIVACY_WATCHER_WORKFLOW_TYPE,
  STRAY_SCANNER_WORKFLOW_ID,
  STRAY_SCANNER_WORKFLOW_TYPE,
  depositWatcherWorkflowId,
} from '../../workflows/types.ts';

/**
 * Starts the service's single-instance workflows if they are not running yet (idempotent; safe from every
 * worker and API): the stray-deposit scanner, the privacy watcher, and one deposit watcher per chain of
 * CHAIN_RPC_URLS (any of them can be a transfer's source chain).
 */
export async function ensureBackgroundWorkflows(client: Client, config: Config): Promise<void> {
  await startOnce(client, STRAY_SCANNER_WORKFLOW_TYPE, STRAY_SCANNER_WORKFLOW_ID, config, { intervalSeconds: config.STRAY_SCAN_INTERVAL_SECONDS });
  await startOnce(client, PRIVACY_WATCHER_WORKFLOW_TYPE, PRIVACY_WATCHER_WORKFLOW_ID, config, undefined);
  for (const chainId of Object.keys(config.CHAIN_RPC_URLS).map(Number)) {
    await startOnce(client, DEPOSIT_WATCHER_WORKFLOW_TYPE, depositWatcherWorkflowId(chainId), config, { chainId });
  }
}

async function startOnce(client: Client, type: string, workflowId: string, config: Config, input: unknown): Promise<void> {
  try {
    await client.workflow.start(type, { workflowId, taskQueue: config.TEMPORAL_TASK_QUEUE, args: input === undefined ? [] : [input] });
  } catch (error) {
    if (!(error instanceof WorkflowExecutionAlreadyStartedError)) throw error;
  }
}
