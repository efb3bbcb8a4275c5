/**
 * Why a FAILED transfer failed, as a stable code a program can branch on (GET's `failureCode`, beside the free `error`
 * text). Pure (src/domain imports nothing outside src/domain): the projection (src/transfers/transferStore.ts) derives
 * it where it writes FAILED, from what that write already carries: the workflow's error text and, for a route an
 * operator failed after a step of it parked, the step and the failure type it parked on (`failedAt`).
 *
 * A code is a contract: never rename one; add new ones at the end of the list.
 */
import { ADDRESS_REUSE_REFUSED } from './funding.ts';
import type { FailureType } from './failures.ts';

export const FAILURE_CODES = [
  /** The workflow could not be started: nothing watches the deposit address (do not deposit). */
  'NOT_STARTED',
  /** Nothing arrived at the deposit address by its deadline. */
  'DEPOSIT_EXPIRED',
  /** Less than the amount arrived by the deadline: refunded to the refundAddress, or held until an operator ended it. */
  'DEPOSIT_TOO_SMALL',
  /** The deposit came from the recipient itself (ADDRESS_REUSE_REFUSED): refunded before the pool. */
  'DEPOSIT_FROM_RECIPIENT',
  /** The bridge into the hub chain refused, failed or refunded the order, or its delivery did not match. */
  'BRIDGE_FAILED',
  /** The ASP rejected the deposit into the privacy pool, or never approved it. */
  'PRIVACY_POOL_REJECTED',
  /** The deposit into or the withdrawal from the privacy pool did not go through. */
  'PRIVACY_POOL_FAILED',
  /** The bridge out to the recipient (the payout) did not go through. */
  'PAYOUT_FAILED',
  /** Refunding the deposit did not go through. */
  'REFUND_FAILED',
  /** An operator ended the transfer (or cancelled its workflow) with no step failure to name. */
  'OPERATOR_FAILED',
  /** Any other cause: the `error` text (statusToken holder) or support says more. */
  'INTERNAL',
] as const;

export type FailureCode = (typeof FAILURE_CODES)[number];

/** The step a route parked on, and the catalogued failure type it parked with (null: none, e.g. an underpayment held). */
export interface FailedAt {
  step: string;
  failureType: string | null;
}

/** A parked step's code, by the step the transfer workflow names it (workflows/transfer.ts runStep and park). */
const CODE_OF_STEP: Readonly<Record<string, FailureCode>> = {
  'await-deposit': 'DEPOSIT_TOO_SMALL',
  'check-funding': 'INTERNAL',
  'refund-deposit': 'REFUND_FAILED',
  'bridge-in': 'BRIDGE_FAILED',
  shield: 'PRIVACY_POOL_FAILED',
  'privacy-wait': 'PRIVACY_POOL_REJECTED',
  unshield: 'PRIVACY_POOL_FAILED',
  'bridge-out': 'PAYOUT_FAILED',
};

/** Failure types whose code does not depend on the step they parked. */
const CODE_OF_TYPE: Partial<Record<FailureType, FailureCode>> = {
  AspRejected: 'PRIVACY_POOL_REJECTED',
  AspReviewTimeout: 'PRIVACY_POOL_REJECTED',
};

/** The code of a FAILED write: its error text as the workflow words it, and where it parked when an operator ended it. */
export function failureCodeOf(error: string | null | undefined, failedAt?: FailedAt | null): FailureCode {
  if (failedAt) return codeOfParkedStep(failedAt);
  const text = error ?? '';
  if (text.startsWith('the transfer could not be started')) return 'NOT_STARTED';
  if (text.startsWith('no deposit received')) return 'DEPOSIT_EXPIRED';
  if (text.startsWith('underpaid')) return 'DEPOSIT_TOO_SMALL';
  if (text.startsWith(ADDRESS_REUSE_REFUSED)) return 'DEPOSIT_FROM_RECIPIENT';
  if (text.startsWith('failed by operator') || text.startsWith('cancelled in Temporal')) return 'OPERATOR_FAILED';
  return 'INTERNAL';
}

function codeOfParkedStep({ step, failureType }: FailedAt): FailureCode {
  const byType = failureType === null ? undefined : CODE_OF_TYPE[failureType as FailureType];
  return byType ?? CODE_OF_STEP[step] ?? 'OPERATOR_FAILED';
}
