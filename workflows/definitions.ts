import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import type { DepositObservation, PrivacyObservation } from '../src/domain/observations.ts';
import type { TransferState } from '../src/domain/status.ts';

/**
 * Operator decisions for a parked transfer, as Temporal updates (usable from `routectl` and from the
 * plain `temporal` CLI: `temporal workflow update execute --workflow-id <routeId> --name retry`).
 */
export const retryUpdate = defineUpdate<string>('retry');
export const failUpdate = defineUpdate<string, [{ reason: string }]>('fail');

/**
 * The same two updates as routectl sends them: with who asks, why, and their audit row (operator_actions), so that
 * the route's history names them. The handlers act on the decision alone (fail reads `reason`).
 */
export const operatorRetryUpdate = defineUpdate<string, [OperatorUpdateInput]>('retry');
export const operatorFailUpdate = defineUpdate<string, [OperatorUpdateInput]>('fail');

export interface OperatorUpdateInput {
  operator: string;
  reason: string;
  actionId: number;
}

/** The workflow's own view: status, current step, parked step and its last error. */
export const stateQuery = defineQuery<TransferState>('state');

/**
 * The deposit watcher's report (activities/depositWatcher.ts): the balance of the route's token at its deposit
 * address at a block. Sent again after every new transfer into the address; an older block never overrides a newer one.
 */
export const depositObservedSignal = defineSignal<[DepositObservation]>('depositObserved');

/**
 * The privacy watcher's report (activities/privacyWatcher.ts): the ASP's review of the route's note and its
 * anonymity set, sent when either of what the route waits for changes.
 */
export const privacyObservedSignal = defineSignal<[PrivacyObservation]>('privacyObserved');
