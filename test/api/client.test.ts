/**
 * The typed client (src/client, `private-route/client`) against the real API app (createApi) served over HTTP on
 * a free port, on a real Postgres: the real transfer service (with a fake quote service and a Temporal stand-in
 * that records workflow starts), so creates write real rows with real statusTokens, and statuses move through
 * writeStatus (activities/projection.ts) the way the worker's steps move them.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'drizzle-orm';
import type { Client as TemporalClient } from '@temporalio/client';
import type { Hono } from 'hono';
import { createAbuseLimits } from '../../src/api/abuseLimits.ts';
import { createApi } from '../../src/api/app.ts';
import { createApiKey } from '../../src/partners/apiKeys.ts';
import { connectDatabase, type DatabaseHandle } from '../../src/db/client.ts';
import { freePorts } from '../../devnet/ports.ts';
import { startTestPostgres, type TestPostgres } from '../support/database.ts';
import { createLogger } from '../../src/logger.ts';
import { serveHttp, type HttpServer } from '../../src/observability/http.ts';
import { writeStatus } from '../../activities/projection.ts';
import { signWebhook } from '../../src/webhooks/signature.ts';
import { AmountError } from '../../src/money/amount.ts';
import { QuoteError, type Quote, type QuoteService, quotedToken, requestedAmount, type TransferRequest } from '../../src/quote/quoteService.ts';
import { createTransferService, type PrivacySettings } from '../../src/transfers/transferService.ts';
import { createIdempotencyStore } from '../../src/transfers/idempotency.ts';
import { createStatusFeed, type StatusFeed } from '../../src/transfers/statusFeed.ts';
import type { ApiAccountRole, RouteAddressBook } from '../../src/accounts/routeAccounts.ts';
import type { TransferSettings } from '../../src/domain/plan.ts';
import type { TransferStatus } from '../../src/domain/status.ts';
import {
  createPrivateRouteClient,
  PrivateRouteApiError,
  PrivateRouteFailedError,
  PrivateRouteNetworkError,
  type PrivateRouteClient,
  type PublicTransferView,
  type QuoteRequest,
  type TransferView,
} from '../../src/client/index.ts';

let postgres: TestPostgres;
let database: DatabaseHandle;
let server: HttpServer;
let statusFeed: StatusFeed;
let baseUrl: string;
const logger = createLogger({ level: 'error' });

const TOKEN = { chainId: 1, address: '0x00000000000000000000000000000000000000aa', symbol: 'USDC', name: 'USD Coin', decimals: 6 } as const;
const quoteOf = (request: TransferRequest): Quote => {
  const units = requestedAmount(request, TOKEN.decimals);
  return {
    symbol: 'USDC',
    destSymbol: 'USDC',
    sourceToken: quotedToken(TOKEN),
    destToken: quotedToken({ ...TOKEN, chainId: 2 }),
    sourceChainId: request.sourceChainId,
    destChainId: request.destChainId,
    hubChainId: 3,
    amount: units.toString(),
    quotedOutputAmount: ((units * 98n) / 100n).toString(),
    feeAmount: ((units * 2n) / 100n).toString(),
    networkCostAmount: '0',
    bridgeFeeAmount: '0',
    privacyFeeAmount: '0',
    amountInUsd: null,
    quotedOutputUsd: null,
    feeUsd: null,
    networkCostUsd: null,
    bridgeFeeUsd: null,
    privacyFeeUsd: null,
    roundingAmount: '0',
    roundingUsd: null,
    etaSeconds: 60,
    route: ['USDC on 1', 'USDC on 3', 'privacy pool', 'USDC on 2'],
    amountClass: { value: ((units * 98n) / 100n).toString(), roundingBps: 0, priceHeldUntil: null },
  };
};
const quotes: QuoteService = {
  async quote(request) {
    try {
      return { quote: quoteOf(request), sourceToken: TOKEN, hubToken: { ...TOKEN, chainId: 3 }, destToken: { ...TOKEN, chainId: 2 } };
    } catch (error) {
      // As the real quote service does: a malformed amount is the client's mistake.
      if (error instanceof AmountError) throw new QuoteError(error.message, { code: 'INVALID_AMOUNT' });
      throw error;
    }
  },
  inputFor: async (_request, output) => (output * 100n) / 98n,
  chains: async () => [
    { chainId: 1, name: 'one', displayName: 'One' },
    { chainId: 2, name: 'two', displayName: 'Two' },
  ],
  tokens: async (chainId) => [{ ...TOKEN, chainId }],
};

const workflowStarts: string[] = [];
const temporal = {
  workflow: { start: async (_type: string, options: { workflowId: string }) => void workflowStarts.push(options.workflowId) },
} as unknown as TemporalClient;
let nextAddress = 1;
const addresses: RouteAddressBook<ApiAccountRole> = {
  routeAddresses: () => {
    const n = nextAddress++;
    return { deposit: `0x${n.toString(16).padStart(40, 'd')}`, hub: `0x${n.toString(16).padStart(40, 'e')}` } as never;
  },
};
const PRIVACY: PrivacySettings = {
  exitEpochSeconds: 1,
  publicEndDelaySeconds: 0,
  publicEndHoldSeconds: 0,
  minAnonymitySet: 1,
  maxAnonymitySet: 100,
  maxWaitSeconds: 60,
  pollSeconds: 1,
  reviewTimeoutSeconds: 60,
};

const REQUEST = { sourceChainId: 1, destChainId: 2, amount: '25.5' };
const CREATE = { ...REQUEST, userDestinationAddress: '0x000000000000000000000000000000000000bEEF' };
const FORWARD: TransferStatus[] = ['BRIDGING_IN', 'RECEIVED_ON_HUB', 'SHIELDED', 'UNSHIELD_SENT', 'BRIDGING_OUT', 'COMPLETED'];

/** A fetch that records what the client asked for, and can answer some requests itself. */
function recordingFetch(answer?: (url: string, init: RequestInit | undefined) => Response | undefined | Promise<Response | undefined>) {
  const urls: string[] = [];
  const fetch: typeof globalThis.fetch = async (input, init) => {
    const url = String(input instanceof Request ? input.url : input);
    urls.push(`${init?.method ?? 'GET'} ${new URL(url).pathname}`);
    return (await answer?.(url, init)) ?? globalThis.fetch(input, init);
  };
  return { fetch, urls };
}

const transferCount = async () => Number((await database.db.execute<{ n: string }>(sql`select count(*) as n from transfers`))[0]?.n);

/** Moves a route to `status` the way a step does (seq strictly increasing). */
let seq = 10;
const move = (routeId: string, status: TransferStatus, error?: string) =>
  writeStatus({ db: database.db }, { routeId, seq: ++seq, status, ...(error && { error }) });

/** Resolves when `predicate` holds, polling every 20 ms; fails after `ms`. */
async function until(predicate: () => boolean, what: string, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

before(async () => {
  const [apiPort] = (await freePorts(1)) as [number];
  postgres = await startTestPostgres('client-test');
  database = connectDatabase(postgres.url);
  // A reused TEST_DATABASE_URL may hold earlier runs' transfers: start our account indexes above theirs.
  await database.db.execute(sql`select setval('route_account_index_seq', greatest((select coalesce(max(account_index), 0) from transfers), 1) + 1000000)`);
  const transfers = createTransferService({
    db: database.db,
    temporal,
    taskQueue: 'client-test',
    quotes,
    addresses,
    settings: { stepMaxAttempts: 3, stepTimeBudgetSeconds: 60, depositTimeoutSeconds: 600 } satisfies TransferSettings,
    privacy: PRIVACY,
  });
  statusFeed = createStatusFeed(database.db, { pollIntervalMs: 100 });
  // The streams tell clients to reconnect after 100 ms (`retry:`; 3 s by default), so the reconnection tests wait that long.
  // The abuse limits off: an X-Api-Key still names its partner (its own transfers are listed for it).
  const abuse = await createAbuseLimits({
    db: database.db,
    settings: { requestsPerMinute: 0, createsPerMinute: 0, maxUnfundedPerClient: 0, publicReadsPerMinute: 0, trustProxyHops: 0 },
    logger,
  });
  const app = createApi({ quotes, transfers, logger, abuse, idempotency: createIdempotencyStore(database.db), statusFeed, events: { retryMs: 100 } });
  server = await serveHttp(app as unknown as Hono, apiPort, '127.0.0.1');
  baseUrl = server.url;
});

after(async () => {
  await statusFeed?.close();
  await server?.stop();
  await database?.close();
  await postgres?.stop();
});

describe('typed client against the real API', { timeout: 120_000 }, () => {
  test('quote, chains, tokens: the envelope is unwrapped and typed', { timeout: 20_000 }, async () => {
    const client = createPrivateRouteClient({ baseUrl });
    const quote = await client.quote(REQUEST);
    assert.equal(quote.amount, '25500000');
    assert.equal(quote.quotedOutputAmount, '24990000');
    assert.deepEqual(
      (await client.chains()).map((chain) => chain.chainId),
      [1, 2],
    );
    const [token] = await client.tokens(2, 'usd');
    assert.equal(token?.chainId, 2);
    assert.equal(token?.decimals, 6);
  });

  test('a quote may give its amount in smallest units and name its token by address; both amounts is a 400', { timeout: 20_000 }, async () => {
    const client = createPrivateRouteClient({ baseUrl });
    const { amount: _, ...pair } = REQUEST;
    const inUnits = await client.quote({ ...pair, amountSmallestUnits: '25500000', tokenAddress: TOKEN.address });
    assert.equal(inUnits.amount, '25500000');
    assert.deepEqual(inUnits.sourceToken, { chainId: 1, address: TOKEN.address, symbol: 'USDC', decimals: 6 });
    // @ts-expect-error RequestAmount takes one of the two, not both.
    const both: QuoteRequest = { ...REQUEST, amountSmallestUnits: '25500000' };
    const refused = await client.quote(both).then(
      () => assert.fail('resolved'),
      (error: unknown) => error,
    );
    assert.ok(refused instanceof PrivateRouteApiError, String(refused));
    assert.equal(refused.code, 'INVALID_AMOUNT');
    assert.match(refused.message, /not both/);
  });

  test('create cites a quote by its quoteId and is exactly that quote', { timeout: 30_000 }, async () => {
    const client = createPrivateRouteClient({ baseUrl });
    const quote = await client.quote(REQUEST);
    const created = await client.create({ ...CREATE, quoteId: quote.quoteId });
    assert.equal(created.quoteId, quote.quoteId);
    assert.equal(created.quotedOutputAmount, quote.quotedOutputAmount);
  });

  test('create with the same idempotency key twice is one route; a lost answer is retried with the same key', { timeout: 30_000 }, async () => {
    const client = createPrivateRouteClient({ baseUrl });
    const before = await transferCount();
    const key = `order-${crypto.randomUUID()}`;
    const first = await client.create(CREATE, { idempotencyKey: key });
    const again = await client.create(CREATE, { idempotencyKey: key });
    assert.match(first.routeId, /^rt_[0-9a-f]{32}$/);
    assert.equal(again.routeId, first.routeId, 'the same key answers the same route');
    assert.equal(again.statusToken, first.statusToken);
    assert.equal(again.depositAddress, first.depositAddress);
    assert.equal(await transferCount(), before + 1, 'one transfer row for the two calls');

    // The first answer is lost on the way back (the server did create the route): the client's retry, with the
    // key it generated itself, gets that route rather than a second one.
    let creates = 0;
    const sentKeys: string[] = [];
    const lossy = recordingFetch(async (url, init) => {
      if (init?.method !== 'POST' || new URL(url).pathname !== '/api/private-route') return undefined;
      sentKeys.push(new Headers(init.headers).get('idempotency-key') ?? '');
      if (++creates > 1) return undefined;
      await (await globalThis.fetch(url, init)).text();
      throw new TypeError('fetch failed: connection reset');
    });
    const retrying = createPrivateRouteClient({ baseUrl, fetch: lossy.fetch });
    const created = await retrying.create(CREATE);
    assert.equal(creates, 2, 'one retry');
    assert.equal(sentKeys[0], sentKeys[1], 'the retry sends the same key');
    assert.match(sentKeys[0]!, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/, 'a UUIDv4 by default');
    assert.equal(await transferCount(), before + 2, 'the lost answer and its retry made one route');
    assert.equal((await retrying.get(created.routeId, created.statusToken)).status, 'AWAITING_DEPOSIT');

    const other = await client.create(CREATE);
    assert.notEqual(other.routeId, first.routeId, 'another call, another key, another route');
  });

  test('create retries IDEMPOTENCY_KEY_IN_USE with the same key; a key reused with another body is not retried', { timeout: 30_000 }, async () => {
    let answered = 0;
    const busy = recordingFetch((url, init) => {
      if (init?.method !== 'POST' || new URL(url).pathname !== '/api/private-route' || answered++ > 0) return undefined;
      return Response.json(
        { success: false, error: 'the first request with this Idempotency-Key is still running', code: 'IDEMPOTENCY_KEY_IN_USE' },
        { status: 409, headers: { 'retry-after': '1' } },
      );
    });
    const client = createPrivateRouteClient({ baseUrl, fetch: busy.fetch });
    const started = Date.now();
    const created = await client.create(CREATE);
    assert.equal(busy.urls.filter((url) => url === 'POST /api/private-route').length, 2);
    assert.ok(Date.now() - started >= 1000, 'waited for Retry-After');
    assert.match(created.routeId, /^rt_/);

    const key = `order-${crypto.randomUUID()}`;
    await client.create(CREATE, { idempotencyKey: key });
    const posts = busy.urls.length;
    const reused = await client.create({ ...CREATE, amount: '26' }, { idempotencyKey: key }).then(
      () => assert.fail('resolved'),
      (error: unknown) => error,
    );
    assert.ok(reused instanceof PrivateRouteApiError, String(reused));
    assert.equal(reused.code, 'IDEMPOTENCY_KEY_REUSED');
    assert.equal(reused.status, 409);
    assert.equal(reused.isRetryable, false);
    assert.equal(busy.urls.length, posts + 1, 'not retried');
  });

  test('waitForCompletion follows the events stream: every status once, in order, resolved at COMPLETED', { timeout: 30_000 }, async () => {
    const recorder = recordingFetch();
    const client = createPrivateRouteClient({ baseUrl, fetch: recorder.fetch });
    const route = await client.create(CREATE);
    const seen: string[] = [];
    // A poll every minute: if the stream were not used, the test would time out.
    const done = client.waitForCompletion(route.routeId, {
      transport: 'auto',
      statusToken: route.statusToken,
      pollIntervalMs: 60_000,
      signal: AbortSignal.timeout(20_000),
      onStatus: (view) => seen.push(view.status),
    });
    await until(() => seen.length === 1, 'the first event');
    for (const status of FORWARD) {
      await move(route.routeId, status);
      await until(() => seen.at(-1) === status, `${status} on the stream`);
    }
    const final: TransferView = await done;
    assert.equal(final.status, 'COMPLETED');
    assert.equal(final.userDestinationAddress, CREATE.userDestinationAddress, 'the statusToken holder gets the full view');
    assert.deepEqual(seen, ['AWAITING_DEPOSIT', ...FORWARD]);
    assert.ok(recorder.urls.includes(`GET /api/private-route/${route.routeId}/events`));
    assert.ok(!recorder.urls.includes(`GET /api/private-route/${route.routeId}`), 'no polling');
  });

  test('by default (quiet) the reads go out at one rate, answers of one size, and go on after the end: no status moment on the wire', {
    timeout: 30_000,
  }, async () => {
    // What a network observer of the client sees: when each request went out and how big its answer was.
    const frames: Array<{ at: number; bytes: number; url: string }> = [];
    const observed: typeof fetch = async (input, init) => {
      const at = Date.now();
      const response = await fetch(input, init);
      const body = await response.clone().text();
      frames.push({ at, bytes: body.length + (response.headers.get('x-padding')?.length ?? 0), url: String(input) });
      return response;
    };
    const client = createPrivateRouteClient({ baseUrl, fetch: observed });
    const route = await client.create(CREATE);
    const random = Math.random;
    Math.random = () => 0.75; // the time read on after the end: 0.75 of quietAfterEndMs
    const INTERVAL = 250;
    const AFTER_END = 2_000;
    let doneAt = 0;
    try {
      const seen: string[] = [];
      const done = client.waitForCompletion(route.routeId, {
        statusToken: route.statusToken,
        pollIntervalMs: INTERVAL,
        quietAfterEndMs: AFTER_END,
        signal: AbortSignal.timeout(25_000),
        onStatus: (view) => seen.push(view.status),
      });
      await until(() => seen.length === 1, 'the first read');
      for (const status of FORWARD) {
        await move(route.routeId, status);
        await until(() => seen.at(-1) === status, `${status} read`);
      }
      assert.equal((await done).status, 'COMPLETED');
      doneAt = Date.now();
      await new Promise((r) => setTimeout(r, AFTER_END + 3 * INTERVAL));
    } finally {
      Math.random = random;
    }
    const reads = frames.filter((f) => f.url.endsWith(`/api/private-route/${route.routeId}`));
    assert.ok(!frames.some((f) => f.url.endsWith('/events')), 'no event stream');
    assert.equal(new Set(reads.map((f) => f.bytes)).size, 1, `every answer the same size: ${[...new Set(reads.map((f) => f.bytes))]}`);
    const gaps = reads.slice(1).map((f, i) => f.at - reads[i]!.at);
    assert.ok(
      gaps.every((gap) => gap > INTERVAL * 0.5 && gap < INTERVAL * 1.8),
      `one read every ${INTERVAL} ms, whatever the statuses did: ${gaps}`,
    );
    const after = reads.filter((f) => f.at > doneAt);
    assert.ok(after.length >= 4, `the reads went on after the end (${after.length})`);
    const lastAfterEnd = reads.at(-1)!.at - doneAt;
    assert.ok(lastAfterEnd >= AFTER_END * 0.75 - 2 * INTERVAL && lastAfterEnd <= AFTER_END * 0.75 + INTERVAL, `and stopped ${lastAfterEnd} ms after it`);
  });

  test('an onStatus that throws ends the wait with its own error, called once, the stream not reconnected', { timeout: 30_000 }, async () => {
    const recorder = recordingFetch();
    const client = createPrivateRouteClient({ baseUrl, fetch: recorder.fetch });
    const route = await client.create(CREATE);
    const own = new Error('the wallet could not show it');
    let calls = 0;
    const waited = client.waitForCompletion(route.routeId, {
      transport: 'auto',
      statusToken: route.statusToken,
      pollIntervalMs: 60_000,
      signal: AbortSignal.timeout(20_000),
      onStatus: () => {
        calls++;
        throw own;
      },
    });
    await assert.rejects(waited, (error: unknown) => error === own);
    assert.equal(calls, 1);
    assert.equal(recorder.urls.filter((u) => u === `GET /api/private-route/${route.routeId}/events`).length, 1, 'one stream, no reconnection');
  });

  /** A fetch whose first events connection is replaced by `cut(its first chunk, the answer)`; later ones pass through. */
  function cuttingFirstStream(cut: (first: Uint8Array<ArrayBuffer> | undefined, response: Response) => Response) {
    const state = { connections: 0, lastEventIds: [] as (string | null)[] };
    const { fetch } = recordingFetch(async (url, init) => {
      if (!url.endsWith('/events')) return undefined;
      state.lastEventIds.push(new Headers(init?.headers).get('last-event-id'));
      const response = await globalThis.fetch(url, init);
      if (++state.connections > 1 || !response.body) return response;
      const reader = response.body.getReader();
      const first = await reader.read();
      await reader.cancel();
      return cut(first.value, response);
    });
    return { fetch, state };
  }

  /** Creates a route and waits for it through `cutting`; once the stream has reconnected, moves the route to COMPLETED. */
  async function completeAfterReconnection(cutting: ReturnType<typeof cuttingFirstStream>) {
    const client = createPrivateRouteClient({ baseUrl, fetch: cutting.fetch });
    const route = await client.create(CREATE);
    const seen: string[] = [];
    const done = client.waitForCompletion(route.routeId, {
      transport: 'auto',
      statusToken: route.statusToken,
      pollIntervalMs: 60_000,
      signal: AbortSignal.timeout(20_000),
      onStatus: (view) => seen.push(view.status),
    });
    await until(() => cutting.state.connections >= 2, 'the reconnection');
    for (const status of FORWARD) await move(route.routeId, status);
    return { final: await done, seen };
  }

  test('a stream that drops reconnects with Last-Event-ID and reports nothing twice', { timeout: 30_000 }, async () => {
    // The first connection ends after its first event, as a proxy's idle timeout or a restart would end it.
    const dropping = cuttingFirstStream((first, response) => new Response(first, { status: response.status, headers: response.headers }));
    const { final, seen } = await completeAfterReconnection(dropping);
    assert.equal(final.status, 'COMPLETED');
    const { lastEventIds } = dropping.state;
    assert.equal(lastEventIds[0], null);
    assert.match(lastEventIds[1] ?? '', /^\d+$/, 'the reconnection names the last event it saw');
    assert.equal(seen[0], 'AWAITING_DEPOSIT');
    assert.equal(seen.at(-1), 'COMPLETED');
    assert.equal(new Set(seen).size, seen.length, 'no status reported twice');
  });

  test('a stream whose connection breaks mid-read (the API restarted) reconnects instead of rejecting', { timeout: 30_000 }, async () => {
    // The first connection delivers its first bytes, then fails as undici does when the server's socket closes.
    const breaking = cuttingFirstStream((first, response) => {
      const body = new ReadableStream<Uint8Array>({
        start(controller) {
          if (first) controller.enqueue(first);
        },
        pull(controller) {
          controller.error(new TypeError('terminated', { cause: new Error('other side closed') }));
        },
      });
      return new Response(body, { status: response.status, headers: response.headers });
    });
    const { final, seen } = await completeAfterReconnection(breaking);
    assert.equal(final.status, 'COMPLETED');
    assert.deepEqual(seen, ['AWAITING_DEPOSIT', ...FORWARD]);
  });

  test('polling takes over when the events endpoint answers 404', { timeout: 30_000 }, async () => {
    const noEvents = recordingFetch((url) =>
      url.endsWith('/events') ? Response.json({ success: false, error: 'no such endpoint', code: 'UNKNOWN_ENDPOINT' }, { status: 404 }) : undefined,
    );
    const client = createPrivateRouteClient({ baseUrl, fetch: noEvents.fetch });
    const route = await client.create(CREATE);
    const seen: string[] = [];
    const done = client.waitForCompletion(route.routeId, {
      transport: 'auto',
      pollIntervalMs: 50,
      signal: AbortSignal.timeout(20_000),
      onStatus: (view) => seen.push(view.status),
    });
    await until(() => seen.length === 1, 'the first poll');
    for (const status of FORWARD) await move(route.routeId, status);
    const final: PublicTransferView = await done;
    assert.equal(final.status, 'COMPLETED');
    assert.deepEqual(Object.keys(final).sort(), ['error', 'needsAttention', 'routeId', 'status'], 'without the statusToken: the public view');
    // Without the token the view folds the pool phase into BRIDGING_IN and moves only as exit epochs begin (1 s here).
    assert.equal(seen[0], 'AWAITING_DEPOSIT');
    assert.equal(seen.at(-1), 'COMPLETED');
    assert.ok(
      seen.every((s) => ['AWAITING_DEPOSIT', 'BRIDGING_IN', 'COMPLETED'].includes(s)),
      `no status of the pool phase: ${seen}`,
    );
    assert.ok(noEvents.urls.filter((url) => url === `GET /api/private-route/${route.routeId}`).length >= 2, 'it polled');
  });

  test('polling takes over when a proxy buffers the stream (nothing arrives in firstEventTimeoutMs)', { timeout: 30_000 }, async () => {
    const buffering = recordingFetch((url, init) => {
      if (!url.endsWith('/events')) return undefined;
      // Headers, then silence: what a proxy that buffers the whole response until it ends looks like.
      const body = new ReadableStream<Uint8Array>({
        start(controller) {
          init?.signal?.addEventListener('abort', () => controller.error(init.signal?.reason));
        },
      });
      return new Response(body, { status: 200, headers: { 'content-type': 'text/event-stream' } });
    });
    const client = createPrivateRouteClient({ baseUrl, fetch: buffering.fetch });
    const route = await client.create(CREATE);
    const seen: string[] = [];
    const done = client.waitForCompletion(route.routeId, {
      transport: 'auto',
      statusToken: route.statusToken,
      firstEventTimeoutMs: 300,
      pollIntervalMs: 50,
      signal: AbortSignal.timeout(20_000),
      onStatus: (view) => seen.push(view.status),
    });
    await until(() => seen.length === 1, 'the first poll');
    await move(route.routeId, 'BRIDGING_IN');
    await move(route.routeId, 'COMPLETED');
    assert.equal((await done).status, 'COMPLETED');
    assert.equal(buffering.urls.filter((url) => url.endsWith('/events')).length, 1, 'one stream attempt, then polling');
    assert.ok(buffering.urls.includes(`GET /api/private-route/${route.routeId}`));
  });

  test("a FAILED transfer rejects with PrivateRouteFailedError carrying the route's error", { timeout: 30_000 }, async () => {
    const client = createPrivateRouteClient({ baseUrl });
    for (const transport of ['quiet', 'auto', 'poll'] as const) {
      const route = await client.create(CREATE);
      // The outcome is taken at once: the wait may end while the moves below are still being awaited.
      const outcome = client
        .waitForCompletion(route.routeId, {
          statusToken: route.statusToken,
          transport,
          pollIntervalMs: 50,
          signal: AbortSignal.timeout(20_000),
        })
        .then(
          () => assert.fail('resolved for a FAILED transfer'),
          (error: unknown) => error,
        );
      await move(route.routeId, 'BRIDGING_IN');
      await move(route.routeId, 'FAILED', 'the bridge refunded the deposit');
      const failure = await outcome;
      assert.ok(failure instanceof PrivateRouteFailedError, `${transport}: ${String(failure)}`);
      assert.equal(failure.routeId, route.routeId);
      assert.equal(failure.reason, 'the bridge refunded the deposit');
      assert.equal(failure.transfer.status, 'FAILED');
    }
  });

  test("errors carry the API's code, HTTP status and message; no answer is a network error", { timeout: 20_000 }, async () => {
    const client = createPrivateRouteClient({ baseUrl });
    const rejection = async (promise: Promise<unknown>) =>
      promise.then(
        () => assert.fail('resolved'),
        (error: unknown) => error,
      );

    const badAmount = await rejection(client.quote({ ...REQUEST, amount: '1.2.3' }));
    assert.ok(badAmount instanceof PrivateRouteApiError, String(badAmount));
    assert.equal(badAmount.code, 'INVALID_AMOUNT');
    assert.equal(badAmount.status, 400);
    assert.match(badAmount.message, /amount/);
    assert.equal(badAmount.isRetryable, false);

    const unknown = await rejection(client.get('rt_00000000000000000000000000000000'));
    assert.ok(unknown instanceof PrivateRouteApiError);
    assert.equal(unknown.status, 404);
    assert.equal(unknown.code, 'UNKNOWN_ROUTE');

    const route = await client.create(CREATE);
    const wrongToken = await rejection(client.waitForCompletion(route.routeId, { statusToken: `st_${'A'.repeat(43)}`, signal: AbortSignal.timeout(10_000) }));
    assert.ok(wrongToken instanceof PrivateRouteApiError, String(wrongToken));
    assert.equal(wrongToken.status, 401);
    assert.equal(wrongToken.code, 'STATUS_TOKEN_MISMATCH');

    const [closedPort] = (await freePorts(1)) as [number];
    const offline = createPrivateRouteClient({ baseUrl: `http://127.0.0.1:${closedPort}`, createAttempts: 2 });
    const network = await rejection(offline.create(CREATE));
    assert.ok(network instanceof PrivateRouteNetworkError, String(network));
    assert.equal(network.isRetryable, true);
  });

  test('abort: the signal ends waitForCompletion (stream and polling) with its own reason', { timeout: 20_000 }, async () => {
    const client: PrivateRouteClient = createPrivateRouteClient({ baseUrl });
    const route = await client.create(CREATE);
    for (const transport of ['quiet', 'auto', 'poll'] as const) {
      const controller = new AbortController();
      const started = Date.now();
      const done = client.waitForCompletion(route.routeId, { statusToken: route.statusToken, transport, pollIntervalMs: 50, signal: controller.signal });
      setTimeout(() => controller.abort(), 300);
      const error = await done.then(
        () => assert.fail('resolved'),
        (reason: unknown) => reason,
      );
      assert.ok(error instanceof DOMException && error.name === 'AbortError', `${transport}: ${String(error)}`);
      assert.ok(Date.now() - started < 5_000, 'promptly');
    }
    const aborted = await client.quote(REQUEST, { signal: AbortSignal.abort() }).then(
      () => assert.fail('resolved'),
      (reason: unknown) => reason,
    );
    assert.ok(aborted instanceof DOMException && aborted.name === 'AbortError');
  });

  test('verifyWebhook is exported by private-route/client/webhooks', { timeout: 10_000 }, async () => {
    const { verifyWebhook } = await import('private-route/client/webhooks');
    const body = JSON.stringify({ id: 'rt_x:3', status: 'SHIELDED' });
    const headers = signWebhook('whsec_test', 'rt_x:3', body);
    assert.deepEqual(verifyWebhook('whsec_test', headers, body), { ok: true, eventId: 'rt_x:3', timestamp: Number(headers['Webhook-Timestamp']) });
    assert.equal(verifyWebhook('whsec_other', headers, body).ok, false);
  });

  test('private-route/client resolves from inside the repository (package.json exports)', { timeout: 10_000 }, async () => {
    const module = await import('private-route/client');
    assert.equal(module.createPrivateRouteClient, createPrivateRouteClient);
  });
});

describe("an API key's own transfers through the client", { timeout: 120_000 }, () => {
  const keyedClient = async (name: string) => createPrivateRouteClient({ baseUrl, apiKey: (await createApiKey(database.db, name)).key });
  const rejection = async (promise: Promise<unknown>) =>
    promise.then(
      () => assert.fail('resolved'),
      (error: unknown) => {
        assert.ok(error instanceof PrivateRouteApiError, String(error));
        return error;
      },
    );

  test('create({ externalId }) and list() find it; the same externalId again is EXTERNAL_ID_TAKEN; another key finds nothing', {
    timeout: 30_000,
  }, async () => {
    const [client, other] = [await keyedClient('client-external'), await keyedClient('client-external-other')];
    const created = await client.create({ ...CREATE, externalId: 'order-77' });
    assert.equal(created.externalId, 'order-77');
    const found = await client.list({ externalId: 'order-77' });
    assert.deepEqual(
      found.items.map((t) => [t.routeId, t.externalId, t.depositAddress]),
      [[created.routeId, 'order-77', created.depositAddress]],
    );
    assert.equal(found.nextCursor, null);
    assert.deepEqual(await client.list({ depositAddress: created.depositAddress }), found);

    const taken = await rejection(client.create({ ...CREATE, externalId: 'order-77' }));
    assert.equal(taken.status, 409);
    assert.equal(taken.code, 'EXTERNAL_ID_TAKEN');
    assert.ok(taken.message.includes(created.routeId));
    assert.deepEqual(await other.list({ externalId: 'order-77' }), { items: [], nextCursor: null });
    const keyless = await rejection(createPrivateRouteClient({ baseUrl }).list());
    assert.equal(keyless.code, 'API_KEY_REQUIRED');
    assert.equal(keyless.status, 401);
  });

  test('list pages with cursor and limit; listAll walks every page; status filters', { timeout: 30_000 }, async () => {
    const client = await keyedClient('client-pages');
    const created = [];
    for (let i = 0; i < 5; i++) created.push(await client.create(CREATE));
    const first = await client.list({ limit: 2 });
    assert.equal(first.items.length, 2);
    assert.ok(first.nextCursor);
    const second = await client.list({ limit: 2, cursor: first.nextCursor });
    assert.equal(second.items.length, 2);
    assert.ok(second.items.every((t) => !first.items.some((f) => f.routeId === t.routeId)));

    const all = [];
    for await (const transfer of client.listAll({ limit: 2 })) all.push(transfer.routeId);
    assert.deepEqual(all.sort(), created.map((t) => t.routeId).sort());

    await move(created[0]!.routeId, 'BRIDGING_IN');
    const moving = await client.list({ status: 'BRIDGING_IN' });
    assert.deepEqual(
      moving.items.map((t) => t.routeId),
      [created[0]!.routeId],
    );
    const bad = await rejection(client.list({ limit: 1000 }));
    assert.equal(bad.code, 'INVALID_REQUEST');
  });

  test('reissueStatusToken: the new token opens the transfer, the old one no longer does; another key gets 404', { timeout: 30_000 }, async () => {
    const [client, other] = [await keyedClient('client-reissue'), await keyedClient('client-reissue-other')];
    const created = await client.create(CREATE);
    const unknown = await rejection(other.reissueStatusToken(created.routeId));
    assert.equal(unknown.code, 'UNKNOWN_ROUTE');
    const { statusToken } = await client.reissueStatusToken(created.routeId);
    assert.notEqual(statusToken, created.statusToken);
    assert.equal((await client.get(created.routeId, statusToken)).depositAddress, created.depositAddress);
    const refused = await rejection(client.get(created.routeId, created.statusToken));
    assert.equal(refused.code, 'STATUS_TOKEN_MISMATCH');
  });

  test('trackingUrl puts the statusToken in the fragment, which the page reads and no request carries', { timeout: 10_000 }, async () => {
    const client = createPrivateRouteClient({ baseUrl: `${baseUrl}/` });
    const url = client.trackingUrl('rt_0123456789abcdef0123456789abcdef', 'st_abc-_9');
    assert.equal(url, `${baseUrl}/t/rt_0123456789abcdef0123456789abcdef#st_abc-_9`);
    assert.equal(new URL(url).search, '');
    assert.equal(client.trackingUrl('rt_0123456789abcdef0123456789abcdef'), `${baseUrl}/t/rt_0123456789abcdef0123456789abcdef`);
    const page = await fetch(url, { signal: AbortSignal.timeout(5_000) });
    assert.equal(page.status, 200);
    assert.match(page.headers.get('content-type') ?? '', /text\/html/);
  });
});
