import { type Client, WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import type { Config } from '../config.ts';
import { STRAY_SCANNER_WORKFLOW_ID, STRAY_SCANNER_WORKFLOW_TYPE } from '../../workflows/types.ts';

/** Starts the single stray-deposit scanner if it is not running yet (idempotent; safe from every worker). */
export async function ensureStrayScanner(client: Client, config: Config): Promise<void> {
  try {
    await client.workflow.start(STRAY_SCANNER_WORKFLOW_TYPE, {
      workflowId: STRAY_SCANNER_WORKFLOW_ID,
      taskQueue: config.TEMPORAL_TASK_QUEUE,
      args: [{ intervalSeconds: config.STRAY_SCAN_INTERVAL_SECONDS, retentionDays: config.STRAY_SCAN_RETENTION_DAYS }],
    });
  } catch (error) {
    if (!(error instanceof WorkflowExecutionAlreadyStartedError)) throw error;
  }
}
