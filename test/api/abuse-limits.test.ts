/**
 * Abuse limits (src/api/abuseLimits.ts) over a real Postgres: the API in process (app.request) with a fake quote
 * and transfer service, so no chain, bridge or Temporal is needed. The fake create writes a real transfers row
 * (with the client hash the API hands it), which is what the unfunded cap counts.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { eq, sql } from 'drizzle-orm';
import { createApi } from '../../src/api/app.ts';
import { addressBucket, createAbuseLimits, type AbuseLimitSettings } from '../../src/api/abuseLimits.ts';
import { connectDatabase, type DatabaseHandle } from '../../src/db/client.ts';
import { rateLimitCounters, transfers } from '../../src/db/schema.ts';
import { startTestPostgres, type TestPostgres, transferRow } from '../support/database.ts';
import { createLogger } from '../../src/logger.ts';
import { writeStatus } from '../../activities/projection.ts';
import { createApiKey, revokeApiKey } from '../../src/partners/apiKeys.ts';
import type { QuoteService } from '../../src/quote/quoteService.ts';
import { withQuoteCache } from '../../src/quote/quoteCache.ts';
import type { TransferService } from '../../src/transfers/transferService.ts';

let postgres: TestPostgres;
let database: DatabaseHandle;
const logger = createLogger({ level: 'error' });

const QUOTE = {
  symbol: 'USDC',
  destSymbol: 'USDC',
  sourceChainId: 1,
  destChainId: 2,
  hubChainId: 3,
  amount: '10',
  quotedOutputAmount: '9',
  feeAmount: '1',
  bridgeFeeAmount: '0',
  privacyFeeAmount: '0',
  amountInUsd: 10,
  quotedOutputUsd: 9,
  feeUsd: 1,
  bridgeFeeUsd: 0,
  privacyFeeUsd: 0,
  etaSeconds: 60,
  route: ['relay'],
};
const QUOTE_BODY = { sourceChainId: 1, destChainId: 2, amount: '10' };
const CREATE_BODY = { ...QUOTE_BODY, userDestinationAddress: '0x000000000000000000000000000000000000dEaD' };

const quotes = { quote: async () => ({ quote: QUOTE }), chains: async () => [], tokens: async () => [] } as unknown as QuoteService;
let nextIndex = 1;
const createdRoutes: string[] = [];
const fakeTransfers = {
  async create(_request: unknown, options: { clientHash?: string } = {}) {
    const row = transferRow(nextIndex++, { ...QUOTE, clientHash: options.clientHash ?? null });
    await database.db.insert(transfers).values(row);
    const { routeId } = row;
    createdRoutes.push(routeId);
    return { ...QUOTE, routeId, status: 'AWAITING_DEPOSIT' };
  },
  // Any read: the public view without a token, the full one with any token (the limits are what is tested here).
  async read(routeId: string, token: string | undefined) {
    const transfer = { routeId, status: 'AWAITING_DEPOSIT', error: null, needsAttention: false };
    return token === undefined ? { access: 'public', transfer, seq: 0 } : { access: 'full', transfer };
  },
} as unknown as TransferService;

const DEFAULTS: AbuseLimitSettings = { requestsPerMinute: 60, createsPerMinute: 10, maxUnfundedPerClient: 20, publicReadsPerMinute: 30, trustProxyHops: 0 };

async function api(settings: Partial<AbuseLimitSettings> = {}) {
  const abuse = await createAbuseLimits({ db: database.db, settings: { ...DEFAULTS, ...settings }, logger });
  return createApi({ quotes, transfers: fakeTransfers, logger, abuse });
}

/** One request as if from `ip` (the socket @hono/node-server's conninfo reads), optionally with headers. */
async function call(app: Awaited<ReturnType<typeof api>>, route: 'quote' | 'create', ip: string, headers: Record<string, string> = {}) {
  const response = await app.request(
    route === 'quote' ? '/api/private-route/quote' : '/api/private-route',
    { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(route === 'quote' ? QUOTE_BODY : CREATE_BODY) },
    { incoming: { socket: { remoteAddress: ip, remotePort: 40000, remoteFamily: ip.includes(':') ? 'IPv6' : 'IPv4' } } },
  );
  return {
    status: response.status,
    retryAfter: response.headers.get('retry-after'),
    body: (await response.json()) as { success: boolean; error?: string; code?: string },
  };
}

/** Windows are whole minutes: a burst starts at least 3 s before the next one so it stays inside one window. */
async function awayFromWindowEdge(): Promise<void> {
  const intoMinute = Date.now() % 60_000;
  if (intoMinute > 57_000) await new Promise((resolve) => setTimeout(resolve, 60_000 - intoMinute + 200));
}

before(async () => {
  postgres = await startTestPostgres('abuse-limits-test');
  database = connectDatabase(postgres.url);
  // A reused TEST_DATABASE_URL may hold earlier runs' rows: start from clean counters and our own account indexes.
  await database.db.delete(rateLimitCounters);
  const [max] = await database.db.execute<{ max: string | null }>(sql`select max(account_index) as max from transfers`);
  nextIndex = Number(max?.max ?? 0) + 1_000_000;
});

after(async () => {
  await database?.close();
  await postgres?.stop();
});

describe('abuse limits: per-client rate limits in Postgres, the unfunded cap, partner API keys', { timeout: 120_000 }, () => {
  test('a burst from one address meets 429 with Retry-After; another address and a partner key are still served', async () => {
    const app = await api({ requestsPerMinute: 5 });
    const { key } = await createApiKey(database.db, 'burst-partner');
    await awayFromWindowEdge();
    for (let i = 0; i < 5; i++) assert.equal((await call(app, 'quote', '198.51.100.1')).status, 200, `quote ${i + 1} of 5 is served`);
    const refused = await call(app, 'quote', '198.51.100.1');
    assert.equal(refused.status, 429);
    assert.equal(refused.body.success, false);
    assert.match(refused.body.error!, /at most 5 quotes and creates per minute for this client address; retry in \d+ s/);
    assert.equal(refused.body.code, 'RATE_LIMITED');
    const retryAfter = Number(refused.retryAfter);
    assert.ok(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 60, `Retry-After ${refused.retryAfter} is whole seconds within the window`);
    // Creates count against the same limit.
    assert.equal((await call(app, 'create', '198.51.100.1')).status, 429);

    assert.equal((await call(app, 'quote', '198.51.100.2')).status, 200, 'another address has its own counter');
    assert.equal((await call(app, 'quote', '198.51.100.1', { 'X-Api-Key': key })).status, 200, 'a partner key from the same address is counted as the partner');
  });

  test('two API instances over one database share the counters; no raw address is stored', async () => {
    const [first, second] = [await api({ requestsPerMinute: 4 }), await api({ requestsPerMinute: 4 })];
    await database.db.insert(rateLimitCounters).values({ bucket: 'request:old-window', windowStart: new Date(Date.now() - 600_000), hits: 3 });
    await awayFromWindowEdge();
    for (const app of [first, second, first, second]) assert.equal((await call(app, 'quote', '198.51.100.3')).status, 200);
    assert.equal((await call(first, 'quote', '198.51.100.3')).status, 429);
    assert.equal((await call(second, 'quote', '198.51.100.3')).status, 429);
    let buckets = await database.db.select({ bucket: rateLimitCounters.bucket }).from(rateLimitCounters);
    assert.ok(buckets.length > 0);
    // Each instance deletes windows older than two minutes on its first count (asynchronously).
    for (let i = 0; i < 50 && buckets.some((b) => b.bucket === 'request:old-window'); i++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      buckets = await database.db.select({ bucket: rateLimitCounters.bucket }).from(rateLimitCounters);
    }
    assert.ok(!buckets.some((b) => b.bucket === 'request:old-window'), 'old windows are deleted');
    assert.ok(
      buckets.every((b) => /^(request|create|public-read):[A-Za-z0-9_-]{32}$/.test(b.bucket) && !b.bucket.includes('198.51')),
      'buckets hold HMACs only',
    );
  });

  test('reads by routeId without a statusToken are limited per client; the token holder is not', async () => {
    const app = await api({ publicReadsPerMinute: 3 });
    const routeId = `rt_${'ab'.repeat(16)}`;
    const read = (ip: string, headers: Record<string, string> = {}) =>
      app.request(`/api/private-route/${routeId}`, { headers }, { incoming: { socket: { remoteAddress: ip, remotePort: 40000, remoteFamily: 'IPv4' } } });
    await awayFromWindowEdge();
    for (let i = 0; i < 3; i++) assert.equal((await read('198.51.100.7')).status, 200, `public read ${i + 1} of 3`);
    const refused = await read('198.51.100.7');
    assert.equal(refused.status, 429);
    const body = (await refused.json()) as { code: string; error: string };
    assert.equal(body.code, 'RATE_LIMITED');
    assert.match(body.error, /at most 3 reads without a statusToken per minute for this client address; send the statusToken/);
    assert.ok(Number(refused.headers.get('retry-after')) >= 1);
    assert.equal((await read('198.51.100.7', { authorization: 'Bearer st_holder' })).status, 200, 'the statusToken holder reads on');
    assert.equal((await read('198.51.100.7', { 'x-status-token': 'st_holder' })).status, 200);
    assert.equal((await read('198.51.100.8')).status, 200, 'another address has its own counter');
    const events = await app.request(
      `/api/private-route/${routeId}/events`,
      {},
      {
        incoming: { socket: { remoteAddress: '198.51.100.7', remotePort: 40000, remoteFamily: 'IPv4' } },
      },
    );
    assert.equal(events.status, 429, 'the public event stream counts against the same limit');
  });

  test('the create limit is lower than the quote limit', async () => {
    const app = await api({ requestsPerMinute: 20, createsPerMinute: 2 });
    await awayFromWindowEdge();
    assert.equal((await call(app, 'create', '198.51.100.4')).status, 200);
    assert.equal((await call(app, 'create', '198.51.100.4')).status, 200);
    const refused = await call(app, 'create', '198.51.100.4');
    assert.equal(refused.status, 429);
    assert.match(refused.body.error!, /create limit reached: at most 2 transfers created per minute/);
    assert.equal(refused.body.code, 'RATE_LIMITED');
    assert.ok(Number(refused.retryAfter) >= 1);
    assert.equal((await call(app, 'quote', '198.51.100.4')).status, 200, 'quotes go on under the request limit');
  });

  test('creates beyond the unfunded cap answer 429 until one is funded', async () => {
    const app = await api({ maxUnfundedPerClient: 2 });
    await awayFromWindowEdge();
    const before = createdRoutes.length;
    assert.equal((await call(app, 'create', '198.51.100.5')).status, 200);
    assert.equal((await call(app, 'create', '198.51.100.5')).status, 200);
    const refused = await call(app, 'create', '198.51.100.5');
    assert.equal(refused.status, 429);
    assert.match(refused.body.error!, /has 2 awaiting their deposit \(at most 2\); fund them or wait until one expires/);
    assert.equal(refused.body.code, 'TOO_MANY_UNFUNDED_TRANSFERS');
    // Retry-After: until the first unfunded transfer's deposit deadline (10 minutes in the fake).
    assert.ok(Number(refused.retryAfter) > 500 && Number(refused.retryAfter) <= 600, `Retry-After ${refused.retryAfter}`);
    assert.equal((await call(app, 'create', '198.51.100.6')).status, 200, 'another address is not capped');

    // The deposit arrives: the projection moves the transfer on and forgets its client.
    const funded = createdRoutes[before]!;
    await writeStatus({ db: database.db }, { routeId: funded, status: 'BRIDGING_IN', seq: 5 });
    const [row] = await database.db.select({ clientHash: transfers.clientHash }).from(transfers).where(eq(transfers.routeId, funded));
    assert.equal(row?.clientHash, null);
    assert.equal((await call(app, 'create', '198.51.100.5')).status, 200, 'one slot freed');
  });

  test('an unknown, malformed or revoked X-Api-Key answers 401; a partner key has its own limits', async () => {
    const app = await api();
    for (const key of [`prk_${'A'.repeat(43)}`, 'not-a-key']) {
      const answer = await call(app, 'quote', '198.51.100.7', { 'X-Api-Key': key });
      assert.equal(answer.status, 401);
      assert.deepEqual(answer.body, {
        success: false,
        error: 'unknown or revoked API key (X-Api-Key): ask the operator for a valid key, or send none to be limited by address',
        code: 'INVALID_API_KEY',
      });
    }
    const { key } = await createApiKey(database.db, 'small-partner', { requestsPerMinute: 2 });
    await awayFromWindowEdge();
    assert.equal((await call(app, 'quote', '198.51.100.7', { 'X-Api-Key': key })).status, 200);
    assert.equal((await call(app, 'quote', '198.51.100.8', { 'X-Api-Key': key })).status, 200, 'the partner is one client whatever its address');
    const refused = await call(app, 'quote', '198.51.100.9', { 'X-Api-Key': key });
    assert.equal(refused.status, 429);
    assert.match(refused.body.error!, /at most 2 quotes and creates per minute for this API key \(small-partner\)/);

    assert.equal(await revokeApiKey(database.db, 'small-partner'), true);
    assert.equal((await call(app, 'quote', '198.51.100.7', { 'X-Api-Key': key })).status, 401, 'a revoked key is refused, not limited by address');
    assert.equal(await revokeApiKey(database.db, 'small-partner'), false);
  });

  test('RATE_LIMIT_PER_MINUTE=0 turns every limit off', async () => {
    const app = await api({ requestsPerMinute: 0, createsPerMinute: 1, maxUnfundedPerClient: 1 });
    const counted = await database.db.select({ n: sql<number>`count(*)::int` }).from(rateLimitCounters);
    for (let i = 0; i < 4; i++) assert.equal((await call(app, 'create', '198.51.100.10')).status, 200);
    for (let i = 0; i < 4; i++) assert.equal((await call(app, 'quote', '198.51.100.10')).status, 200);
    const after = await database.db.select({ n: sql<number>`count(*)::int` }).from(rateLimitCounters);
    assert.equal(after[0]?.n, counted[0]?.n, 'nothing was counted');
  });

  test('X-Forwarded-For counts only behind the configured proxies; IPv6 clients are limited per /64', async () => {
    assert.equal(addressBucket('2001:db8:1:2:aaaa::1'), '2001:db8:1:2::/64');
    assert.equal(addressBucket('2001:db8:1:2:bbbb:cccc:dddd:eeee'), '2001:db8:1:2::/64');
    assert.equal(addressBucket('::ffff:203.0.113.9'), '203.0.113.9');

    const direct = await api({ requestsPerMinute: 1 });
    await awayFromWindowEdge();
    // Without TRUST_PROXY_HOPS a client cannot pick a fresh address per request.
    assert.equal((await call(direct, 'quote', '203.0.113.1', { 'X-Forwarded-For': '192.0.2.1' })).status, 200);
    assert.equal((await call(direct, 'quote', '203.0.113.1', { 'X-Forwarded-For': '192.0.2.2' })).status, 429);

    const proxied = await api({ requestsPerMinute: 1, trustProxyHops: 1 });
    assert.equal((await call(proxied, 'quote', '203.0.113.2', { 'X-Forwarded-For': 'spoofed, 192.0.2.3' })).status, 200);
    assert.equal((await call(proxied, 'quote', '203.0.113.2', { 'X-Forwarded-For': 'other, 192.0.2.3' })).status, 429, 'the proxy-appended entry decides');
    assert.equal((await call(proxied, 'quote', '203.0.113.2', { 'X-Forwarded-For': '192.0.2.4' })).status, 200);

    assert.equal((await call(direct, 'quote', '2001:db8:9:9::1')).status, 200);
    assert.equal((await call(direct, 'quote', '2001:db8:9:9::2')).status, 429, 'same /64');
  });

  test('quotes are cached per client: the quote route scopes the cache by the client, so no client hears of another’s quote', async () => {
    let computations = 0;
    const quote = async () => {
      computations += 1;
      return { quote: QUOTE };
    };
    const counting = { ...quotes, quote } as unknown as QuoteService;
    const abuse = await createAbuseLimits({ db: database.db, settings: DEFAULTS, logger });
    const app = createApi({ quotes: withQuoteCache(counting, { ttlMs: 60_000 }), transfers: fakeTransfers, logger, abuse });
    assert.equal((await call(app, 'quote', '198.51.100.71')).status, 200);
    assert.equal((await call(app, 'quote', '198.51.100.71')).status, 200);
    assert.equal(computations, 1, 'one client asking again: from the cache');
    assert.equal((await call(app, 'quote', '198.51.100.72')).status, 200);
    assert.equal(computations, 2, 'another client, the same request: priced afresh');
  });
});
