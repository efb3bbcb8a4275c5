/**
 * What the API records of every request (docs/observability.md, "HTTP metrics and request ids"):
 *
 * - a request id: the caller's `X-Request-Id` when it is well formed (1-128 letters, digits, `-`, `_`, `=`), else 32
 *   random hex digits (not a UUID: clients make their Idempotency-Keys UUIDs, and those are never logged); answered in
 *   `X-Request-Id` and carried by the access-log line and the span;
 * - one access-log line (`http request`): request id, method, route template, status, duration, trace id;
 * - the request metrics (src/observability/httpMetrics.ts);
 * - with tracing on, a server span named `<METHOD> <route template>`, active while the handler runs, so the
 *   Temporal client's interceptor makes the workflow start its child.
 *
 * Never the raw path: it holds routeIds, and clients put what they like in it. Nor query strings, client
 * addresses, bodies or headers (a statusToken travels in Authorization).
 */
import { randomBytes } from 'node:crypto';
import { context, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Tracer } from '@opentelemetry/api';
import type { Context, MiddlewareHandler } from 'hono';
import { requestId, type RequestIdVariables } from 'hono/request-id';
import { matchedRoutes } from 'hono/route';
import type { Logger } from '../logger.ts';
import { methodLabel, recordHttpRequest, UNMATCHED_ROUTE } from '../observability/httpMetrics.ts';

export const REQUEST_ID_HEADER = 'X-Request-Id';

/** Reads or makes the request id and answers it in X-Request-Id (Hono's middleware: it refuses ids with other characters). */
export const requestIds = (): MiddlewareHandler =>
  requestId({ headerName: REQUEST_ID_HEADER, limitLength: 128, generator: () => randomBytes(16).toString('hex') });

/** The request's id (set by `requestIds()`). */
export function requestIdOf(c: Context): string | undefined {
  return (c as Context<{ Variables: RequestIdVariables }>).get('requestId');
}

/**
 * The template of the route a request was addressed to: the first route handler (not middleware) that matched
 * it, so a body-limit or rate-limit refusal is counted under its route; `unmatched` when none did.
 */
export function routeTemplate(c: Context): string {
  return matchedRoutes(c).find((route) => route.method !== 'ALL')?.path ?? UNMATCHED_ROUTE;
}

/** Probes answer every few seconds: their successes are logged at debug level. */
const PROBES = new Set(['/healthz', '/readyz']);

/** The access log, metrics and span of every request; registered after `requestIds()`, before every route. */
export function observeRequests(opts: { logger: Logger; tracer?: Tracer }): MiddlewareHandler {
  return async (c, next) => {
    const started = performance.now();
    const method = methodLabel(c.req.method);
    const id = requestIdOf(c);
    // A root span: the API is public, a caller's traceparent is not trusted.
    const span = opts.tracer?.startSpan(method, { kind: SpanKind.SERVER, attributes: { 'http.request.method': method, 'request.id': id } }, ROOT_CONTEXT);
    let failed = false;
    try {
      await (span ? context.with(trace.setSpan(ROOT_CONTEXT, span), next) : next());
    } catch (error) {
      // onError answers what handlers throw; this is what got past it.
      failed = true;
      throw error;
    } finally {
      const route = routeTemplate(c);
      const status = failed ? 500 : c.res.status;
      const seconds = (performance.now() - started) / 1000;
      recordHttpRequest({ method, route, status, seconds });
      if (span) {
        if (route !== UNMATCHED_ROUTE) {
          span.updateName(`${method} ${route}`);
          span.setAttribute('http.route', route);
        }
        span.setAttribute('http.response.status_code', status);
        if (status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
        span.end();
      }
      const level = PROBES.has(route) && status < 400 ? 'debug' : 'info';
      opts.logger[level]('http request', {
        requestId: id,
        method,
        route,
        status,
        durationMs: Math.round(seconds * 1000),
        ...(span && { traceId: span.spanContext().traceId }),
      });
    }
  };
}
