/**
 * The API's HTTP request metrics, served on the API's /metrics listener (src/api/startApi.ts) and nowhere else.
 * Labelled by the route template (`/api/private-route/:routeId`), never the raw path: a label per routeId would be
 * a series per transfer. Requests no route matched share `route="unmatched"`; unusual methods share `method="OTHER"`.
 */
import { Counter, Histogram, Registry } from 'prom-client';

export const apiHttpRegistry = new Registry();

export const UNMATCHED_ROUTE = 'unmatched';

export const httpRequests = new Counter({
  name: 'private_route_http_requests_total',
  help: 'HTTP requests the API answered, by method, route (the route template; "unmatched" when none) and status (the code)',
  labelNames: ['method', 'route', 'status'] as const,
  registers: [apiHttpRegistry],
});

export const httpRequestDuration = new Histogram({
  name: 'private_route_http_request_duration_seconds',
  help: 'Time from a request to its answer (an event stream: to its first byte), by method, route and status_class (2xx, 4xx, 5xx...)',
  labelNames: ['method', 'route', 'status_class'] as const,
  buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
  registers: [apiHttpRegistry],
});

const KNOWN_METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

/** A method label from a bounded set. */
export function methodLabel(method: string): string {
  return KNOWN_METHODS.has(method) ? method : 'OTHER';
}

/** Counts one answered request. */
export function recordHttpRequest(request: { method: string; route: string; status: number; seconds: number }): void {
  httpRequests.inc({ method: request.method, route: request.route, status: String(request.status) });
  httpRequestDuration.observe({ method: request.method, route: request.route, status_class: `${Math.floor(request.status / 100)}xx` }, request.seconds);
}
