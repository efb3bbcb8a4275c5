/**
 * The statuses a transfer moves through, in the order it reaches them (FAILED can follow any of them).
 * Pure vocabulary (src/domain imports nothing outside src/domain): the workflows, the API, the client and metrics share it.
 */
import type { ParkedStep } from './heldFunds.ts';

export const TRANSFER_STATUSES = [
  'AWAITING_DEPOSIT',
  'BRIDGING_IN',
  'RECEIVED_ON_HUB',
  'SHIELDED',
  'UNSHIELD_SENT',
  'BRIDGING_OUT',
  'COMPLETED',
  'FAILED',
] as const;

export type TransferStatus = (typeof TRANSFER_STATUSES)[number];

/** The statuses a transfer ends in: none follows them. */
export const TERMINAL_STATUSES: readonly TransferStatus[] = ['COMPLETED', 'FAILED'];

/** Whether `status` (as a string from the database or the API) is one a transfer ends in. */
export const isTerminalStatus = (status: string): boolean => status === 'COMPLETED' || status === 'FAILED';

/** What the transfer workflow's `state` query answers: its status, current step, and where it is parked (if it is). */
export interface TransferState {
  status: TransferStatus;
  step: string | null;
  parked: ParkedStep | null;
}
