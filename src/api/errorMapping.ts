/**
 * How a failure becomes its envelope: ApiError as thrown, the quote service's errors by the code they carry, the
 * bridge's by class, zod issues by the field they are about.
 */
import { HTTPException } from 'hono/http-exception';
import type { z } from 'zod';
import { BridgeRouteError, BridgeUnavailableError } from '../providers/bridge.ts';
import { QuotaExhaustedError } from '../providers/providerQuota.ts';
import { QuoteError } from '../quote/quoteService.ts';
import { ApiError, ERROR_CODES, type ErrorCode } from './errorCodes.ts';

/** How long a client waits before asking again after the bridge did not answer. */
const BRIDGE_RETRY_AFTER_SECONDS = 5;

/** The code of a zod issue, from the field it is about. */
export function codeOfIssue(issue: z.core.$ZodIssue | undefined): ErrorCode {
  const field = issue?.path[0];
  switch (field) {
    case 'amount':
    case 'amountSmallestUnits':
      return 'INVALID_AMOUNT';
    case 'userDestinationAddress':
    case 'refundAddress':
      return 'INVALID_ADDRESS';
    case 'webhookUrl':
      return 'INVALID_WEBHOOK_URL';
    case 'cursor':
      return 'INVALID_CURSOR';
    default:
      return 'INVALID_REQUEST';
  }
}

/** The envelope's status, code and text for any error a handler threw; `internal` marks what must be logged. */
export function toApiError(error: Error): { failure: ApiError; internal: boolean } {
  if (error instanceof ApiError) return { failure: error, internal: false };
  if (error instanceof QuoteError) return { failure: new ApiError(ERROR_CODES[error.code].status, error.code, error.message), internal: false };
  if (error instanceof BridgeRouteError) return { failure: new ApiError(400, 'NO_ROUTE', error.message), internal: false };
  if (error instanceof HTTPException && error.status < 500)
    return { failure: new ApiError(400, 'INVALID_REQUEST', error.message || 'bad request'), internal: false };
  if (error instanceof BridgeUnavailableError) {
    const retryAfterSeconds = error instanceof QuotaExhaustedError ? Math.max(1, Math.ceil(error.retryAfterMs / 1000)) : BRIDGE_RETRY_AFTER_SECONDS;
    return {
      failure: new ApiError(503, 'BRIDGE_UNAVAILABLE', 'the bridge provider is unavailable; try again shortly', { 'Retry-After': String(retryAfterSeconds) }),
      internal: true,
    };
  }
  return { failure: new ApiError(500, 'INTERNAL_ERROR', 'internal error'), internal: true };
}
