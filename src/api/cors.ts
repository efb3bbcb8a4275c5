/**
 * CORS for /api/*, per API key: a web page may call the API only with a key that lists the page's origin
 * (routectl apikey origins; src/partners/allowedOrigins.ts). Keyless calls from a browser get no CORS headers, so the
 * browser refuses them (docs/api.md, "CORS"). No credentials mode: the API reads no cookies.
 *
 * A preflight (OPTIONS with Access-Control-Request-Method) carries no X-Api-Key (a browser never sends custom headers
 * in one), so it is answered for any origin some active key allows; the request that follows is then checked against
 * its own key's origins.
 */
import type { Context, MiddlewareHandler } from 'hono';
import type { BrowserOrigins } from '../partners/allowedOrigins.ts';
import { isBrowserKey } from '../partners/origins.ts';
import { ApiError } from './errorCodes.ts';

export const CORS_ALLOWED_METHODS = ['GET', 'POST'];
export const CORS_ALLOWED_HEADERS = ['Content-Type', 'X-Api-Key', 'Idempotency-Key', 'Authorization', 'X-Status-Token', 'Last-Event-ID'];
/** The answer headers a page's script may read (a browser shows it only the CORS-safelisted ones otherwise). */
export const CORS_EXPOSED_HEADERS = [
  'X-Request-Id',
  'RateLimit-Policy',
  'RateLimit-Limit',
  'RateLimit-Remaining',
  'RateLimit-Reset',
  'Retry-After',
  'Idempotent-Replayed',
  'Deprecation',
  'Sunset',
];
/** How long a browser may reuse a preflight's answer (Chromium caps it at 2 h). */
export const CORS_MAX_AGE_SECONDS = 600;

/** What the CORS decision needs to know of a request. */
export interface CorsRequest {
  method: string;
  /** The Origin header; undefined: not a cross-origin request from a browser. */
  origin: string | undefined;
  /** Access-Control-Request-Method: set on a preflight. */
  requestMethod: string | undefined;
  /** The presented X-Api-Key's origins (empty for a server key or none); undefined: no key presented. */
  keyOrigins: readonly string[] | undefined;
  /** Whether some active key allows the origin (asked only for a preflight). */
  someKeyAllows: boolean;
}

export type CorsDecision =
  /** No Origin: nothing to add. */
  | { kind: 'none' }
  /** A preflight: answered 204 here, with the CORS headers when `allowOrigin` is set. */
  | { kind: 'preflight'; allowOrigin: string | null }
  /** Any other request from a page: served, with Access-Control-Allow-Origin when `allowOrigin` is set. */
  | { kind: 'request'; allowOrigin: string | null };

export const isPreflight = (method: string, requestMethod: string | undefined) => method === 'OPTIONS' && requestMethod !== undefined;

export function corsDecision(request: CorsRequest): CorsDecision {
  const { origin } = request;
  if (origin === undefined) return { kind: 'none' };
  if (isPreflight(request.method, request.requestMethod)) {
    const allowed = request.someKeyAllows && CORS_ALLOWED_METHODS.includes(request.requestMethod!.toUpperCase());
    return { kind: 'preflight', allowOrigin: allowed ? origin : null };
  }
  return { kind: 'request', allowOrigin: request.keyOrigins?.includes(origin) ? origin : null };
}

/** The headers of an allowed preflight's answer, or of an allowed request's. */
export function corsHeaders(decision: CorsDecision): Record<string, string> {
  if (decision.kind === 'none' || decision.allowOrigin === null) return {};
  if (decision.kind === 'preflight') {
    return {
      'Access-Control-Allow-Origin': decision.allowOrigin,
      'Access-Control-Allow-Methods': CORS_ALLOWED_METHODS.join(', '),
      'Access-Control-Allow-Headers': CORS_ALLOWED_HEADERS.join(', '),
      'Access-Control-Max-Age': String(CORS_MAX_AGE_SECONDS),
    };
  }
  return { 'Access-Control-Allow-Origin': decision.allowOrigin, 'Access-Control-Expose-Headers': CORS_EXPOSED_HEADERS.join(', ') };
}

/** The middleware for /api/*; without `origins` (no database) no origin is allowed. */
export function cors(origins: BrowserOrigins | undefined): MiddlewareHandler {
  return async (c, next) => {
    const origin = c.req.header('origin');
    const requestMethod = c.req.header('access-control-request-method');
    const apiKey = c.req.header('x-api-key');
    const preflight = isPreflight(c.req.method, requestMethod);
    const decision = corsDecision({
      method: c.req.method,
      origin,
      requestMethod,
      keyOrigins: apiKey === undefined || origin === undefined || preflight ? undefined : ((await origins?.ofKey(apiKey)) ?? []),
      someKeyAllows: origin !== undefined && preflight && ((await origins?.someKeyAllows(origin)) ?? false),
    });
    if (decision.kind === 'preflight') {
      return c.body(null, 204, { ...corsHeaders(decision), Vary: 'Origin, Access-Control-Request-Method, Access-Control-Request-Headers' });
    }
    await next();
    // After the route (and onError): every answer, a failure's too, so that the page can read why it failed.
    for (const [name, value] of Object.entries(corsHeaders(decision))) c.header(name, value);
    c.header('Vary', 'Origin', { append: true });
  };
}

/**
 * Refuses (403 BROWSER_KEY_NOT_ALLOWED) a request made with a browser key (one with allowed origins: public) to do
 * what only a secret server key may: list or look up the key's transfers, name a webhookUrl, vouch for users. A
 * request without a key, or with a server key, passes; whether a route needs a key at all is the route's to say.
 * Needs the partner set by the abuse limits' middleware (src/api/abuseLimits.ts) on the route.
 */
export function requireServerKey(c: Context, what: string): void {
  const partner = c.get('partner');
  if (partner && isBrowserKey(partner)) {
    throw new ApiError(
      403,
      'BROWSER_KEY_NOT_ALLOWED',
      `this API key (${partner.name}) allows browser origins, so it is public and may not ${what}: call from your server with a key without origins`,
    );
  }
}
