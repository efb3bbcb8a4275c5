/**
 * One transfer's trace, read back from a collector: the whole local stack (Temporal dev server, Postgres, anvil chains,
 * the Relay emulator) exports its spans with the real OTLP/HTTP exporter to a small OTLP/HTTP receiver started here
 * (JSON bodies of POST /v1/traces). The API call that created the transfer, its workflow run and its activities share
 * one trace id; and no span carries the route's statusToken, its recipient or its deposit address.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { startTestStack, waitFor, type TestStack } from '../support/testStack.ts';

/** A span as the OTLP/HTTP JSON encoding carries it (ids in hex). */
interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes?: Array<{ key: string; value: { stringValue?: string; intValue?: string | number } }>;
}
interface ReceivedSpan extends OtlpSpan {
  service: string;
}
const SPAN_KIND_SERVER = 2;

/** What the receiver got: every body as sent (for the privacy check) and the spans in them. */
const bodies: string[] = [];
const spans: ReceivedSpan[] = [];
let receiver: Server;
let stack: TestStack;

function attribute(span: OtlpSpan, key: string): string | undefined {
  const value = span.attributes?.find((a) => a.key === key)?.value;
  return value?.stringValue ?? (value?.intValue === undefined ? undefined : String(value.intValue));
}

before(
  async () => {
    receiver = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        if (request.method !== 'POST' || request.url !== '/v1/traces') {
          response.writeHead(404).end();
          return;
        }
        bodies.push(text);
        // The exporter sends JSON (Content-Type application/json): resourceSpans → scopeSpans → spans.
        const body = JSON.parse(text) as {
          resourceSpans: Array<{
            resource: { attributes: Array<{ key: string; value: { stringValue?: string } }> };
            scopeSpans: Array<{ spans: OtlpSpan[] }>;
          }>;
        };
        for (const resourceSpans of body.resourceSpans) {
          const service = resourceSpans.resource.attributes.find((a) => a.key === 'service.name')?.value.stringValue ?? '';
          for (const scope of resourceSpans.scopeSpans) for (const span of scope.spans) spans.push({ ...span, service });
        }
        response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    const endpoint = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
    stack = await startTestStack({ env: { OTEL_EXPORTER_OTLP_ENDPOINT: endpoint } });
  },
  { timeout: 300_000 },
);
after(
  async () => {
    await stack?.close();
    await new Promise((resolve) => receiver?.close(resolve));
  },
  { timeout: 60_000 },
);

test("one transfer's API call, workflow and activities share a trace, and no span names its token or addresses", { timeout: 300_000 }, async () => {
  const chainId = (role: string) => stack.manifest.chains.find((c) => c.role === role)!.chainId;
  const recipient = privateKeyToAccount(generatePrivateKey()).address;
  const requestId = `traces-test-${Date.now()}`;
  const created = await stack.api<{ routeId: string; statusToken: string; depositAddress: `0x${string}`; amount: string }>(
    'POST',
    '/api/private-route',
    { sourceChainId: chainId('source'), destChainId: chainId('destination'), amount: '25', userDestinationAddress: recipient },
    { 'X-Request-Id': requestId },
  );
  assert.equal(created.status, 200, JSON.stringify(created.body));
  const { routeId, statusToken, depositAddress, amount } = created.body.data!;
  await stack.fund(depositAddress, 'USDC', BigInt(amount));
  const done = await waitFor(
    `${routeId} to finish`,
    async () => {
      const { body } = await stack.api<{ status: string }>('GET', `/api/private-route/${routeId}`);
      return body.data?.status === 'COMPLETED' || body.data?.status === 'FAILED' ? body.data : undefined;
    },
    180_000,
    250,
  );
  assert.equal(done.status, 'COMPLETED');

  // The API's span of the create, found by its request id.
  const apiSpan = await waitFor('the API span of the create', async () => spans.find((s) => attribute(s, 'request.id') === requestId), 30_000);
  assert.equal(apiSpan.name, 'POST /api/private-route');
  assert.equal(apiSpan.kind, SPAN_KIND_SERVER);
  assert.equal(apiSpan.service, 'private-route-api');
  assert.equal(attribute(apiSpan, 'http.response.status_code'), '200');
  const { traceId } = apiSpan;

  // The workflow's run span is sent when the run ends (the batch processor sends every few seconds).
  const runSpan = await waitFor('the workflow run span', async () => spans.find((s) => s.traceId === traceId && s.name.startsWith('RunWorkflow:')), 30_000);
  assert.equal(runSpan.service, 'private-route-worker');
  assert.equal(attribute(runSpan, 'workflowId'), routeId);
  const startSpan = spans.find((s) => s.traceId === traceId && s.name.startsWith('StartWorkflow:'));
  assert.ok(startSpan, 'the Temporal client span that started the workflow');
  assert.equal(startSpan.parentSpanId, apiSpan.spanId);
  assert.equal(runSpan.parentSpanId, startSpan.spanId);

  const activitySpans = await waitFor(
    'the activity spans',
    async () => {
      const found = spans.filter((s) => s.traceId === traceId && s.name.startsWith('RunActivity:'));
      return found.length >= 2 ? found : undefined;
    },
    30_000,
  );
  for (const span of activitySpans) {
    assert.equal(span.parentSpanId, runSpan.spanId, `${span.name} is a child of the workflow run`);
    assert.equal(attribute(span, 'temporalWorkflowId'), routeId);
  }

  // Privacy: what went to the collector, in every body as sent, names neither the token nor an address of the route.
  const sent = bodies.join('\n').toLowerCase();
  for (const [what, secret] of [
    ['statusToken', statusToken],
    ['recipient address', recipient],
    ['deposit address', depositAddress],
  ] as const) {
    assert.ok(!sent.includes(secret.toLowerCase()), `a span carries the ${what}`);
    assert.ok(!sent.includes(secret.toLowerCase().slice(2)), `a span carries the ${what} without its 0x`);
  }
});
