/** The status projection: what the workflow records of a route's status (activities/projection.ts writes it). */
import type { FailedAt } from './failureCodes.ts';
import type { HeldFunds } from './heldFunds.ts';
import type { TransferStatus } from './status.ts';

/** One status of a route as the projection records it (activities/projection.ts writeStatus). */
export interface StatusProjection {
  routeId: string;
  /** Strictly increasing per route; a write with an older sequence number is ignored. */
  seq: number;
  status: TransferStatus;
  error?: string;
  payoutTxHash?: string;
  heldFunds?: HeldFunds[];
  /** FAILED by an operator after a step parked: that step and its failure type (they name the failureCode). */
  failedAt?: FailedAt;
}
