/**
 * The Temporal side of the failure catalogue (src/domain/failures.ts): catalogued failures as the SDK's
 * ApplicationFailure, and the type a workflow branches on.
 */
import { ActivityFailure, ApplicationFailure } from '@temporalio/common';
import { FAILURES, type FailureType } from './domain/failures.ts';
import { redactUrls } from './redact.ts';

/**
 * A catalogued failure to throw from an activity: the type's retry rule decides `nonRetryable` ('never' only).
 * The message loses URL paths (they may carry RPC keys); `details` travel with the failure (keep secrets out).
 */
export function failure(type: FailureType, message: string, ...details: unknown[]): ApplicationFailure {
  return ApplicationFailure.create({ type, message: redactUrls(message), nonRetryable: FAILURES[type].retry === 'never', details });
}

/** A workflow's end on a failure of a catalogued type (its own, or its cause's): final, whatever the type's retry rule. */
export function finalFailure(type: FailureType, message: string): ApplicationFailure {
  return ApplicationFailure.create({ type, message: redactUrls(message), nonRetryable: true });
}

/** The type of an activity's own ApplicationFailure, if that is what failed (what workflows branch on). */
export function failureTypeOf(error: unknown): string | null {
  return error instanceof ActivityFailure && error.cause instanceof ApplicationFailure ? (error.cause.type ?? null) : null;
}
