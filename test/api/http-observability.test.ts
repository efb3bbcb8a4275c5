/**
 * What the API records of each request (src/api/requestObservability.ts) over real Postgres: X-Request-Id, the
 * access-log line, the request metrics by route template (one label for every routeId, one for unmatched paths),
 * and the server span (an in-memory exporter), none of which carries the raw path.
 */
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import { SpanKind } from '@opentelemetry/api';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { apiHttpRegistry, httpRequests } from '../../src/observability/httpMetrics.ts';
import { call, CREATE_BODY, QUOTE_BODY, startHarness, type Harness } from './harness.ts';

let h: Harness;
before(
  async () => {
    h = await startHarness('api-http-observability');
  },
  { timeout: 120_000 },
);
after(async () => h?.close(), { timeout: 60_000 });
beforeEach(() => httpRequests.reset());

/** The counter's series: `method route status` → count. */
async function requestCounts(): Promise<Map<string, number>> {
  const { values } = await httpRequests.get();
  return new Map(values.map((v) => [`${v.labels.method} ${v.labels.route} ${v.labels.status}`, v.value]));
}

/** The access-log lines written since `from`. */
const accessLines = (from: number) =>
  h.logLines
    .slice(from)
    .map((line) => JSON.parse(line) as Record<string, unknown>)
    .filter((line) => line.msg === 'http request');

describe('request ids', { timeout: 60_000 }, () => {
  test('every answer carries X-Request-Id: the caller’s when well formed, else 32 random hex digits; the access log has it', async () => {
    const app = h.api();
    const from = h.logLines.length;
    const given = await call(app, 'POST', '/api/private-route/quote', QUOTE_BODY, { 'X-Request-Id': 'client-req_42' });
    assert.equal(given.status, 200, JSON.stringify(given.body));
    assert.equal(given.headers.get('x-request-id'), 'client-req_42');

    const made = await call(app, 'GET', '/api/bridge/chains');
    assert.match(made.headers.get('x-request-id') ?? '', /^[0-9a-f]{32}$/);

    // Characters outside letters, digits, "-", "_" and "=" (a header injection, a path) are not echoed.
    const refused = await call(app, 'GET', '/api/bridge/chains', undefined, { 'X-Request-Id': 'a b/../c' });
    assert.notEqual(refused.headers.get('x-request-id'), 'a b/../c');
    // Answers from outside the routes (404 of an unknown endpoint) carry one too.
    const unknown = await call(app, 'GET', '/no/such/thing');
    assert.equal(unknown.status, 404);
    assert.ok(unknown.headers.get('x-request-id'));

    const lines = accessLines(from);
    assert.deepEqual(
      lines.map((l) => [l.requestId, l.method, l.route, l.status]),
      [
        ['client-req_42', 'POST', '/api/private-route/quote', 200],
        [made.headers.get('x-request-id'), 'GET', '/api/bridge/chains', 200],
        [refused.headers.get('x-request-id'), 'GET', '/api/bridge/chains', 200],
        [unknown.headers.get('x-request-id'), 'GET', 'unmatched', 404],
      ],
    );
    for (const line of lines) assert.equal(typeof line.durationMs, 'number');
  });
});

describe('request metrics', { timeout: 60_000 }, () => {
  test('a request is counted under its route template and status; routeIds share one label; unknown paths share "unmatched"', async () => {
    const app = h.api();
    const created = await call<{ routeId: string }>(app, 'POST', '/api/private-route', CREATE_BODY);
    assert.equal(created.status, 200, JSON.stringify(created.body));
    const routeId = created.body.data!.routeId;
    const other = `rt_${'0'.repeat(32)}`;
    assert.equal((await call(app, 'GET', `/api/private-route/${routeId}`)).status, 200);
    assert.equal((await call(app, 'GET', `/api/private-route/${other}`)).status, 404);
    assert.equal((await call(app, 'GET', `/api/private-route/${other}`)).status, 404);
    assert.equal((await call(app, 'GET', `/unknown/${routeId}`)).status, 404);
    assert.equal((await call(app, 'GET', `/unknown/${other}`)).status, 404);
    assert.equal((await call(app, 'POST', '/api/private-route', 'x'.repeat(70 * 1024))).status, 413);

    assert.deepEqual(
      await requestCounts(),
      new Map([
        ['POST /api/private-route 200', 1],
        ['GET /api/private-route/:routeId 200', 1],
        ['GET /api/private-route/:routeId 404', 2],
        ['GET unmatched 404', 2],
        // Refused by the body limit before its handler ran: still counted under the route it was sent to.
        ['POST /api/private-route 413', 1],
      ]),
    );
    const text = await apiHttpRegistry.metrics();
    assert.doesNotMatch(text, /rt_[0-9a-f]{32}/, 'no routeId in any label');
    assert.match(text, /private_route_http_request_duration_seconds_count\{method="GET",route="\/api\/private-route\/:routeId",status_class="4xx"\} 2/);
  });
});

describe('server spans', { timeout: 60_000 }, () => {
  test('a span per request, named by method and route template, with the request id and status; no path, body or address', async () => {
    const exporter = new InMemorySpanExporter();
    const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
    const app = h.api({ tracer: provider.getTracer('test') });
    const created = await call<{ routeId: string; statusToken: string; depositAddress: string }>(app, 'POST', '/api/private-route', CREATE_BODY, {
      'X-Request-Id': 'trace-me',
    });
    assert.equal(created.status, 200, JSON.stringify(created.body));
    const { routeId, statusToken, depositAddress } = created.body.data!;
    await call(app, 'GET', `/api/private-route/${routeId}`, undefined, { authorization: `Bearer ${statusToken}` });
    await call(app, 'GET', `/nowhere/${routeId}`);

    const spans = exporter.getFinishedSpans();
    assert.deepEqual(
      spans.map((s) => [s.name, s.kind, s.attributes['http.route'], s.attributes['http.response.status_code']]),
      [
        ['POST /api/private-route', SpanKind.SERVER, '/api/private-route', 200],
        ['GET /api/private-route/:routeId', SpanKind.SERVER, '/api/private-route/:routeId', 200],
        ['GET', SpanKind.SERVER, undefined, 404],
      ],
    );
    assert.equal(spans[0]!.attributes['request.id'], 'trace-me');
    const everything = JSON.stringify(spans.map((s) => ({ name: s.name, attributes: s.attributes, events: s.events })));
    for (const secret of [routeId, statusToken, depositAddress, CREATE_BODY.userDestinationAddress])
      assert.ok(!everything.toLowerCase().includes(secret.toLowerCase()), `a span carries ${secret}`);
    await provider.shutdown();
  });
});
