/**
 * The tracing pieces without a collector: when tracing is on, what a span may show outside (src/observability/tracing.ts),
 * and the workflow's trace headers (src/observability/workflowTracing.ts) in the format of the Temporal OpenTelemetry
 * interceptors, read back by that package's own extractor.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { propagation, ROOT_CONTEXT, trace } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { extractContextFromHeaders } from '@temporalio/interceptors-opentelemetry/lib/instrumentation.js';
import { privateSpan, startTracing, tracesEndpoint } from '../../src/observability/tracing.ts';
import { hash64, parentOf, TRACE_HEADER, withTraceContext } from '../../src/observability/workflowTracing.ts';

const ADDRESS = '0x000000000000000000000000000000000000bEEF';

test('tracing is off without an endpoint; the traces URL comes from the traces variable, else the base one', () => {
  assert.equal(startTracing({}, 'api'), undefined);
  assert.equal(tracesEndpoint({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/' }), 'http://collector:4318/v1/traces');
  assert.equal(
    tracesEndpoint({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://other:4318/traces' }),
    'http://other:4318/traces',
  );
});

test('a span leaves with allowlisted attributes only, no error text, and no address in its name', async () => {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  const span = provider.getTracer('test').startSpan(`RunActivity:pay ${ADDRESS}`, {
    attributes: {
      workflowId: 'rt_0123',
      workflowType: 'transferWorkflowV2',
      'http.route': '/api/private-route/:routeId',
      // What the Temporal sink copies from WorkflowInfo, and what an instrumentation might add.
      searchAttributes: JSON.stringify({ recipient: ADDRESS }),
      memo: 'amount 25000000',
      'url.full': 'https://rpc.example/v2/secret-key',
    },
  });
  span.recordException(new Error(`insufficient balance of ${ADDRESS}: 25000000 < 30000000`));
  span.setStatus({ code: 2, message: `transfer to ${ADDRESS} failed` });
  span.end();
  const [finished] = exporter.getFinishedSpans();
  const shown = privateSpan(finished!);

  assert.deepEqual(shown.attributes, { workflowId: 'rt_0123', workflowType: 'transferWorkflowV2', 'http.route': '/api/private-route/:routeId' });
  assert.deepEqual(shown.status, { code: 2 });
  assert.deepEqual(shown.events[0]?.attributes, { 'exception.type': 'Error' });
  assert.equal(shown.name, 'RunActivity:pay 0x…');
  assert.equal(shown.spanContext().traceId, finished!.spanContext().traceId);
  const text = JSON.stringify({ ...shown, spanContext: shown.spanContext() }, (_k, v) => (typeof v === 'bigint' ? String(v) : v));
  for (const secret of [ADDRESS.slice(2).toLowerCase(), '25000000', 'secret-key']) assert.ok(!text.toLowerCase().includes(secret), `${secret} left`);
  await provider.shutdown();
});

test("the workflow's trace header is the Temporal OpenTelemetry interceptors' format", () => {
  const span = { traceId: 'ab'.repeat(16), spanId: hash64('run-1') };
  const headers = withTraceContext({}, span);
  assert.ok(headers[TRACE_HEADER]);
  assert.deepEqual(parentOf(headers), span);
  // Read back by @temporalio/interceptors-opentelemetry (as its activity interceptor does), with the W3C propagator.
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  try {
    const context = extractContextFromHeaders(headers);
    const parent = trace.getSpanContext(context ?? ROOT_CONTEXT);
    assert.equal(parent?.traceId, span.traceId);
    assert.equal(parent?.spanId, span.spanId);
  } finally {
    propagation.disable();
  }
  assert.equal(parentOf({}), undefined);
  assert.equal(parentOf(withTraceContext({}, { traceId: '0'.repeat(32), spanId: span.spanId })), undefined, 'an invalid trace id');
});

test('span ids from a run id are stable 16 hex digits, different per input', () => {
  assert.equal(hash64('01a218d7-3b30-7c78-81f4-262a402bfe84:run'), hash64('01a218d7-3b30-7c78-81f4-262a402bfe84:run'));
  assert.match(hash64('x'), /^[0-9a-f]{16}$/);
  assert.notEqual(hash64('a:run'), hash64('b:run'));
});
