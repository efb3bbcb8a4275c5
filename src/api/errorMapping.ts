/**
 * How a failure becomes its envelope: ApiError as thrown, the quote service's and the bridge's errors by class
 * (and, for QuoteError, by the field its message starts with), zod issues by the field they are about.
 */
import { HTTPException } from 'hono/http-exception';
import type { z } from 'zod';
import { BridgeRouteError, BridgeUnavailableError } from '../providers/bridge.ts';
import { QuoteError } from '../quote/quoteService.ts';
import { ApiError, ERROR_CODES, type ErrorCode } from './errorCodes.ts';

/** The code of a zod issue, from the field it is about. */
export function codeOfIssue(issue: z.core.$ZodIssue | undefined): ErrorCode {
  const field = issue?.path[0];
  switch (field) {
    case 'amount':
      return 'INVALID_AMOUNT';
    case 'userDestinationAddress':
    case 'refundAddress':
      return 'INVALID_ADDRESS';
    case 'webhookUrl':
      return 'INVALID_WEBHOOK_URL';
    default:
      return 'INVALID_REQUEST';
  }
}

/** QuoteError messages start with the field they refuse (src/quote/*.ts); the code follows the field. */
export function codeOfQuoteError(message: string): ErrorCode {
  if (/^amount\b/.test(message)) return 'INVALID_AMOUNT';
  if (/^(tokenSymbol|destTokenSymbol|hub token)\b/.test(message)) return 'UNSUPPORTED_TOKEN';
  if (/must differ/.test(message)) return 'UNSUPPORTED_PAIR';
  if (/not a supported chain|hub chain/.test(message)) return 'UNSUPPORTED_CHAIN';
  if (/^no USD price/.test(message)) return 'NO_ROUTE';
  return 'INVALID_REQUEST';
}

/** The envelope's status, code and text for any error a handler threw; `internal` marks what must be logged. */
export function toApiError(error: Error): { failure: ApiError; internal: boolean } {
  if (error instanceof ApiError) return { failure: error, internal: false };
  if (error instanceof QuoteError) {
    const code = error.code ?? codeOfQuoteError(error.message);
    return { failure: new ApiError(ERROR_CODES[code].status, code, error.message), internal: false };
  }
  if (error instanceof BridgeRouteError) return { failure: new ApiError(400, 'NO_ROUTE', error.message), internal: false };
  if (error instanceof HTTPException && error.status < 500)
    return { failure: new ApiError(400, 'INVALID_REQUEST', error.message || 'bad request'), internal: false };
  if (error instanceof BridgeUnavailableError)
    return { failure: new ApiError(500, 'BRIDGE_UNAVAILABLE', 'the bridge provider is unavailable; try again shortly'), internal: true };
  return { failure: new ApiError(500, 'INTERNAL_ERROR', 'internal error'), internal: true };
}
