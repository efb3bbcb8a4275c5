import { OpenAPIHono, type RouteConfig, type z } from '@hono/zod-openapi';
import type { MiddlewareHandler } from 'hono';
import type { BlankEnv } from 'hono/types';
import { badRequest, type ErrorCode } from '../errorCodes.ts';
import { fail } from '../envelope.ts';
import { codeOfIssue } from '../errorMapping.ts';
import { describeZodError, errorEnvelopeSchema, okEnvelope, responseHeaders } from '../schemas.ts';

/** Every sub-app: a failed validation answers 400 in the envelope, `error` naming the field, `code` by the field. */
export const newApp = () =>
  new OpenAPIHono<BlankEnv>({
    defaultHook: (result, c) => {
      if (result.success) return;
      const issue = result.error.issues[0];
      // @hono/zod-validator hands the hook the input it validated as `data`.
      const data = (result as { data?: unknown }).data;
      const input = (typeof data === 'object' && data !== null ? data : {}) as Record<string, unknown>;
      return fail(c, 400, codeOfIssue(issue), describeZodError(result.error, input));
    },
  });

export const passThrough: MiddlewareHandler = (_c, next) => next();

/**
 * Reads the body as JSON whatever Content-Type says (clients that send none, or text/plain, are served as before),
 * refuses what is no JSON object, then presents it as application/json to the route's zod validator.
 */
export const jsonObjectBody: MiddlewareHandler = async (c, next) => {
  const bytes = await c.req.arrayBuffer();
  let body: unknown;
  try {
    // TextDecoder drops a byte-order mark, as Response.json() does.
    body = JSON.parse(new TextDecoder().decode(bytes));
  } catch {
    throw badRequest('INVALID_JSON', 'request body must be valid JSON');
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw badRequest('INVALID_REQUEST', 'request body must be a JSON object');
  const headers = new Headers(c.req.raw.headers);
  headers.set('content-type', 'application/json');
  // The same bytes (re-serializing a deeply nested body could overflow the stack); Hono's body cache keeps them.
  c.req.raw = new Request(c.req.url, { method: c.req.method, headers, body: bytes, signal: c.req.raw.signal });
  await next();
};

type ResponseHeaders = Exclude<RouteConfig['responses'][string], { $ref: string }>['headers'];

const failure = (description: string, codes: ErrorCode[], headers?: ResponseHeaders) => ({
  description: `${description} Codes: ${codes.join(', ')}.`,
  ...(headers ? { headers } : {}),
  content: { 'application/json': { schema: errorEnvelopeSchema } },
});

export const success = <T extends z.ZodType>(description: string, data: T, headers?: ResponseHeaders) => ({
  description,
  ...(headers ? { headers } : {}),
  content: { 'application/json': { schema: okEnvelope(data) } },
});

export const failures = {
  400: (codes: ErrorCode[]) => failure('Bad request: `error` names the field and the problem.', codes),
  401: (codes: ErrorCode[]) => failure('Unauthorized.', codes, responseHeaders.wwwAuthenticate),
  403: (codes: ErrorCode[]) => failure('Forbidden to this API key.', codes),
  404: (codes: ErrorCode[]) => failure('Not found.', codes),
  409: (codes: ErrorCode[]) => failure('Conflict with an earlier request of the same Idempotency-Key.', codes, responseHeaders.retryAfter),
  413: () => failure('The request body is larger than 64 KiB.', ['BODY_TOO_LARGE']),
  429: (codes: ErrorCode[]) =>
    failure('Over a limit of this client; retry after Retry-After.', codes, { ...responseHeaders.retryAfter, ...responseHeaders.rateLimit }),
  500: () => failure('The service failed; details are in its logs.', ['INTERNAL_ERROR']),
  503: () => failure('The bridge provider did not answer; retry after Retry-After.', ['BRIDGE_UNAVAILABLE'], responseHeaders.retryAfter),
};

/** A chain the bridge lists but this deployment has no RPC URL for is refused like an unknown one. */
export function servedChains(servedChainIds: ReadonlySet<number> | undefined) {
  const served = (chainId: number) => !servedChainIds || servedChainIds.has(chainId);
  const notServed = (field: string, chainId: number) =>
    badRequest('UNSUPPORTED_CHAIN', `${field} ${chainId} is not a supported chain: this deployment has no RPC URL for it (see GET /api/bridge/chains)`);
  return {
    served,
    require(request: { sourceChainId: number; destChainId: number }) {
      for (const field of ['sourceChainId', 'destChainId'] as const) if (!served(request[field])) throw notServed(field, request[field]);
    },
    requireChain(chainId: number) {
      if (!served(chainId)) throw notServed('chainId', chainId);
    },
  };
}
