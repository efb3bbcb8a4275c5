/**
 * Provider and library errors become catalogued failures (src/domain/failures.ts) in one place, so activities throw what
 * they meet and never translate it themselves. Every failure that leaves an activity has a message without URL
 * paths (they may carry RPC or API keys) and, for viem, its short message only (the long one quotes the request).
 * The retry rules stay what they were: only types catalogued 'never' become non-retryable.
 */
import { ApplicationFailure, TemporalFailure } from '@temporalio/common';
import type { ActivityInterceptorsFactory } from '@temporalio/worker';
import { BaseError as ViemError } from 'viem';
import { NonceConsumedError, TransactionRevertedError, VoidRefusedError } from '../chain/txSender.ts';
import { failure } from '../failures.ts';
import type { FailureType } from '../domain/failures.ts';
import { BridgeRouteError, BridgeUnavailableError } from '../providers/bridge.ts';
import { CctpBurnMismatchError } from '../providers/cctp/adapter.ts';
import { AspError } from '../providers/privacy-pools/asp.ts';
import { CircuitArtifactError, ProofInvalidError, ProverError } from '../providers/privacy-pools/prover.ts';
import { redactUrls } from '../redact.ts';
import { SignerRefusedError } from '../signer/remote.ts';

/** Known error classes and the catalogued failure each becomes (first match wins: subclasses before their base). */
const TRANSLATIONS: [new (...args: never[]) => Error, FailureType][] = [
  [BridgeRouteError, 'BridgeRouteRejected'],
  [BridgeUnavailableError, 'BridgeUnavailable'],
  [CctpBurnMismatchError, 'CctpBurnMismatch'],
  [AspError, 'AspUnavailable'],
  [ProofInvalidError, 'ProofInvalid'],
  [ProverError, 'ProverFailed'],
  [CircuitArtifactError, 'ProverFailed'],
  [TransactionRevertedError, 'TransactionRevertedError'],
  [NonceConsumedError, 'NonceConsumedError'],
  [VoidRefusedError, 'VoidRefused'],
  [SignerRefusedError, 'SignerRefused'],
];

/** What an activity's error leaves the worker as. */
export function translateActivityError(error: unknown): unknown {
  if (error instanceof ApplicationFailure) return redacted(error);
  // Cancellation, timeouts and the like are Temporal's own, and an AbortError is how the SDK recognises an
  // activity that stopped because it was cancelled: untouched.
  if (error instanceof TemporalFailure || (error instanceof Error && error.name === 'AbortError')) return error;
  if (!(error instanceof Error)) return ApplicationFailure.create({ message: redactUrls(String(error)), type: 'Error' });
  const known = TRANSLATIONS.find(([type]) => error instanceof type);
  if (known) return withFrames(failure(known[1], error.message, { error: error.name }), error);
  if (error instanceof ViemError) return withFrames(failure('RpcFailed', `${error.name}: ${error.shortMessage}`, { error: error.name }), error);
  // Anything else keeps its name as the failure type (what the SDK would have made of it) and its retries.
  return withFrames(ApplicationFailure.create({ type: error.name, message: redactUrls(error.message) }), error);
}

/** The translated failure with the original error's stack frames (where it was thrown), under its own redacted message. */
function withFrames(translated: ApplicationFailure, original: Error): ApplicationFailure {
  const frames = original.stack?.indexOf('\n    at ') ?? -1;
  if (frames >= 0) translated.stack = `${translated.name}: ${translated.message}${redactUrls(original.stack!.slice(frames))}`;
  return translated;
}

/** An activity's own failure, with URL paths taken out of its message and stack. */
function redacted(failure: ApplicationFailure): ApplicationFailure {
  const message = redactUrls(failure.message);
  if (message === failure.message) return failure;
  const copy = ApplicationFailure.create({
    type: failure.type ?? undefined,
    message,
    nonRetryable: failure.nonRetryable ?? undefined,
    details: failure.details ?? undefined,
    nextRetryDelay: failure.nextRetryDelay ?? undefined,
  });
  return withFrames(copy, failure);
}

/** The activity interceptor of the transfer worker (src/temporal/worker.ts): outermost, so it sees every error. */
export const activityErrors: ActivityInterceptorsFactory = (ctx) => ({
  inbound: {
    async execute(input, next) {
      try {
        return await next(input);
      } catch (error) {
        // A cancelled activity's error is the SDK's to report as the cancellation.
        if (ctx.cancellationSignal.aborted) throw error;
        throw translateActivityError(error);
      }
    },
  },
});
