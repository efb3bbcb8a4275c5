/**
 * GET /api/private-route/{routeId}/events over real HTTP and real Postgres: the worker's projection (writeStatus)
 * moves the transfer, the status feed polls it, the API streams what GET would answer this caller.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { writeStatus } from '../../activities/projection.ts';
import { PUBLIC_ERRORS } from '../../src/transfers/publicErrors.ts';
import type { ApiDeps } from '../../src/api/deps.ts';
import { freePort } from '../../devnet/ports.ts';
import { serveHttp, type HttpServer } from '../../src/observability/http.ts';
import { TRANSFER_STATUSES } from '../../src/domain/status.ts';
import { createAbuseLimits } from '../../src/api/abuseLimits.ts';
import { createApiKey } from '../../src/partners/apiKeys.ts';
import { call, CREATE_BODY, startHarness, type Harness } from './harness.ts';

let h: Harness;
const servers: HttpServer[] = [];
before(
  async () => {
    h = await startHarness('api-events');
  },
  { timeout: 120_000 },
);
after(
  async () => {
    // Side by side: a server whose streams' connections are still open waits its stop grace (2 s) for them.
    await Promise.all(servers.map((server) => server.stop()));
    await h?.close();
  },
  { timeout: 60_000 },
);

async function serve(extra: Partial<ApiDeps> = {}) {
  const server = await serveHttp(h.api(extra), await freePort(), '127.0.0.1');
  servers.push(server);
  return server.url;
}

interface SseMessage {
  id?: string;
  event?: string;
  data?: string;
  retry?: string;
  comment?: string;
}

/** Reads an event stream message by message; `next()` is undefined once the server closed it. */
function sseReader(body: ReadableStream<Uint8Array>) {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  return {
    async next(timeoutMs = 10_000): Promise<SseMessage | undefined> {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const end = buffer.indexOf('\n\n');
        if (end >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const message: SseMessage = {};
          for (const line of block.split('\n')) {
            if (line.startsWith(':')) message.comment = line.slice(1).trim();
            const match = /^(id|event|data|retry): ?(.*)$/.exec(line);
            if (match) message[match[1] as 'id' | 'event' | 'data' | 'retry'] = match[2];
          }
          return message;
        }
        const left = deadline - Date.now();
        assert.ok(left > 0, `no event within ${timeoutMs} ms (buffer: ${JSON.stringify(buffer)})`);
        let timer: NodeJS.Timeout | undefined;
        const read = await Promise.race([
          reader.read(),
          new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`no data within ${timeoutMs} ms`)), left))),
        ]).finally(() => clearTimeout(timer));
        if (read.done) return undefined;
        buffer += decoder.decode(read.value, { stream: true });
      }
    },
    cancel: () => reader.cancel().catch(() => {}),
  };
}

async function open(url: string, routeId: string, headers: Record<string, string> = {}) {
  const response = await fetch(`${url}/api/private-route/${routeId}/events`, { headers, signal: AbortSignal.timeout(30_000) });
  return response;
}

/** The next `event: status` message, skipping heartbeats. */
async function nextStatus(stream: ReturnType<typeof sseReader>) {
  for (;;) {
    const message = await stream.next();
    if (message === undefined || message.event === 'status') return message;
  }
}

const create = async () => {
  const created = await call<{ routeId: string; statusToken: string }>(h.api(), 'POST', '/api/private-route', CREATE_BODY);
  assert.equal(created.status, 200, JSON.stringify(created.body));
  return created.body.data!;
};

const ORDER = TRANSFER_STATUSES.filter((s) => s !== 'FAILED');

describe('GET /api/private-route/{routeId}/events', { timeout: 90_000 }, () => {
  test('with the statusToken: the current status, then one full view per change, and the stream ends after COMPLETED', async () => {
    const url = await serve();
    const { routeId, statusToken } = await create();
    const response = await open(url, routeId, { authorization: `Bearer ${statusToken}` });
    assert.equal(response.status, 200);
    assert.match(response.headers.get('content-type') ?? '', /^text\/event-stream/);
    assert.equal(response.headers.get('cache-control'), 'no-store');
    const stream = sseReader(response.body!);

    const first = await nextStatus(stream);
    assert.equal(first?.retry, '3000', 'the first event carries the reconnection hint');
    const seen = [first!];
    for (const [index, status] of ORDER.slice(1).entries()) {
      await writeStatus(
        { db: h.database.db },
        { routeId, status, seq: index + 1, ...(status === 'COMPLETED' ? { payoutTxHash: `0x${'ab'.repeat(32)}` } : {}) },
      );
      seen.push((await nextStatus(stream))!);
    }
    assert.equal(await stream.next(), undefined, 'the server closed the stream after COMPLETED');

    const views = seen.map((m) => JSON.parse(m.data!) as Record<string, unknown>);
    assert.deepEqual(
      views.map((v) => v.status),
      ORDER,
    );
    assert.deepEqual(
      seen.map((m) => m.id),
      ORDER.map((_, i) => String(i)),
      'event ids are the statusSeq',
    );
    // Exactly what GET answers the token's holder now.
    const get = await call(h.api(), 'GET', `/api/private-route/${routeId}`, undefined, { authorization: `Bearer ${statusToken}` });
    assert.deepEqual(views.at(-1), get.body.data);
    assert.equal(views.at(-1)!.userDestinationAddress, CREATE_BODY.userDestinationAddress);
    assert.equal(views.at(-1)!.payoutTxHash, `0x${'ab'.repeat(32)}`);
  });

  test('without a token: the public view, which moves only when an exit epoch begins; a FAILED transfer ends the stream', async () => {
    // The harness's exit epochs last 2 s and a route's end shows at once after it (its PrivacySettings: no public
    // delay); the stream looks again on the same clock. BRIDGING_IN lasts less than an epoch: never shown.
    const EPOCH_MS = 2_000;
    const url = await serve({ events: { publicEpochSeconds: EPOCH_MS / 1000 } });
    const { routeId } = await create();
    const stream = sseReader((await open(url, routeId)).body!);
    const first = JSON.parse((await nextStatus(stream))!.data!) as Record<string, unknown>;
    assert.deepEqual(first, { routeId, status: 'AWAITING_DEPOSIT', error: null, needsAttention: false });
    // Wait for the start of an epoch, so both writes and the GET below fall well inside one.
    await new Promise((resolve) => setTimeout(resolve, EPOCH_MS - (Date.now() % EPOCH_MS) + 20));
    const epochEnds = Math.floor(Date.now() / EPOCH_MS) * EPOCH_MS + EPOCH_MS;
    await writeStatus({ db: h.database.db }, { routeId, status: 'BRIDGING_IN', seq: 1 });
    await writeStatus({ db: h.database.db }, { routeId, status: 'FAILED', seq: 3, error: `deposit of 5 refunded to ${CREATE_BODY.userDestinationAddress}` });
    const meanwhile = await call(h.api(), 'GET', `/api/private-route/${routeId}`);
    if (Date.now() < epochEnds) {
      assert.deepEqual(meanwhile.body.data, first, 'within the epoch, GET without a token still shows the status it began with');
    }
    const failed = (await nextStatus(stream))!;
    assert.ok(Date.now() >= epochEnds, 'the change reaches the public stream once the next epoch began, not when it happened');
    // The public error is a line of the catalogue, never the stored words (which name the address).
    assert.deepEqual(JSON.parse(failed.data!), { routeId, status: 'FAILED', error: PUBLIC_ERRORS.other, needsAttention: false });
    assert.equal(failed.id, '2', "the public view's own sequence: 0 awaiting, 1 in progress, 2 ended");
    assert.equal(await stream.next(), undefined);
  });

  test('Last-Event-ID resumes after that change; heartbeats are comments', async () => {
    const url = await serve({ events: { heartbeatMs: 100 } });
    const { routeId, statusToken } = await create();
    await writeStatus({ db: h.database.db }, { routeId, status: 'BRIDGING_IN', seq: 1 });
    const stream = sseReader((await open(url, routeId, { 'x-status-token': statusToken, 'last-event-id': '1' })).body!);
    // Nothing newer than 1 yet: only heartbeats arrive.
    const heartbeat = await stream.next();
    assert.equal(heartbeat?.comment, 'heartbeat');
    assert.equal(heartbeat?.event, undefined);
    await writeStatus({ db: h.database.db }, { routeId, status: 'RECEIVED_ON_HUB', seq: 2 });
    const next = (await nextStatus(stream))!;
    assert.equal(next.id, '2');
    assert.equal((JSON.parse(next.data!) as { status: string }).status, 'RECEIVED_ON_HUB');
    await stream.cancel();
  });

  test('a wrong token is 401 and an unknown route 404, in the envelope, before any stream opens', async () => {
    const url = await serve();
    const [{ routeId }, other] = [await create(), await create()];
    const wrong = await open(url, routeId, { authorization: `Bearer ${other.statusToken}` });
    assert.equal(wrong.status, 401);
    assert.equal(wrong.headers.get('www-authenticate'), 'Bearer');
    assert.deepEqual(((await wrong.json()) as { code: string }).code, 'STATUS_TOKEN_MISMATCH');
    const unknown = await open(url, `rt_${'0'.repeat(32)}`);
    assert.equal(unknown.status, 404);
    assert.equal(((await unknown.json()) as { code: string }).code, 'UNKNOWN_ROUTE');
  });

  test('at most maxStreamsPerClient open streams per client; closing one frees its place', async () => {
    const url = await serve({ events: { maxStreamsPerClient: 2 } });
    const { routeId } = await create();
    const streams = [sseReader((await open(url, routeId)).body!), sseReader((await open(url, routeId)).body!)];
    for (const stream of streams) assert.equal((await nextStatus(stream))?.event, 'status');
    // A HEAD opens no stream, so it takes no place.
    const head = await fetch(`${url}/api/private-route/${routeId}/events`, { method: 'HEAD', signal: AbortSignal.timeout(10_000) });
    assert.equal(head.status, 200);
    const third = await open(url, routeId);
    assert.equal(third.status, 429);
    assert.equal(((await third.json()) as { code: string }).code, 'TOO_MANY_STREAMS');
    await streams[0]!.cancel();
    // The server notices the closed connection, then the place is free again.
    let status = 0;
    for (let i = 0; i < 50 && status !== 200; i++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      const again = await open(url, routeId);
      status = again.status;
      if (status === 200) await again.body!.cancel();
      else await again.text();
    }
    assert.equal(status, 200, 'a closed stream released its place');
    await streams[1]!.cancel();
  });

  test('an API key has a stream cap of its own (maxStreamsPerKey), apart from its address', async () => {
    const abuse = await createAbuseLimits({
      db: h.database.db,
      settings: { requestsPerMinute: 0, createsPerMinute: 0, maxUnfundedPerClient: 0, publicReadsPerMinute: 0, trustProxyHops: 0 },
      logger: h.logger,
    });
    const url = await serve({ abuse, events: { maxStreamsPerClient: 1, maxStreamsPerKey: 3 } });
    const { key } = await createApiKey(h.database.db, `streams-${crypto.randomUUID().slice(0, 8)}`);
    const { routeId } = await create();
    // The key's three streams from this address do not count against the address's one…
    const keyed = [];
    for (let i = 0; i < 3; i++) {
      const opened = await open(url, routeId, { 'x-api-key': key });
      assert.equal(opened.status, 200, `stream ${i + 1} of the key`);
      keyed.push(sseReader(opened.body!));
    }
    const keyless = await open(url, routeId);
    assert.equal(keyless.status, 200, 'the address still has its own place');
    // …and the key's fourth is refused, saying whose cap it is.
    const fourth = await open(url, routeId, { 'x-api-key': key });
    assert.equal(fourth.status, 429);
    const refusal = (await fourth.json()) as { code: string; error: string };
    assert.equal(refusal.code, 'TOO_MANY_STREAMS');
    assert.match(refusal.error, /at most 3 per API key/);
    await keyless.body!.cancel();
    for (const stream of keyed) await stream.cancel();
  });
});
