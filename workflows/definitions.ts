import { defineQuery, defineUpdate } from '@temporalio/workflow';
import type { TransferState } from './types.ts';

/**
 * Operator decisions for a parked transfer, as Temporal updates (usable from `routectl` and from the
 * plain `temporal` CLI: `temporal workflow update execute --workflow-id <routeId> --name retry`).
 */
export const retryUpdate = defineUpdate<string>('retry');
export const failUpdate = defineUpdate<string, [{ reason: string }]>('fail');

/** The workflow's own view: status, current step, parked step and its last error. */
export const stateQuery = defineQuery<TransferState>('state');
