/**
 * An API key's own transfers over real Postgres (test/api/harness.ts): the listing page by page, its filters and
 * lookups (externalId, deposit transaction, deposit address), externalId's uniqueness per key, and the reissue of a
 * statusToken (the old one refused at once, an event stream opened with it ended). Another key and a keyless caller
 * find none of them.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { eq, inArray, sql } from 'drizzle-orm';
import { writeStatus } from '../../activities/projection.ts';
import { freePort } from '../../devnet/ports.ts';
import { createAbuseLimits, type AbuseLimitSettings } from '../../src/api/abuseLimits.ts';
import { transfers } from '../../src/db/schema.ts';
import { serveHttp, type HttpServer } from '../../src/observability/http.ts';
import { createApiKey } from '../../src/partners/apiKeys.ts';
import { isExternalIdConflict } from '../../src/transfers/partnerTransfers.ts';
import { recordDepositTransfers } from '../../src/transfers/depositTransferStore.ts';
import { hashStatusToken, type TransferPage } from '../../src/transfers/transferService.ts';
import { type DelaySeeded, publicClockOf } from '../../src/transfers/publicView.ts';
import { call, CREATE_BODY, startHarness, type Harness } from './harness.ts';

let h: Harness;
let app: ReturnType<Harness['api']>;
const servers: HttpServer[] = [];
const LIMITS_OFF: AbuseLimitSettings = { requestsPerMinute: 0, createsPerMinute: 0, maxUnfundedPerClient: 0, publicReadsPerMinute: 0, trustProxyHops: 0 };

before(
  async () => {
    h = await startHarness('api-partner-transfers');
    app = h.api({ abuse: await createAbuseLimits({ db: h.database.db, settings: LIMITS_OFF, logger: h.logger }) });
  },
  { timeout: 120_000 },
);
after(
  async () => {
    await Promise.all(servers.map((server) => server.stop()));
    await h?.close();
  },
  { timeout: 60_000 },
);

interface Created {
  routeId: string;
  statusToken: string;
  depositAddress: string;
  externalId: string | null;
}

const keyHeader = (key: string) => ({ 'X-Api-Key': key });

async function create(key: string | undefined, extra: Record<string, unknown> = {}, headers: Record<string, string> = {}) {
  return call<Created>(app, 'POST', '/api/private-route', { ...CREATE_BODY, ...extra }, { ...(key ? keyHeader(key) : {}), ...headers });
}

async function created(key: string, extra: Record<string, unknown> = {}): Promise<Created> {
  const answer = await create(key, extra);
  assert.equal(answer.status, 200, JSON.stringify(answer.body));
  return answer.body.data!;
}

const list = (query: string, headers: Record<string, string> = {}) => call<TransferPage>(app, 'GET', `/api/private-route${query}`, undefined, headers);

async function listed(key: string, query = ''): Promise<TransferPage> {
  const answer = await list(query, keyHeader(key));
  assert.equal(answer.status, 200, JSON.stringify(answer.body));
  return answer.body.data!;
}

/** Every page of a listing, following nextCursor. */
async function allPages(key: string, query: string): Promise<TransferPage[]> {
  const pages: TransferPage[] = [];
  let cursor: string | null = null;
  do {
    const page: TransferPage = await listed(key, `${query}${cursor ? `&cursor=${cursor}` : ''}`);
    pages.push(page);
    cursor = page.nextCursor;
    assert.ok(pages.length < 50, 'the listing ends');
  } while (cursor);
  return pages;
}

const newKey = async (name: string, limits = {}) => (await createApiKey(h.database.db, name, limits)).key;

describe('GET /api/private-route: an API key lists its own transfers', { timeout: 120_000 }, () => {
  test('page by page, newest first, full views without statusToken; another key sees only its own', async () => {
    const [a, b] = [await newKey('list-a'), await newKey('list-b')];
    const mine: Created[] = [];
    for (let i = 0; i < 23; i++) mine.push(await created(a));
    const theirs = [await created(b), await created(b)];
    // Five of A's created in the same microsecond: the pages still split them by routeId, none twice, none lost.
    const tied = mine.slice(5, 10).map((t) => t.routeId);
    await h.database.db.update(transfers).set({ createdAt: sql`'2026-11-29T10:00:00.000001Z'::timestamptz` }).where(inArray(transfers.routeId, tied));

    const pages = await allPages(a, '?limit=4');
    assert.deepEqual(
      pages.map((p) => p.items.length),
      [4, 4, 4, 4, 4, 3],
    );
    assert.equal(pages.at(-1)!.nextCursor, null);
    const items = pages.flatMap((p) => p.items);
    assert.deepEqual(items.map((t) => t.routeId).sort(), mine.map((t) => t.routeId).sort(), 'each of A’s transfers exactly once');
    const order = items.map((t) => [Date.parse(t.createdAt), t.routeId] as const);
    for (let i = 1; i < order.length; i++) {
      const [[t0, r0], [t1, r1]] = [order[i - 1]!, order[i]!];
      assert.ok(t0 > t1 || (t0 === t1 && r0 > r1), `newest first at ${i}`);
    }
    const first = items.find((t) => t.routeId === mine[0]!.routeId)!;
    assert.equal(first.depositAddress, mine[0]!.depositAddress);
    assert.equal(first.userDestinationAddress, CREATE_BODY.userDestinationAddress);
    assert.equal(first.statusHistory[0]?.status, 'AWAITING_DEPOSIT');
    assert.ok(
      items.every((t) => !('statusToken' in t)),
      'never a statusToken',
    );
    // The same as the token holder's GET answers.
    const held = await call(app, 'GET', `/api/private-route/${mine[0]!.routeId}`, undefined, { authorization: `Bearer ${mine[0]!.statusToken}` });
    assert.deepEqual(first, held.body.data);

    // Default 20 a page; B lists only its two.
    const page = await listed(a);
    assert.equal(page.items.length, 20);
    assert.ok(page.nextCursor);
    assert.deepEqual((await listed(b)).items.map((t) => t.routeId).sort(), theirs.map((t) => t.routeId).sort());
    // A's cursor in B's hands goes on among B's transfers only.
    assert.ok((await listed(b, `?cursor=${page.nextCursor}`)).items.every((t) => theirs.some((own) => own.routeId === t.routeId)));
  });

  test('without a key 401 API_KEY_REQUIRED, with an unknown one 401 INVALID_API_KEY; bad parameters 400', async () => {
    const keyless = await list('');
    assert.equal(keyless.status, 401);
    assert.equal(keyless.body.code, 'API_KEY_REQUIRED');
    assert.match(keyless.body.error!, /X-Api-Key/);
    const unknown = await list('', keyHeader(`prk_${'x'.repeat(43)}`));
    assert.equal(unknown.status, 401);
    assert.equal(unknown.body.code, 'INVALID_API_KEY');

    const a = await newKey('list-params');
    const bad: Array<[string, string, RegExp]> = [
      ['?status=DONE', 'INVALID_REQUEST', /status must be one of AWAITING_DEPOSIT, .*FAILED/],
      ['?limit=0', 'INVALID_REQUEST', /limit must be a whole number from 1 to 100/],
      ['?limit=101', 'INVALID_REQUEST', /limit must be a whole number from 1 to 100/],
      ['?limit=ten', 'INVALID_REQUEST', /limit/],
      ['?depositTxHash=0x1234', 'INVALID_REQUEST', /depositTxHash must be a transaction hash/],
      ['?depositAddress=nope', 'INVALID_REQUEST', /depositAddress must be an address/],
      [`?externalId=${'x'.repeat(129)}`, 'INVALID_REQUEST', /externalId must be 1 to 128 printable ASCII/],
      ['?cursor=bm90LWEtY3Vyc29y', 'INVALID_CURSOR', /cursor is not a nextCursor/],
      [`?cursor=${Buffer.from(`v1|2026-02-30T11:25:00.123456Z|rt_${'a'.repeat(32)}`).toString('base64url')}`, 'INVALID_CURSOR', /cursor is not a nextCursor/],
      [`?cursor=${'a'.repeat(300)}`, 'INVALID_CURSOR', /cursor is not a nextCursor/],
    ];
    for (const [query, code, error] of bad) {
      const answer = await list(query, keyHeader(a));
      assert.equal(answer.status, 400, query);
      assert.equal(answer.body.code, code, query);
      assert.match(answer.body.error!, error, query);
    }
    // A well-formed cursor from far in the future is just a position: the key's transfers before it.
    const future = Buffer.from(`v1|2999-01-01T00:00:00.000000Z|rt_${'f'.repeat(32)}`).toString('base64url');
    assert.equal((await list(`?cursor=${future}`, keyHeader(a))).status, 200);
  });

  test('status filters among the key’s transfers', async () => {
    const a = await newKey('list-status');
    const [waiting, moving] = [await created(a), await created(a)];
    await writeStatus({ db: h.database.db }, { routeId: moving.routeId, status: 'BRIDGING_IN', seq: 1 });
    assert.deepEqual(
      (await listed(a, '?status=BRIDGING_IN')).items.map((t) => t.routeId),
      [moving.routeId],
    );
    assert.deepEqual(
      (await listed(a, '?status=AWAITING_DEPOSIT')).items.map((t) => t.routeId),
      [waiting.routeId],
    );
    assert.deepEqual((await listed(a, '?status=COMPLETED')).items, []);
  });

  test('finds a transfer by deposit transaction (its funding or any transfer into it) and by deposit address, for its key only', async () => {
    const [a, b] = [await newKey('lookup-a'), await newKey('lookup-b')];
    const [funded, strayed, other] = [await created(a), await created(a), await created(a)];
    const fundingHash = `0x${'ab'.repeat(32)}`;
    const strayHash = `0x${'cd'.repeat(32)}`;
    await h.database.db.update(transfers).set({ depositTxHash: fundingHash }).where(eq(transfers.routeId, funded.routeId));
    await recordDepositTransfers(h.database.db, strayed.routeId, [
      { from: `0x${'1'.repeat(40)}`, value: 5n, blockNumber: 7, logIndex: 0, txHash: strayHash as `0x${string}` },
    ]);

    const ids = async (key: string, query: string) => (await listed(key, query)).items.map((t) => t.routeId);
    assert.deepEqual(await ids(a, `?depositTxHash=${fundingHash}`), [funded.routeId]);
    assert.deepEqual(await ids(a, `?depositTxHash=${strayHash.toUpperCase().replace('0X', '0x')}`), [strayed.routeId], 'any case');
    assert.deepEqual(await ids(a, `?depositAddress=${other.depositAddress.toLowerCase()}`), [other.routeId], 'any case');
    assert.deepEqual(await ids(a, `?depositTxHash=0x${'ef'.repeat(32)}`), []);
    // B asks about A's transfers: the same empty page as for transfers that do not exist.
    assert.deepEqual(await listed(b, `?depositTxHash=${fundingHash}`), { items: [], nextCursor: null });
    assert.deepEqual(await listed(b, `?depositAddress=${other.depositAddress}`), { items: [], nextCursor: null });
    // Filters combine.
    assert.deepEqual(await ids(a, `?depositTxHash=${fundingHash}&status=COMPLETED`), []);
  });
});

describe('externalId on create', { timeout: 60_000 }, () => {
  test('is shown in the answer and the full view, found by its key, and unique per key (409 naming the route)', async () => {
    const [a, b] = [await newKey('external-a'), await newKey('external-b')];
    const first = await created(a, { externalId: 'order 2291/a' });
    assert.equal(first.externalId, 'order 2291/a');
    const view = await call<{ externalId: string }>(app, 'GET', `/api/private-route/${first.routeId}`, undefined, { 'x-status-token': first.statusToken });
    assert.equal(view.body.data!.externalId, 'order 2291/a');
    assert.equal((await created(a)).externalId, null);

    const rows = async () => (await h.database.db.select({ n: sql<number>`count(*)::int` }).from(transfers))[0]!.n;
    const before = await rows();
    const again = await create(a, { externalId: 'order 2291/a' });
    assert.equal(again.status, 409);
    assert.equal(again.body.code, 'EXTERNAL_ID_TAKEN');
    assert.ok(again.body.error!.includes(first.routeId), again.body.error);
    assert.equal(await rows(), before, 'no second transfer');
    // Another key may use the same reference for its own transfer.
    const theirs = await created(b, { externalId: 'order 2291/a' });
    assert.notEqual(theirs.routeId, first.routeId);

    const found = await listed(a, `?externalId=${encodeURIComponent('order 2291/a')}`);
    assert.deepEqual(
      found.items.map((t) => t.routeId),
      [first.routeId],
    );
    assert.deepEqual(
      (await listed(b, `?externalId=${encodeURIComponent('order 2291/a')}`)).items.map((t) => t.routeId),
      [theirs.routeId],
    );
    assert.deepEqual((await listed(b, '?externalId=only-a-has-it')).items, []);
  });

  test('two creates racing with one externalId: one transfer, the other 409', async () => {
    const a = await newKey('external-race');
    const answers = await Promise.all([create(a, { externalId: 'race-1' }), create(a, { externalId: 'race-1' })]);
    assert.deepEqual(answers.map((r) => r.status).sort(), [200, 409]);
    const winner = answers.find((r) => r.status === 200)!.body.data!.routeId;
    assert.ok(answers.find((r) => r.status === 409)!.body.error!.includes(winner));
    assert.equal((await listed(a, '?externalId=race-1')).items.length, 1);
    // The race's loser may pass the check before the insert: the unique index refuses it, recognised as this conflict.
    const [row] = await h.database.db.select().from(transfers).where(eq(transfers.routeId, winner));
    const duplicate = await h.database.db
      .insert(transfers)
      .values({ ...row!, routeId: `rt_${'f'.repeat(32)}`, accountIndex: row!.accountIndex + 1_000_000, depositAddress: `0x${'e'.repeat(40)}` })
      .then(
        () => assert.fail('a second row with the same externalId was stored'),
        (error: unknown) => error,
      );
    assert.ok(isExternalIdConflict(duplicate), String(duplicate));
    assert.equal(isExternalIdConflict(new Error('another failure')), false);
  });

  test('an Idempotency-Key replay answers the first create again; without a key 400; malformed 400', async () => {
    const a = await newKey('external-replay');
    const idem = { 'Idempotency-Key': crypto.randomUUID() };
    const first = await create(a, { externalId: 'replayed' }, idem);
    assert.equal(first.status, 200);
    const replay = await create(a, { externalId: 'replayed' }, idem);
    assert.equal(replay.status, 200);
    assert.equal(replay.headers.get('idempotent-replayed'), 'true');
    assert.deepEqual(replay.body, first.body);
    const fresh = await create(a, { externalId: 'replayed' }, { 'Idempotency-Key': crypto.randomUUID() });
    assert.equal(fresh.body.code, 'EXTERNAL_ID_TAKEN');

    const keyless = await create(undefined, { externalId: 'no-key' });
    assert.equal(keyless.status, 400);
    assert.equal(keyless.body.code, 'EXTERNAL_ID_NOT_ACCEPTED');
    for (const externalId of ['', 'x'.repeat(129), 'naïve', 'tab\there', 7]) {
      const bad = await create(a, { externalId });
      assert.equal(bad.status, 400, JSON.stringify(externalId));
      assert.equal(bad.body.code, 'INVALID_REQUEST');
      assert.match(bad.body.error!, /externalId/);
    }
  });
});

describe('POST /api/private-route/{routeId}/status-token', { timeout: 60_000 }, () => {
  const reissue = (routeId: string, headers: Record<string, string> = {}) =>
    call<{ routeId: string; statusToken: string }>(app, 'POST', `/api/private-route/${routeId}/status-token`, undefined, headers);
  const read = (routeId: string, token: string) => call(app, 'GET', `/api/private-route/${routeId}`, undefined, { authorization: `Bearer ${token}` });

  test("the creator's key gets a new statusToken; the old one is refused at once; the reissue is logged without the token", async () => {
    const a = await newKey('reissue-a');
    const transfer = await created(a);
    const answer = await reissue(transfer.routeId, keyHeader(a));
    assert.equal(answer.status, 200, JSON.stringify(answer.body));
    const { statusToken } = answer.body.data!;
    assert.equal(answer.body.data!.routeId, transfer.routeId);
    assert.match(statusToken, /^st_[A-Za-z0-9_-]{43}$/);
    assert.notEqual(statusToken, transfer.statusToken);

    const old = await read(transfer.routeId, transfer.statusToken);
    assert.equal(old.status, 401);
    assert.equal(old.body.code, 'STATUS_TOKEN_MISMATCH');
    const fresh = await read(transfer.routeId, statusToken);
    assert.equal(fresh.status, 200);
    assert.equal((fresh.body.data as { depositAddress: string }).depositAddress, transfer.depositAddress);

    // The public view's own delays keep their draw: they come from the first token's hash, kept as the seed.
    const [row] = await h.database.db
      .select({ seed: transfers.publicDelaySeed, hash: transfers.statusTokenHash })
      .from(transfers)
      .where(eq(transfers.routeId, transfer.routeId));
    assert.equal(row!.seed, hashStatusToken(transfer.statusToken));
    assert.notEqual(row!.hash, row!.seed);
    const clock = (r: DelaySeeded) => publicClockOf(r, { epochSeconds: 60, endDelayMaxSeconds: 3600, holdSeconds: 0 });
    assert.deepEqual(clock({ statusTokenHash: row!.hash, publicDelaySeed: row!.seed }), clock({ statusTokenHash: hashStatusToken(transfer.statusToken) }));
    assert.equal((await reissue(transfer.routeId, keyHeader(a))).status, 200);
    const [again] = await h.database.db.select({ seed: transfers.publicDelaySeed }).from(transfers).where(eq(transfers.routeId, transfer.routeId));
    assert.equal(again!.seed, row!.seed, 'a second reissue keeps the first seed');

    const logged = h.logLines.filter((line) => line.includes('statusToken reissued'));
    assert.ok(logged.some((line) => line.includes(transfer.routeId)));
    assert.ok(
      h.logLines.every((line) => !line.includes(statusToken)),
      'the token is never logged',
    );
  });

  test('another key, an unknown route and a malformed id: 404 UNKNOWN_ROUTE alike; without a key 401; the token stays', async () => {
    const [a, b] = [await newKey('reissue-owner'), await newKey('reissue-other')];
    const transfer = await created(a);
    for (const [routeId, headers] of [
      [transfer.routeId, keyHeader(b)],
      [`rt_${'0'.repeat(32)}`, keyHeader(a)],
      ['rt_nope', keyHeader(a)],
    ] as const) {
      const answer = await reissue(routeId, headers);
      assert.equal(answer.status, 404, routeId);
      assert.equal(answer.body.code, 'UNKNOWN_ROUTE');
    }
    const keyless = await reissue(transfer.routeId);
    assert.equal(keyless.status, 401);
    assert.equal(keyless.body.code, 'API_KEY_REQUIRED');
    assert.equal((await read(transfer.routeId, transfer.statusToken)).status, 200, 'nothing was replaced');
  });

  test('an event stream opened with the old token ends after the reissue', async () => {
    const a = await newKey('reissue-stream');
    const transfer = await created(a);
    const server = await serveHttp(
      h.api({ abuse: await createAbuseLimits({ db: h.database.db, settings: LIMITS_OFF, logger: h.logger }), events: { heartbeatMs: 100 } }),
      await freePort(),
      '127.0.0.1',
    );
    servers.push(server);
    const response = await fetch(`${server.url}/api/private-route/${transfer.routeId}/events`, {
      headers: { authorization: `Bearer ${transfer.statusToken}` },
      signal: AbortSignal.timeout(20_000),
    });
    assert.equal(response.status, 200);
    const reader = response.body!.getReader();
    const decoder = new TextDecoder();
    let text = '';
    while (!text.includes('event: status')) text += decoder.decode((await reader.read()).value);
    assert.equal((await reissue(transfer.routeId, keyHeader(a))).status, 200);
    const started = Date.now();
    for (;;) {
      const chunk = await reader.read();
      if (chunk.done) break;
      assert.ok(Date.now() - started < 10_000, 'the stream ends within a few heartbeats');
    }
  });
});

describe('rate limits', { timeout: 60_000 }, () => {
  test("the listing counts against the key's requests per minute", async () => {
    const limited = h.api({
      abuse: await createAbuseLimits({ db: h.database.db, settings: { ...LIMITS_OFF, requestsPerMinute: 100 }, logger: h.logger }),
    });
    const a = await newKey('list-limited', { requestsPerMinute: 2 });
    // Five at once: two a minute, so even across a window's end at least one is refused.
    const answers = [];
    for (let i = 0; i < 5; i++) answers.push(await call(limited, 'GET', '/api/private-route', undefined, keyHeader(a)));
    assert.equal(answers[0]!.status, 200);
    const refused = answers.find((r) => r.status === 429);
    assert.ok(refused, JSON.stringify(answers.map((r) => r.status)));
    assert.equal(refused.body.code, 'RATE_LIMITED');
    assert.ok(Number(refused.headers.get('retry-after')) >= 1);
    assert.equal(refused.headers.get('ratelimit-limit'), '2');
  });
});
