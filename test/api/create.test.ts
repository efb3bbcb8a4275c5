/**
 * Create over real Postgres: Idempotency-Key (replay, reuse with another body, in progress, abandoned after a
 * failure, scoped per partner key), webhookUrl's acceptance rules, and the error code of each kind of failure.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { count, eq } from 'drizzle-orm';
import { createAbuseLimits } from '../../src/api/abuseLimits.ts';
import { ERROR_CODES } from '../../src/api/errorCodes.ts';
import { toApiError } from '../../src/api/errorMapping.ts';
import { QuoteError, type QuoteErrorCode } from '../../src/quote/quoteService.ts';
import { apiKeys, transfers } from '../../src/db/schema.ts';
import { createApiKey, hashApiKey, setDefaultWebhookUrl } from '../../src/partners/apiKeys.ts';
import {
  BRIDGE_DOWN_AMOUNT,
  call,
  CREATE_BODY,
  DEST,
  HUB,
  MAX_TRANSFER_USD,
  market,
  NO_ROUTE_AMOUNT,
  QUOTE_BODY,
  QUOTE_TTL_SECONDS,
  SOURCE,
  SOURCE_EXPLORER,
  startHarness,
  type Harness,
} from './harness.ts';

let h: Harness;
before(
  async () => {
    h = await startHarness('api-create');
  },
  { timeout: 120_000 },
);
after(async () => h?.close(), { timeout: 60_000 });

const rows = async () => (await h.database.db.select({ n: count() }).from(transfers))[0]!.n;
const key = () => crypto.randomUUID();
/** The abuse limits off: an X-Api-Key still names its partner (and a wrong one is still refused). */
const partnersWithoutLimits = () =>
  createAbuseLimits({
    db: h.database.db,
    settings: { requestsPerMinute: 0, createsPerMinute: 0, maxUnfundedPerClient: 0, publicReadsPerMinute: 0, trustProxyHops: 0 },
    logger: h.logger,
  });

describe('Idempotency-Key on create', { timeout: 60_000 }, () => {
  test('the same key and body answers the first answer again (Idempotent-Replayed) and creates one transfer', async () => {
    const app = h.api();
    const k = key();
    const before = await rows();
    const first = await call(app, 'POST', '/api/private-route', CREATE_BODY, { 'Idempotency-Key': k });
    assert.equal(first.status, 200, JSON.stringify(first.body));
    assert.equal(first.headers.get('idempotent-replayed'), null);
    // Field order does not matter: the body is compared as data.
    const reordered = {
      userDestinationAddress: CREATE_BODY.userDestinationAddress,
      amount: CREATE_BODY.amount,
      destChainId: CREATE_BODY.destChainId,
      sourceChainId: CREATE_BODY.sourceChainId,
    };
    const again = await call(app, 'POST', '/api/private-route', reordered, { 'Idempotency-Key': k });
    assert.equal(again.status, 200);
    assert.equal(again.headers.get('idempotent-replayed'), 'true');
    assert.deepEqual(again.body, first.body, 'the same answer, statusToken included');
    assert.equal(await rows(), before + 1);
    // Without the key, or with another one, a create is a new transfer.
    const other = await call(app, 'POST', '/api/private-route', CREATE_BODY, { 'Idempotency-Key': key() });
    assert.notEqual(other.body.data!.routeId, first.body.data!.routeId);
    assert.equal(await rows(), before + 2);
  });

  test('the same key with another body is 409 IDEMPOTENCY_KEY_REUSED; a malformed key is 400 INVALID_IDEMPOTENCY_KEY', async () => {
    const app = h.api();
    const k = key();
    assert.equal((await call(app, 'POST', '/api/private-route', CREATE_BODY, { 'Idempotency-Key': k })).status, 200);
    const before = await rows();
    const reused = await call(app, 'POST', '/api/private-route', { ...CREATE_BODY, amount: '11' }, { 'Idempotency-Key': k });
    assert.equal(reused.status, 409);
    assert.equal(reused.body.code, 'IDEMPOTENCY_KEY_REUSED');
    for (const bad of ['short', 'x'.repeat(256), 'has a space in it', 'tab\there1']) {
      const refused = await call(app, 'POST', '/api/private-route', CREATE_BODY, { 'Idempotency-Key': bad });
      assert.equal(refused.status, 400, bad);
      assert.equal(refused.body.code, 'INVALID_IDEMPOTENCY_KEY');
      assert.match(refused.body.error!, /Idempotency-Key must be 8 to 255 printable ASCII characters/);
    }
    assert.equal(await rows(), before);
  });

  test('while the first request runs, the same key is 409 IDEMPOTENCY_KEY_IN_USE with Retry-After: 1', async () => {
    const app = h.api();
    const k = key();
    let release!: () => void;
    const started = new Promise<void>((resolve) => {
      h.workflowStart.impl = () => {
        resolve();
        return new Promise((done) => (release = () => done({})));
      };
    });
    try {
      const first = call(app, 'POST', '/api/private-route', CREATE_BODY, { 'Idempotency-Key': k });
      await started;
      const second = await call(app, 'POST', '/api/private-route', CREATE_BODY, { 'Idempotency-Key': k });
      assert.equal(second.status, 409);
      assert.equal(second.body.code, 'IDEMPOTENCY_KEY_IN_USE');
      assert.equal(second.headers.get('retry-after'), '1');
      release();
      assert.equal((await first).status, 200);
    } finally {
      h.workflowStart.impl = async () => ({});
    }
  });

  test('a create that failed releases its key: the retry creates the transfer', async () => {
    const app = h.api();
    const k = key();
    h.workflowStart.impl = async () => {
      throw new Error('temporal is down');
    };
    try {
      const failed = await call(app, 'POST', '/api/private-route', CREATE_BODY, { 'Idempotency-Key': k });
      assert.equal(failed.status, 500);
      assert.deepEqual(failed.body, { success: false, error: 'internal error', code: 'INTERNAL_ERROR' });
    } finally {
      h.workflowStart.impl = async () => ({});
    }
    const retried = await call(app, 'POST', '/api/private-route', CREATE_BODY, { 'Idempotency-Key': k });
    assert.equal(retried.status, 200, JSON.stringify(retried.body));
    assert.equal(retried.headers.get('idempotent-replayed'), null, 'a new answer, not a replay of the failure');
  });

  test('keys are scoped to the partner: the same key from another X-Api-Key is another request', async () => {
    // Limits off: the partner is still identified (its key must be valid, and scopes the Idempotency-Key).
    const app = h.api({ abuse: await partnersWithoutLimits() });
    const [a, b] = [await createApiKey(h.database.db, 'scope-a'), await createApiKey(h.database.db, 'scope-b')];
    const k = key();
    const fromA = await call(app, 'POST', '/api/private-route', CREATE_BODY, { 'Idempotency-Key': k, 'X-Api-Key': a.key });
    const fromB = await call(app, 'POST', '/api/private-route', { ...CREATE_BODY, amount: '12' }, { 'Idempotency-Key': k, 'X-Api-Key': b.key });
    const anonymous = await call(app, 'POST', '/api/private-route', CREATE_BODY, { 'Idempotency-Key': k });
    assert.deepEqual([fromA.status, fromB.status, anonymous.status], [200, 200, 200]);
    assert.equal(new Set([fromA.body.data!.routeId, fromB.body.data!.routeId, anonymous.body.data!.routeId]).size, 3);
    const replay = await call(app, 'POST', '/api/private-route', CREATE_BODY, { 'Idempotency-Key': k, 'X-Api-Key': a.key });
    assert.equal(replay.body.data!.routeId, fromA.body.data!.routeId);
    assert.equal(replay.headers.get('idempotent-replayed'), 'true');
  });

  test('no Idempotency-Key reaches the logs', () => {
    assert.ok(!h.logLines.some((line) => /[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-/.test(line)), 'a UUID (an Idempotency-Key) was logged');
  });
});

describe('webhookUrl on create', { timeout: 60_000 }, () => {
  const stored = async (routeId: string) =>
    (await h.database.db.select({ url: transfers.webhookUrl }).from(transfers).where(eq(transfers.routeId, routeId)))[0]!.url;
  /** An app that knows partners, and a new partner's key: webhooks need one. */
  const withKey = async (extra: Parameters<typeof h.api>[0] = {}) => {
    const app = h.api({ abuse: await partnersWithoutLimits(), ...extra });
    const { key } = await createApiKey(h.database.db, `hooks-${crypto.randomUUID().slice(0, 8)}`);
    return { app, key, headers: { 'X-Api-Key': key } };
  };

  test('without an API key a webhookUrl is 400 WEBHOOK_NEEDS_API_KEY: no keyless caller gets deliveries signed with a shared secret', async () => {
    const app = h.api({ abuse: await partnersWithoutLimits() });
    const before = await rows();
    const refused = await call(app, 'POST', '/api/private-route', { ...CREATE_BODY, webhookUrl: 'https://partner.example/hook' });
    assert.equal(refused.status, 400);
    assert.equal(refused.body.code, 'WEBHOOK_NEEDS_API_KEY');
    assert.match(refused.body.error!, /webhookUrl needs an API key \(X-Api-Key\)/);
    assert.equal(await rows(), before, 'nothing created');
  });

  test("a key's default endpoint serves the creates that name none; a create's own webhookUrl wins", async () => {
    const { app, headers } = await withKey();
    const name = (
      await h.database.db
        .select({ name: apiKeys.name })
        .from(apiKeys)
        .where(eq(apiKeys.keyHash, hashApiKey(headers['X-Api-Key'])))
    )[0]!.name;
    assert.equal(await setDefaultWebhookUrl(h.database.db, name, 'https://partner.example/default-hook'), true);
    const plain = await call(app, 'POST', '/api/private-route', CREATE_BODY, headers);
    assert.equal(plain.status, 200, JSON.stringify(plain.body));
    assert.equal(await stored(plain.body.data!.routeId as string), 'https://partner.example/default-hook');
    const own = await call(app, 'POST', '/api/private-route', { ...CREATE_BODY, webhookUrl: 'https://partner.example/own' }, headers);
    assert.equal(await stored(own.body.data!.routeId as string), 'https://partner.example/own');
    assert.equal(await setDefaultWebhookUrl(h.database.db, name, null), true);
    const after = await call(app, 'POST', '/api/private-route', CREATE_BODY, headers);
    assert.equal(await stored(after.body.data!.routeId as string), null);
  });

  test('https URLs (and http to localhost) are stored, never echoed, never logged', async () => {
    const { app, headers } = await withKey();
    for (const url of ['https://partner.example/hooks/pr?token=secret-query-value', 'http://localhost:8080/hook', 'http://127.0.0.1:9/x']) {
      const created = await call(app, 'POST', '/api/private-route', { ...CREATE_BODY, webhookUrl: url }, headers);
      assert.equal(created.status, 200, `${url}: ${JSON.stringify(created.body)}`);
      assert.equal(await stored(created.body.data!.routeId as string), url);
      assert.ok(!JSON.stringify(created.body).includes(url), 'the create answer does not repeat the URL');
      const statusToken = created.body.data!.statusToken as string;
      const full = await call(app, 'GET', `/api/private-route/${created.body.data!.routeId}`, undefined, { authorization: `Bearer ${statusToken}` });
      assert.ok(!JSON.stringify(full.body).includes(url), 'the full view does not repeat the URL');
    }
    assert.ok(!h.logLines.some((line) => line.includes('secret-query-value') || line.includes('partner.example')), 'a webhookUrl was logged');
  });

  test('other URLs are 400 INVALID_WEBHOOK_URL naming the rule', async () => {
    const { app, headers } = await withKey();
    const before = await rows();
    for (const [url, pattern] of [
      ['http://partner.example/hook', /must use https/],
      ['ftp://partner.example/hook', /absolute https URL/],
      ['/relative/hook', /absolute https URL/],
      ['not a url', /absolute https URL/],
      ['https://user:pass@partner.example/hook', /must not carry a user name or password/],
      ['https://token@partner.example/hook', /must not carry a user name or password/],
      [`https://partner.example/${'a'.repeat(2048)}`, /too long \(at most 2048 characters\)/],
      [42, /webhookUrl must be a string/],
    ] as const) {
      const refused = await call(app, 'POST', '/api/private-route', { ...CREATE_BODY, webhookUrl: url }, headers);
      assert.equal(refused.status, 400, String(url));
      assert.equal(refused.body.code, 'INVALID_WEBHOOK_URL', String(url));
      assert.match(refused.body.error!, pattern, String(url));
    }
    assert.equal(await rows(), before);
  });

  test('WEBHOOK_ALLOW_HTTP accepts http to any host', async () => {
    const { app, headers } = await withKey({ webhookAllowHttp: true });
    const created = await call(app, 'POST', '/api/private-route', { ...CREATE_BODY, webhookUrl: 'http://receiver.test:8080/hook' }, headers);
    assert.equal(created.status, 200, JSON.stringify(created.body));
    assert.equal(await stored(created.body.data!.routeId as string), 'http://receiver.test:8080/hook');
  });
});

describe('error codes', { timeout: 60_000 }, () => {
  test('each kind of failure carries its code, with the status the catalogue gives it', async () => {
    const app = h.api();
    const cases: Array<[string, string, unknown, string, RegExp]> = [
      ['POST', '/api/private-route/quote', '{not json', 'INVALID_JSON', /request body must be valid JSON/],
      ['POST', '/api/private-route/quote', [], 'INVALID_REQUEST', /request body must be a JSON object/],
      ['POST', '/api/private-route/quote', { ...QUOTE_BODY, sourceChainId: undefined }, 'INVALID_REQUEST', /sourceChainId is required/],
      ['POST', '/api/private-route/quote', { ...QUOTE_BODY, destChainId: '3' }, 'INVALID_REQUEST', /destChainId must be a number/],
      ['POST', '/api/private-route/quote', { ...QUOTE_BODY, amount: 10 }, 'INVALID_AMOUNT', /amount must be a string/],
      ['POST', '/api/private-route/quote', { ...QUOTE_BODY, amount: '1e3' }, 'INVALID_AMOUNT', /amount must be a positive decimal/],
      ['POST', '/api/private-route/quote', { ...QUOTE_BODY, amount: '0' }, 'INVALID_AMOUNT', /amount must be greater than zero/],
      ['POST', '/api/private-route/quote', { ...QUOTE_BODY, sourceChainId: 999 }, 'UNSUPPORTED_CHAIN', /sourceChainId 999 is not a supported chain/],
      ['POST', '/api/private-route/quote', { ...QUOTE_BODY, destChainId: HUB }, 'UNSUPPORTED_CHAIN', /hub chain/],
      ['POST', '/api/private-route/quote', { ...QUOTE_BODY, tokenSymbol: 'DOGE' }, 'UNSUPPORTED_TOKEN', /tokenSymbol "DOGE" is not supported/],
      ['POST', '/api/private-route/quote', { ...QUOTE_BODY, amount: NO_ROUTE_AMOUNT }, 'NO_ROUTE', /no route: insufficient liquidity/],
      [
        'POST',
        '/api/private-route/quote',
        { ...QUOTE_BODY, amount: BRIDGE_DOWN_AMOUNT },
        'BRIDGE_UNAVAILABLE',
        /^the bridge provider is unavailable; try again shortly$/,
      ],
      ['POST', '/api/private-route', { ...CREATE_BODY, userDestinationAddress: '0x1234' }, 'INVALID_ADDRESS', /userDestinationAddress must be a 0x-prefixed/],
      [
        'POST',
        '/api/private-route',
        { ...CREATE_BODY, refundAddress: '0x0000000000000000000000000000000000000000' },
        'INVALID_ADDRESS',
        /refundAddress must not be the zero address/,
      ],
      [
        'POST',
        '/api/private-route',
        { ...CREATE_BODY, refundAddress: CREATE_BODY.userDestinationAddress.toLowerCase() },
        'INVALID_ADDRESS',
        /refundAddress must differ from userDestinationAddress/,
      ],
      ['POST', '/api/private-route', { ...CREATE_BODY, minAnonymitySet: 51 }, 'INVALID_REQUEST', /minAnonymitySet must be at most 50/],
      ['POST', '/api/private-route/quote', { ...QUOTE_BODY, padding: 'x'.repeat(70_000) }, 'BODY_TOO_LARGE', /request body is too large/],
      ['GET', `/api/private-route/rt_${'0'.repeat(32)}`, undefined, 'UNKNOWN_ROUTE', /unknown routeId/],
      ['GET', '/api/private-route/nope', undefined, 'UNKNOWN_ROUTE', /unknown routeId/],
      ['GET', '/api/bridge/tokens?chainId=abc', undefined, 'INVALID_REQUEST', /chainId must be a positive integer/],
      ['GET', '/api/bridge/tokens?chainId=999', undefined, 'UNSUPPORTED_CHAIN', /chainId 999 is not a supported chain/],
      ['DELETE', '/api/private-route', undefined, 'UNKNOWN_ENDPOINT', /no such endpoint: DELETE \/api\/private-route/],
    ];
    for (const [method, urlPath, body, code, pattern] of cases) {
      const answer = await call(app, method, urlPath, body);
      const where = `${method} ${urlPath} ${JSON.stringify(body)?.slice(0, 100)} → ${answer.status} ${JSON.stringify(answer.body)}`;
      assert.equal(answer.body.code, code, where);
      assert.equal(answer.status, ERROR_CODES[code as keyof typeof ERROR_CODES].status, where);
      assert.deepEqual(Object.keys(answer.body).sort(), ['code', 'error', 'success'], where);
      assert.match(answer.body.error!, pattern, where);
    }
    // The 500's details went to the log (URL redacted), not to the client.
    assert.ok(
      h.logLines.some((line) => line.includes('relay answered 503')),
      'the bridge failure is logged',
    );
  });

  test('a statusToken of another transfer is 401 STATUS_TOKEN_MISMATCH with WWW-Authenticate: Bearer', async () => {
    const app = h.api();
    const [a, b] = [await call(app, 'POST', '/api/private-route', CREATE_BODY), await call(app, 'POST', '/api/private-route', CREATE_BODY)];
    const wrong = await call(app, 'GET', `/api/private-route/${a.body.data!.routeId}`, undefined, { authorization: `Bearer ${b.body.data!.statusToken}` });
    assert.equal(wrong.status, 401);
    assert.equal(wrong.body.code, 'STATUS_TOKEN_MISMATCH');
    assert.equal(wrong.headers.get('www-authenticate'), 'Bearer');
  });

  test("a quote error answers the code it carries, with that code's HTTP status", () => {
    const cases: [QuoteErrorCode, number][] = [
      ['UNSUPPORTED_PAIR', 400],
      ['UNSUPPORTED_TOKEN', 400],
      ['UNSUPPORTED_CHAIN', 400],
      ['INVALID_AMOUNT', 400],
      ['NO_ROUTE', 400],
      ['QUOTE_EXPIRED', 409],
      ['QUOTE_MISMATCH', 409],
    ];
    for (const [code, status] of cases) {
      const { failure, internal } = toApiError(new QuoteError('whatever the words', { code }));
      assert.deepEqual({ code: failure.code, status: failure.status, internal }, { code, status, internal: false });
    }
  });
});

describe('explorer links', { timeout: 60_000 }, () => {
  test('chains name their explorer and currency (null where unknown); the full view links each hash on its chain', async () => {
    const app = h.api();
    const chains = await call<{ chainId: number; explorerUrl: string | null; nativeCurrency: unknown }[]>(app, 'GET', '/api/bridge/chains');
    assert.equal(chains.status, 200);
    const source = chains.body.data!.find((c) => c.chainId === SOURCE)!;
    assert.equal(source.explorerUrl, SOURCE_EXPLORER);
    assert.deepEqual(source.nativeCurrency, { symbol: 'ETH', decimals: 18 });
    assert.ok(chains.body.data!.filter((c) => c.chainId !== SOURCE).every((c) => c.explorerUrl === null && c.nativeCurrency === null));

    const created = await call(app, 'POST', '/api/private-route', CREATE_BODY);
    const routeId = created.body.data!.routeId as string;
    const read = async () =>
      (await call(app, 'GET', `/api/private-route/${routeId}`, undefined, { authorization: `Bearer ${created.body.data!.statusToken}` })).body.data as {
        explorerLinks: Record<string, string | null>;
      };
    assert.deepEqual((await read()).explorerLinks, { depositTx: null, bridgeInTx: null, payoutTx: null }, 'no hash, no link');
    const deposit = `0x${'ab'.repeat(32)}`;
    const bridgeIn = `0x${'ef'.repeat(32)}`;
    const payout = `0x${'cd'.repeat(32)}`;
    await h.database.db.update(transfers).set({ depositTxHash: deposit, bridgeInTxHash: bridgeIn, payoutTxHash: payout }).where(eq(transfers.routeId, routeId));
    assert.deepEqual((await read()).explorerLinks, {
      depositTx: `${SOURCE_EXPLORER}/tx/${deposit}`,
      // The send into the bridge is on the source chain too.
      bridgeInTx: `${SOURCE_EXPLORER}/tx/${bridgeIn}`,
      // The destination chain has no known explorer: the hash is there, the link is not.
      payoutTx: null,
    });
  });
});

describe('status history', { timeout: 60_000 }, () => {
  test('the full view starts its history with AWAITING_DEPOSIT at creation; the public view has none', async () => {
    const app = h.api();
    const created = await call(app, 'POST', '/api/private-route', CREATE_BODY);
    assert.equal(created.status, 200, JSON.stringify(created.body));
    const routeId = created.body.data!.routeId as string;
    const full = await call(app, 'GET', `/api/private-route/${routeId}`, undefined, { authorization: `Bearer ${created.body.data!.statusToken}` });
    assert.equal(full.status, 200);
    const view = full.body.data as { createdAt: string; statusHistory: unknown };
    assert.deepEqual(view.statusHistory, [{ status: 'AWAITING_DEPOSIT', at: view.createdAt, txHash: null, chainId: null }]);
    const anonymous = await call(app, 'GET', `/api/private-route/${routeId}`);
    assert.equal(anonymous.status, 200);
    assert.equal((anonymous.body.data as Record<string, unknown>).statusHistory, undefined, 'the history is only for the statusToken');
  });
});

describe('quoteId, expiresAt and the pair limits', { timeout: 60_000 }, () => {
  const quote = async (app: ReturnType<Harness['api']>, amount = QUOTE_BODY.amount) => {
    const answer = await call(app, 'POST', '/api/private-route/quote', { ...QUOTE_BODY, amount });
    assert.equal(answer.status, 200, JSON.stringify(answer.body));
    return answer.body.data as Record<string, unknown> & { quoteId: string; expiresAt: string; quotedOutputAmount: string };
  };

  test('a quote names itself, its expiry and the pair limits; above the maximum is a 400 that says the maximum', async () => {
    const app = h.api();
    const before = Date.now();
    const first = await quote(app);
    assert.match(first.quoteId, /^qt_[0-9a-f]{32}$/);
    const lifetime = Date.parse(first.expiresAt) - before;
    assert.ok(lifetime >= (QUOTE_TTL_SECONDS - 1) * 1000 && lifetime <= (QUOTE_TTL_SECONDS + 1) * 1000, `expires in ${lifetime} ms`);
    assert.notEqual((await quote(app)).quoteId, first.quoteId, 'each answer has its own id');
    // Every token is worth a dollar here: the maximum is MAX_TRANSFER_USD whole USDC.
    assert.equal(first.maxAmount, (BigInt(MAX_TRANSFER_USD) * 1_000_000n).toString());
    assert.equal(typeof first.minAmount, 'string');
    assert.ok(BigInt(first.minAmount as string) > 0n);

    await quote(app, MAX_TRANSFER_USD);
    const over = await call(app, 'POST', '/api/private-route/quote', { ...QUOTE_BODY, amount: `${MAX_TRANSFER_USD}.000001` });
    assert.equal(over.status, 400);
    assert.equal(over.body.code, 'INVALID_AMOUNT');
    assert.match(over.body.error!, new RegExp(`too large: the service takes at most ${MAX_TRANSFER_USD} USDC per transfer`));
    const createOver = await call(app, 'POST', '/api/private-route', { ...CREATE_BODY, amount: `${MAX_TRANSFER_USD}.000001` });
    assert.equal(createOver.status, 400, 'a create is held to the same maximum');
    assert.equal(createOver.body.code, 'INVALID_AMOUNT');
    assert.match(createOver.body.error!, /too large/);
  });

  test('a create citing a fresh quoteId gets exactly that quote; another request is 409 QUOTE_MISMATCH; an expired one 409 QUOTE_EXPIRED', async () => {
    const app = h.api();
    const quoted = await quote(app);
    const created = await call(app, 'POST', '/api/private-route', { ...CREATE_BODY, quoteId: quoted.quoteId });
    assert.equal(created.status, 200, JSON.stringify(created.body));
    const transfer = created.body.data as Record<string, unknown>;
    for (const field of ['amount', 'quotedOutputAmount', 'feeAmount', 'networkCostAmount', 'roundingAmount', 'etaSeconds']) {
      assert.deepEqual(transfer[field], quoted[field], field);
    }
    assert.equal(transfer.quoteId, quoted.quoteId, 'the create answer names the quote it kept');
    const [row] = await h.database.db
      .select()
      .from(transfers)
      .where(eq(transfers.routeId, transfer.routeId as string));
    assert.equal(row?.quotedOutputAmount, quoted.quotedOutputAmount, 'the transfer pays what the quote said');

    for (const [what, body] of [
      ['another amount', { ...CREATE_BODY, amount: '11', quoteId: quoted.quoteId }],
      ['another token', { ...CREATE_BODY, destTokenSymbol: 'WETH', quoteId: quoted.quoteId }],
      ['another chain', { ...CREATE_BODY, sourceChainId: DEST, destChainId: SOURCE, quoteId: quoted.quoteId }],
    ] as const) {
      const refused = await call(app, 'POST', '/api/private-route', body);
      assert.equal(refused.status, 409, what);
      assert.equal(refused.body.code, 'QUOTE_MISMATCH', what);
    }
    // The same amount written otherwise is the same request.
    assert.equal((await call(app, 'POST', '/api/private-route', { ...CREATE_BODY, amount: '10.000', quoteId: quoted.quoteId })).status, 200);

    const unknown = await call(app, 'POST', '/api/private-route', { ...CREATE_BODY, quoteId: `qt_${'0'.repeat(32)}` });
    assert.equal(unknown.status, 409);
    assert.equal(unknown.body.code, 'QUOTE_EXPIRED');
    const malformed = await call(app, 'POST', '/api/private-route', { ...CREATE_BODY, quoteId: 'yesterday' });
    assert.equal(malformed.status, 400);
    assert.equal(malformed.body.code, 'INVALID_REQUEST');

    const rowsBefore = await rows();
    h.quoteClock.offsetMs = (QUOTE_TTL_SECONDS + 1) * 1000;
    try {
      const stale = await call(app, 'POST', '/api/private-route', { ...CREATE_BODY, quoteId: quoted.quoteId });
      assert.equal(stale.status, 409);
      assert.equal(stale.body.code, 'QUOTE_EXPIRED');
      assert.match(stale.body.error!, /quote again/);
    } finally {
      h.quoteClock.offsetMs = 0;
    }
    assert.equal(await rows(), rowsBefore, 'a refused create stores nothing');
  });

  test('a fresh quoteId the market no longer covers is refused (409 QUOTE_EXPIRED); one it still covers is kept as quoted', async () => {
    const app = h.api();
    const quoted = await quote(app, '100');
    market.haircutBps = 100;
    try {
      const moved = await call(app, 'POST', '/api/private-route', { ...CREATE_BODY, amount: '100', quoteId: quoted.quoteId });
      assert.equal(moved.status, 409, JSON.stringify(moved.body));
      assert.equal(moved.body.code, 'QUOTE_EXPIRED');
      assert.match(moved.body.error!, /no longer covered: prices moved/);
    } finally {
      market.haircutBps = 0;
    }
    const kept = await call(app, 'POST', '/api/private-route', { ...CREATE_BODY, amount: '100', quoteId: quoted.quoteId });
    assert.equal(kept.status, 200, JSON.stringify(kept.body));
    assert.equal((kept.body.data as Record<string, unknown>).quotedOutputAmount, quoted.quotedOutputAmount);
  });
});

describe('partner fees', { timeout: 60_000 }, () => {
  test("a partner's key quotes with its fee itemized and taken from the output; its transfers record the partner and the fee", async () => {
    const app = h.api({ abuse: await partnersWithoutLimits() });
    const partner = await createApiKey(h.database.db, 'fee-partner', {}, { feeBps: 100 });
    const plain = await call(app, 'POST', '/api/private-route/quote', QUOTE_BODY);
    const withKey = await call(app, 'POST', '/api/private-route/quote', QUOTE_BODY, { 'X-Api-Key': partner.key });
    assert.equal(withKey.status, 200, JSON.stringify(withKey.body));
    const [a, b] = [plain.body.data!, withKey.body.data!] as Record<string, string>[];
    assert.equal(a!.partnerFeeAmount, '0');
    // 1 % of the output before it, rounded up; the payout is what is left, rounded down to its class.
    const before = BigInt(a!.quotedOutputAmount!) + BigInt(a!.roundingAmount!);
    const fee = (before * 100n + 9_999n) / 10_000n;
    assert.equal(b!.partnerFeeAmount, fee.toString());
    assert.equal(BigInt(b!.quotedOutputAmount!) + BigInt(b!.roundingAmount!), before - fee);
    assert.equal(b!.feeAmount, a!.feeAmount, "the service's own fee is unchanged");

    const created = await call(app, 'POST', '/api/private-route', { ...CREATE_BODY, quoteId: b!.quoteId }, { 'X-Api-Key': partner.key });
    assert.equal(created.status, 200, JSON.stringify(created.body));
    const [row] = await h.database.db
      .select()
      .from(transfers)
      .where(eq(transfers.routeId, created.body.data!.routeId as string));
    assert.deepEqual({ partnerId: row?.partnerId, partnerFeeAmount: row?.partnerFeeAmount }, { partnerId: partner.id, partnerFeeAmount: fee.toString() });
    const read = await call(app, 'GET', `/api/private-route/${row!.routeId}`, undefined, { authorization: `Bearer ${created.body.data!.statusToken}` });
    assert.equal((read.body.data as Record<string, unknown>).partnerFeeAmount, fee.toString(), 'the full view itemizes it');

    // A partner's quote is its own: cited with another key of the same fee, or without a key, it is refused.
    const sameFee = await createApiKey(h.database.db, 'fee-partner-twin', {}, { feeBps: 100 });
    const twin = await call(app, 'POST', '/api/private-route', { ...CREATE_BODY, quoteId: b!.quoteId }, { 'X-Api-Key': sameFee.key });
    assert.equal(twin.status, 409);
    assert.equal(twin.body.code, 'QUOTE_MISMATCH');
    assert.match(twin.body.error!, /another API key/);
    const elsewhere = await call(app, 'POST', '/api/private-route', { ...CREATE_BODY, quoteId: b!.quoteId });
    assert.equal(elsewhere.status, 409);
    assert.equal(elsewhere.body.code, 'QUOTE_MISMATCH');
    const anonymous = await call(app, 'POST', '/api/private-route', CREATE_BODY);
    const [anonymousRow] = await h.database.db
      .select()
      .from(transfers)
      .where(eq(transfers.routeId, anonymous.body.data!.routeId as string));
    assert.deepEqual({ partnerId: anonymousRow?.partnerId, partnerFeeAmount: anonymousRow?.partnerFeeAmount }, { partnerId: null, partnerFeeAmount: null });
  });

  test('a key refuses a fee above the bound', async () => {
    await assert.rejects(createApiKey(h.database.db, 'greedy', {}, { feeBps: 501 }), /from 0 to 500/);
  });
});

describe('users of one integrator', { timeout: 60_000 }, () => {
  test('a key that vouches for its users: each userReference is a client of its own, stored only as a keyed hash; others get a 400', async () => {
    const app = h.api({ abuse: await partnersWithoutLimits() });
    const privacyOf = async (routeId: string) => {
      const [row] = await h.database.db.select().from(transfers).where(eq(transfers.routeId, routeId));
      return { client: row!.privacyClient, voucher: row!.privacyVoucher, share: row!.privacyVoucherShareBps };
    };
    const keyless = await call(app, 'POST', '/api/private-route', { ...CREATE_BODY, userReference: 'user-1' });
    assert.deepEqual([keyless.status, keyless.body.code], [400, 'USER_REFERENCE_NOT_ACCEPTED']);
    assert.match(keyless.body.error!, /needs an API key/);
    const plain = await createApiKey(h.database.db, 'plain-wallet');
    const refused = await call(app, 'POST', '/api/private-route', { ...CREATE_BODY, userReference: 'user-1' }, { 'X-Api-Key': plain.key });
    assert.deepEqual([refused.status, refused.body.code], [400, 'USER_REFERENCE_NOT_ACCEPTED']);
    assert.match(refused.body.error!, /routectl apikey vouch --name plain-wallet/);
    const malformed = await call(app, 'POST', '/api/private-route', { ...CREATE_BODY, userReference: 'has spaces' }, { 'X-Api-Key': plain.key });
    assert.deepEqual([malformed.status, malformed.body.code], [400, 'INVALID_REQUEST']);

    const wallet = await createApiKey(h.database.db, 'vouching-wallet', {}, { userShareBps: 5_000 });
    const create = async (userReference: string) => {
      const created = await call(app, 'POST', '/api/private-route', { ...CREATE_BODY, userReference }, { 'X-Api-Key': wallet.key });
      assert.equal(created.status, 200, JSON.stringify(created.body));
      return privacyOf(created.body.data!.routeId as string);
    };
    const [alice, bob, aliceAgain] = [await create('alice'), await create('bob'), await create('alice')];
    assert.notEqual(alice.client, bob.client, 'two users: two clients');
    assert.equal(alice.client, aliceAgain.client, 'one user: one client');
    assert.equal(alice.voucher, bob.voucher, 'both vouched for by the same partner');
    assert.equal(alice.share, 5_000);
    for (const stored of [alice.client, alice.voucher]) assert.ok(stored && !stored.includes('alice'), 'keyed hashes, never the reference');
    const withoutReference = await call(app, 'POST', '/api/private-route', CREATE_BODY, { 'X-Api-Key': wallet.key });
    const unvouched = await privacyOf(withoutReference.body.data!.routeId as string);
    assert.deepEqual(
      { client: unvouched.client, voucher: unvouched.voucher },
      { client: alice.voucher, voucher: null },
      'without a reference: the key itself, one client',
    );
  });
});

describe('padded full views', { timeout: 60_000 }, () => {
  test('a full view is answered in whole 4096-byte blocks (body and X-Padding) whatever its status; the public view is not padded', async () => {
    const app = h.api();
    const created = await call(app, 'POST', '/api/private-route', CREATE_BODY);
    const routeId = created.body.data!.routeId as string;
    const sizes: number[] = [];
    const read = async () => {
      const response = await app.request(`/api/private-route/${routeId}`, { headers: { authorization: `Bearer ${created.body.data!.statusToken}` } });
      const body = await response.text();
      const padding = response.headers.get('x-padding') ?? '';
      assert.match(padding, /^0*$/);
      const total = Buffer.byteLength(body) + padding.length;
      assert.equal(total % 4096, 0, `${Buffer.byteLength(body)} + ${padding.length}`);
      sizes.push(total);
    };
    await read();
    await h.database.db
      .update(transfers)
      .set({ status: 'COMPLETED', depositTxHash: `0x${'a'.repeat(64)}`, payoutTxHash: `0x${'b'.repeat(64)}`, completedAt: new Date() })
      .where(eq(transfers.routeId, routeId));
    await read();
    assert.equal(sizes[0], sizes[1], 'the same size before and after');
    const anonymous = await app.request(`/api/private-route/${routeId}`);
    assert.equal(anonymous.headers.get('x-padding'), null);
  });
});
