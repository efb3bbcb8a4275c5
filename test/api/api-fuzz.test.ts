import assert from 'node:assert/strict';
import { freeNetwork } from '../../src/quote/gasCost.ts';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Client } from '@temporalio/client';
import { count } from 'drizzle-orm';
import fc from 'fast-check';
import type { Address } from 'viem';
import { english, generateMnemonic } from 'viem/accounts';
import { createRouteAddressBook, createRouteKeyring } from '../../src/accounts/routeAccounts.ts';
import { createAbuseLimits } from '../../src/api/abuseLimits.ts';
import { createApi } from '../../src/api/app.ts';
import { ERROR_CODES, type ErrorCode } from '../../src/api/errorCodes.ts';
import { connectDatabase, migrateDatabase, type DatabaseHandle } from '../../src/db/client.ts';
import { transfers } from '../../src/db/schema.ts';
import { freePort } from '../../devnet/ports.ts';
import { startLocalPostgres, type LocalPostgres } from '../../devnet/postgres.ts';
import { createLogger } from '../../src/logger.ts';
import type { BridgeToken, DepositAddressBridge } from '../../src/providers/bridge.ts';
import type { PrivacyPool } from '../../src/providers/privacyPool.ts';
import { createQuoteService } from '../../src/quote/quoteService.ts';
import { createInMemoryPriceEpochs } from '../../src/quote/priceEpochs.ts';
import { createTransferService, type TransferService } from '../../src/transfers/transferService.ts';

/**
 * Property-based fuzzing of the public API: thousands of malformed requests to every endpoint, through the
 * real Hono app, the real quote and transfer services and real Postgres (only the bridge and the pool are
 * fakes). Every answer to a malformed request is a 4xx in the envelope { success: false, error }, never a
 * 5xx, and no rejected request leaves a transfer behind.
 */

const SOURCE = 1;
const HUB = 2;
const DEST = 3;
const RECIPIENT = '0x000000000000000000000000000000000000bEEF';
const REFUND_TO = '0x000000000000000000000000000000000000dEaD';
const MAX_ANONYMITY_SET = 50;
/** The statuses a malformed request may meet (400 bad input, 401 bad key, 404 no such thing, 405, 413, 429). */
const CLIENT_ERRORS = new Set([400, 401, 404, 405, 413, 429]);

const token = (chainId: number, symbol: string, decimals: number, digit: string): BridgeToken => ({
  chainId,
  address: `0x${digit.repeat(40)}` as Address,
  symbol,
  name: symbol === 'USDC' ? 'USD Coin' : 'Wrapped Ether',
  decimals,
});
const fakeBridge: DepositAddressBridge = {
  listChains: async () => [SOURCE, HUB, DEST].map((chainId) => ({ chainId, name: `c${chainId}`, displayName: `Chain ${chainId}` })),
  listTokens: async (chainId) => [token(chainId, 'USDC', 6, '1'), token(chainId, 'WETH', 18, '2')],
  quote: async (request) => ({
    requestId: null,
    depositAddress: null,
    amountIn: request.amount,
    amountOut: request.amount,
    amountInUsd: null,
    amountOutUsd: null,
    timeEstimateSeconds: 10,
  }),
  orderStatus: async () => assert.fail('not used'),
  tokenUsdPrice: async () => '1',
};
const fakePool = {
  chainId: HUB,
  fees: async () => ({ depositFeeBps: 0, withdrawalFeeBps: 0, minimumDeposit: 1n }),
} as unknown as PrivacyPool;

let dataDir: string;
let postgres: LocalPostgres;
let database: DatabaseHandle;
let app: ReturnType<typeof createApi>;
/** The same app behind the abuse limits (a Postgres write per request: used where headers are fuzzed). */
let limitedApp: ReturnType<typeof createApi>;
/** Every request the transfer service's create received, and whether it returned a transfer. */
const createCalls: Array<{ request: unknown; created: boolean }> = [];
let requestsSent = 0;
/** A transfer that exists (created before the fuzz; its workflow start failed, so it is FAILED): GETs of it meet the statusToken check. */
let existingRouteId: string;
const logLines: string[] = [];

before(
  async () => {
    dataDir = await mkdtemp(path.join(tmpdir(), 'api-fuzz-'));
    postgres = await startLocalPostgres({ databaseUrl: process.env.TEST_DATABASE_URL, dataDir, port: await freePort(), ephemeral: true });
    await migrateDatabase(postgres.url);
    database = connectDatabase(postgres.url);
    const quotes = createQuoteService({
      bridge: fakeBridge,
      pool: fakePool,
      hubChainId: HUB,
      hubTokenSymbol: 'USDC',
      feePolicy: { feeBps: 0n, feeMinUsd: '0' },
      networkCosts: freeNetwork,
      priceEpochs: createInMemoryPriceEpochs({ epochSeconds: 3600, marginBps: 50 }),
      priceMarginBps: 50,
      poolEtaSeconds: 1,
      previewAccount: `0x${'9'.repeat(40)}`,
    });
    // No Temporal server: a create that got this far would fail here (and be seen by the row count).
    const temporal = { workflow: { start: async () => assert.fail('a rejected request must not start a workflow') } } as unknown as Client;
    const real = createTransferService({
      db: database.db,
      temporal,
      taskQueue: 'api-fuzz',
      quotes,
      addresses: createRouteAddressBook(createRouteKeyring(generateMnemonic(english)).xpubs()),
      settings: { depositTimeoutSeconds: 3600 } as never,
      privacy: {
        exitEpochSeconds: 2,
        publicEndDelaySeconds: 0,
        publicEndHoldSeconds: 0,
        minAnonymitySet: 1,
        maxAnonymitySet: MAX_ANONYMITY_SET,
        maxWaitSeconds: 10,
        pollSeconds: 1,
        reviewTimeoutSeconds: 10,
      },
    });
    // No workflow can start (the stub above refuses), so create stores the transfer, marks it FAILED and throws.
    await real.create({ ...validQuote, userDestinationAddress: RECIPIENT as Address, refundAddress: REFUND_TO as Address }).catch(() => {});
    const [seeded] = await database.db.select({ routeId: transfers.routeId }).from(transfers);
    existingRouteId = seeded!.routeId;
    const spied: TransferService = {
      ...real,
      async create(...args: Parameters<TransferService['create']>) {
        const call = { request: args[0], created: false };
        createCalls.push(call);
        const created = await real.create(...args);
        call.created = true;
        return created;
      },
    };
    const logger = createLogger({ level: 'debug', write: (line) => logLines.push(line) });
    // The real abuse limits, high enough that the fuzz meets validation rather than 429s; unknown X-Api-Keys are 401s.
    const abuse = await createAbuseLimits({
      db: database.db,
      settings: { requestsPerMinute: 1_000_000, createsPerMinute: 1_000_000, maxUnfundedPerClient: 1_000, publicReadsPerMinute: 1_000_000, trustProxyHops: 1 },
      hashKey: 'api-fuzz-client-hash-key',
      logger,
    });
    app = createApi({ quotes, transfers: spied, logger, servedChainIds: new Set([SOURCE, HUB, DEST]) });
    limitedApp = createApi({ quotes, transfers: spied, logger, servedChainIds: new Set([SOURCE, HUB, DEST]), abuse });
  },
  { timeout: 120_000 },
);

after(
  async () => {
    await database?.close();
    await postgres?.stop();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  },
  { timeout: 60_000 },
);

const transferRows = async () => (await database.db.select({ n: count() }).from(transfers))[0]!.n;

interface FuzzRequest {
  method: string;
  path: string;
  headers?: Array<[string, string]>;
  body?: string;
}

/** encodeURIComponent, with a lone surrogate (which it refuses) sent as U+FFFD, as a client's UTF-8 encoder would. */
const encode = (text: string) => encodeURIComponent(Buffer.from(text, 'utf8').toString('utf8'));

/** Every error code an answer carried. */
const codesSeen = new Set<ErrorCode>();

/** The body of the last answer send() checked. */
let lastAnswer: Record<string, unknown> = {};

const describeRequest = (r: FuzzRequest) =>
  JSON.stringify({ ...r, body: r.body && r.body.length > 300 ? `${r.body.slice(0, 300)}… (${r.body.length} chars)` : r.body });

/** Sends the request in-process and checks the answer: `allowed` statuses only, always in the spec's envelope. */
async function send(
  r: FuzzRequest,
  allowed: (status: number) => boolean = (s) => CLIENT_ERRORS.has(s),
  target: ReturnType<typeof createApi> = app,
): Promise<number> {
  const headers = new Headers();
  for (const [name, value] of r.headers ?? []) headers.append(name, value);
  requestsSent++;
  const response = await target.request(`http://api.test${r.path}`, { method: r.method, headers, body: r.body });
  const text = await response.text();
  const where = `${describeRequest(r)} → ${response.status} ${text.slice(0, 300)}`;
  assert.ok(allowed(response.status), `unexpected status: ${where}`);
  if (r.method === 'HEAD') return response.status;
  assert.match(response.headers.get('content-type') ?? '', /^application\/json/, `not JSON: ${where}`);
  const body = JSON.parse(text) as Record<string, unknown>;
  lastAnswer = body;
  if (response.status < 400) {
    assert.equal(body.success, true, where);
    return response.status;
  }
  assert.deepEqual(Object.keys(body).sort(), ['code', 'error', 'success'], `not the envelope: ${where}`);
  assert.equal(body.success, false, where);
  assert.ok(Object.hasOwn(ERROR_CODES, body.code as string), `code not in the catalogue: ${where}`);
  assert.equal(ERROR_CODES[body.code as ErrorCode].status, response.status, `code of another status: ${where}`);
  codesSeen.add(body.code as ErrorCode);
  assert.equal(typeof body.error, 'string', where);
  assert.ok((body.error as string).trim().length > 0, `empty error: ${where}`);
  return response.status;
}

// ---- generators -------------------------------------------------------------------------------------------

/** Strings an attacker would try: control characters, lone surrogates, huge, unicode, injection-looking. */
const nastyString = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.string({ unit: fc.integer({ min: 0, max: 0x1f }).map((c) => String.fromCharCode(c)), maxLength: 20 }),
  fc.constantFrom('\uD800', '\uDFFF', '\u0000', '\u202E', '𝟙𝟚', '١٢٣', '１２', '½', '\uFEFF1', "' OR 1=1 --", '<script>', '{{7*7}}', '%00', '../../etc/passwd'),
  fc.integer({ min: 1_000, max: 70_000 }).map((n) => 'x'.repeat(n)),
);

/** A JSON value of any type (deep structures included) that is not what a field expects. */
const anyJson = fc.oneof(
  { depthSize: 'small' },
  fc.constant(null),
  fc.boolean(),
  fc.integer(),
  fc.double(),
  nastyString,
  fc.array(fc.integer(), { maxLength: 5 }),
  fc.dictionary(fc.string({ maxLength: 8 }), fc.integer(), { maxKeys: 4 }),
  fc.constantFrom([], {}, [[[[]]]], { __proto__: { polluted: true } }),
);

/** Numbers that are no chain id: wrong type, fractional, non-positive, unsafe, out of range, unserved. */
const badChainId = fc.oneof(
  fc.constantFrom<unknown>(
    '1',
    '3',
    '0x1',
    '1e0',
    'NaN',
    'Infinity',
    ' 1',
    null,
    true,
    [1],
    { chainId: 1 },
    0,
    -1,
    1.5,
    2 ** 53,
    1e308,
    -0.0001,
    4_294_967_296,
    999,
    HUB,
  ),
  fc.integer({ min: 4, max: Number.MAX_SAFE_INTEGER }),
  fc.integer({ max: 0 }),
  fc.double({ noInteger: true }),
  anyJson.filter((v) => typeof v !== 'number'),
);

/** Amounts that are no positive decimal string within the token's precision and range. */
const badAmount = fc.oneof(
  fc.constantFrom<unknown>(
    'NaN',
    'Infinity',
    '-Infinity',
    '1e5',
    '1E-3',
    '-1',
    '0',
    '0.0',
    '',
    ' ',
    ' 1',
    '1 ',
    '+1',
    '0x10',
    '1_000',
    '1,5',
    '.',
    '1.',
    '.5.5',
    '1.1234567',
    '١٢',
    '１２',
    '1\u0000',
    '12.5\n',
    '9'.repeat(81),
    '9'.repeat(60),
    12.5,
    0,
    -1,
    Number.POSITIVE_INFINITY,
    null,
    true,
    [],
    {},
    ['1'],
  ),
  fc
    .double()
    .map(String)
    .filter((s) => !/^\d+(\.\d{1,6})?$/.test(s) || Number(s) === 0),
  fc.integer().map((n) => n),
  nastyString.filter((s) => !/^\d*\.?\d+$/.test(s) || /^0*\.?0*$/.test(s) || s.length > 30),
);

const badSymbol = fc.oneof(
  fc.constantFrom<unknown>('', '   ', 'usdcx', 'ETH', 'X'.repeat(33), 1, null, [], {}, 'USDC\u0000'),
  nastyString.filter((s) => !['usdc', 'weth'].includes(s.trim().toLowerCase())),
);

const badAddress = fc.oneof(
  fc.constantFrom<unknown>(
    '',
    '0x',
    '0x0000000000000000000000000000000000000000',
    '0x000000000000000000000000000000000000beeF',
    RECIPIENT.slice(0, -1),
    `${RECIPIENT}0`,
    RECIPIENT.slice(2),
    RECIPIENT.toUpperCase(),
    `0X${RECIPIENT.slice(2)}`,
    ` ${RECIPIENT}`,
    `${RECIPIENT}\u0000`,
    0xbeef,
    null,
    [RECIPIENT],
    { address: RECIPIENT },
  ),
  nastyString,
  fc.integer(),
);

const badMinAnonymitySet = fc.oneof(
  fc.constantFrom<unknown>(0, -1, 1.5, '3', null, true, [], 1e308, MAX_ANONYMITY_SET + 1, 2 ** 53),
  fc.integer({ min: MAX_ANONYMITY_SET + 1 }),
  fc.integer({ max: 0 }),
);

const validQuote = { sourceChainId: SOURCE, destChainId: DEST, amount: '10', tokenSymbol: 'USDC', destTokenSymbol: 'USDC' };
const validCreate = { ...validQuote, userDestinationAddress: RECIPIENT, refundAddress: REFUND_TO, minAnonymitySet: 2 };

/** A request body with one field (or a required field's absence) broken; the other fields valid. */
function brokenObject(kind: 'quote' | 'create'): fc.Arbitrary<Record<string, unknown>> {
  const base: Record<string, unknown> = kind === 'quote' ? validQuote : validCreate;
  const breakField = (field: string, value: fc.Arbitrary<unknown>) => value.map((v) => ({ ...base, [field]: v }));
  const breakages = [
    breakField('sourceChainId', badChainId),
    breakField('destChainId', badChainId),
    breakField('amount', badAmount),
    breakField('tokenSymbol', badSymbol),
    breakField('destTokenSymbol', badSymbol),
    fc.constantFrom(...['sourceChainId', 'destChainId', 'amount', ...(kind === 'create' ? ['userDestinationAddress'] : [])]).map((missing) => {
      const { [missing]: _gone, ...rest } = base;
      return rest;
    }),
    // The same chain on both sides, or the hub as an end: not a route.
    fc.constantFrom({ ...base, sourceChainId: HUB }, { ...base, destChainId: HUB }, { ...base, amount: '0.0000001' }),
  ];
  if (kind === 'create') {
    breakages.push(
      breakField('userDestinationAddress', badAddress),
      breakField('refundAddress', badAddress),
      breakField('minAnonymitySet', badMinAnonymitySet),
    );
  }
  return fc
    .tuple(
      fc.oneof(...breakages),
      fc.dictionary(fc.constantFrom('__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty', 'extra'), anyJson, { maxKeys: 3 }),
      fc.boolean(),
    )
    .map(([broken, extra, extraFirst]) => (extraFirst ? { ...extra, ...broken } : { ...broken, ...extra }));
}

/** JSON text of a broken object, with prototype-pollution keys written literally (JSON.stringify would drop them). */
const jsonText = (value: Record<string, unknown>, pollute: string | null) => {
  const text = JSON.stringify(value);
  if (!pollute) return text;
  return text === '{}' ? `{${pollute}}` : `{${pollute},${text.slice(1)}`;
};
const pollution = fc.option(
  fc.constantFrom(
    '"__proto__":{"isAdmin":true}',
    '"constructor":{"prototype":{"polluted":1}}',
    '"__proto__":null',
    '"__proto__":[]',
    '"amount":"10","amount":"NaN"',
  ),
);

/** Bodies that are not a JSON object at all, or objects only a hand-written JSON text can hold. */
const notAnObject = fc.oneof(
  fc.constantFrom(
    '',
    ' ',
    'null',
    'true',
    '0',
    '-1',
    '"text"',
    '[]',
    '[{}]',
    '{',
    '}',
    '{"amount":}',
    "{'amount':'10'}",
    '{"a":1,}',
    'NaN',
    'Infinity',
    '\u0000',
    '\uFEFF{}',
    '{"amount":"10"',
    'undefined',
    '{}{}',
  ),
  fc.string({ unit: 'binary', maxLength: 200 }).filter((s) => !/^\s*\{/.test(s)),
  fc
    .jsonValue({ maxDepth: 3 })
    .filter((v) => typeof v !== 'object' || v === null || Array.isArray(v))
    .map((v) => JSON.stringify(v)),
  fc.integer({ min: 1_000, max: 20_000 }).map((depth) => '['.repeat(depth) + ']'.repeat(depth)),
  fc.integer({ min: 1_000, max: 20_000 }).map((depth) => `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`),
  // Number literals JSON.stringify never writes: beyond double range, underflowing to 0, beyond 2^53.
  fc
    .constantFrom('1e400', '-1e400', '1e-400', '9007199254740993')
    .map((n) => `{"sourceChainId":${n},"destChainId":3,"amount":"10","userDestinationAddress":"${RECIPIENT}"}`),
);
/** Create bodies, valid but for a number literal JSON.stringify never writes in a create-only field. */
const createOnlyLiterals = fc
  .constantFrom('1e400', '-0', '1e-400', '9007199254740993')
  .map((n) => `{"sourceChainId":1,"destChainId":3,"amount":"10","userDestinationAddress":"${RECIPIENT}","minAnonymitySet":${n}}`);

const contentType = fc.constantFrom(
  'application/json',
  'application/json; charset=utf-8',
  'application/json; charset=utf-16',
  'text/plain',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=x',
  'application/xml',
  '',
  '*/*',
  'application/json, text/plain',
  'APPLICATION/JSON',
  'application/vnd.api+json',
  'x'.repeat(2000),
);

/** Visible ASCII (header values cannot carry other characters). */
const headerText = fc.oneof(
  fc.string({ unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)), maxLength: 60 }),
  fc.constantFrom('Bearer', 'Bearer ', 'Basic Og==', `Bearer ${'a'.repeat(8_000)}`, 'null', 'undefined', '__proto__', '0', '-1'),
);

/** Odd and duplicate headers: credentials that mean nothing, lying lengths, forwarded-for chains. */
const oddHeaders = fc.array(
  fc.oneof(
    fc.tuple(
      fc.constantFrom(
        'authorization',
        'x-api-key',
        'Authorization',
        'X-API-KEY',
        'cookie',
        'x-forwarded-for',
        'x-real-ip',
        'forwarded',
        'origin',
        'accept',
        'x-request-id',
      ),
      headerText,
    ),
    fc.tuple(fc.constant('content-length'), fc.constantFrom('0', '1', '-1', 'abc', '99999999999999999999', '1e3', '65537', ' 5')),
    fc.tuple(fc.constant('transfer-encoding'), fc.constantFrom('chunked', 'gzip', 'identity, chunked')),
    fc.tuple(fc.constant('content-encoding'), fc.constantFrom('gzip', 'br', 'deflate')),
  ),
  { maxLength: 4 },
);

const queryString = fc.oneof(
  fc.constant(''),
  fc
    .array(fc.tuple(fc.constantFrom('chainId', 'search', '__proto__', 'constructor', 'x', 'chainId[]', 'a[b]'), headerText), { minLength: 1, maxLength: 4 })
    .map((pairs) => `?${pairs.map(([k, v]) => `${encode(k)}=${encode(v)}`).join('&')}`),
  fc.constantFrom('?', '?&&&', '?=', '?%', '?%zz=1', '?chainId=%E0%A4%A', `?${'a=1&'.repeat(2_000)}`),
);

// ---- properties -------------------------------------------------------------------------------------------

/** A route and a body broken for it (a quote ignores the create-only fields, so those are broken for creates only). */
const brokenPost = fc
  .constantFrom(...(['/api/private-route/quote', '/api/private-route'] as const))
  .chain((route) => brokenObject(route === '/api/private-route' ? 'create' : 'quote').map((object) => ({ route, object })));

const RUNS = Number(process.env.API_FUZZ_RUNS ?? 700);
const POST_ROUTES = ['/api/private-route/quote', '/api/private-route'] as const;

describe('fuzzing the public API with malformed requests', { timeout: 180_000 }, () => {
  let rowsBefore: number;
  let started: number;

  before(async () => {
    started = Date.now();
    rowsBefore = await transferRows();
    // The harness works: a well-formed quote is served.
    assert.equal(
      await send(
        { method: 'POST', path: '/api/private-route/quote', headers: [['content-type', 'application/json']], body: JSON.stringify(validQuote) },
        (s) => s === 200,
      ),
      200,
    );
  });

  test('quote and create: JSON objects with one broken field (types, NaN/Infinity/exponents, unicode, pollution keys) answer 4xx', async () => {
    await fc.assert(
      fc.asyncProperty(brokenPost, pollution, contentType, async ({ route, object }, pollute, type) => {
        await send({ method: 'POST', path: route, headers: [['content-type', type]], body: jsonText(object, pollute) });
      }),
      { numRuns: RUNS * 2 },
    );
  });

  test('quote and create: bodies that are not a JSON object, empty, too deep or with out-of-range number literals answer 4xx', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(fc.tuple(fc.constantFrom(...POST_ROUTES), notAnObject), fc.tuple(fc.constant('/api/private-route'), createOnlyLiterals)),
        contentType,
        async ([route, body], type) => {
          await send({ method: 'POST', path: route, headers: [['content-type', type]], body });
        },
      ),
      { numRuns: RUNS },
    );
  });

  test('quote and create: oversized bodies answer 413 whatever Content-Length claims (400 when it is no number)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...POST_ROUTES),
        fc.integer({ min: 64 * 1024 + 1, max: 400 * 1024 }),
        fc.constantFrom(null, '10', 'abc', '-1'),
        async (route, size, claimed) => {
          const padding = 'x'.repeat(size);
          const body = JSON.stringify({ ...validCreate, padding });
          const headers: Array<[string, string]> = [['content-type', 'application/json']];
          if (claimed !== null) headers.push(['content-length', claimed]);
          const status = await send({ method: 'POST', path: route, headers, body });
          // A Content-Length that is no byte count is refused as such; otherwise the bytes that arrived are counted.
          assert.equal(status, claimed === 'abc' || claimed === '-1' ? 400 : 413, `${size} bytes claiming ${claimed}`);
        },
      ),
      { numRuns: Math.ceil(RUNS / 10) },
    );
  });

  test('quote and create behind the abuse limits: odd and duplicate headers (keys, forwarded-for) with a broken body answer 4xx', async () => {
    await fc.assert(
      fc.asyncProperty(brokenPost, oddHeaders, queryString, async ({ route, object }, headers, query) => {
        const body = JSON.stringify(object);
        // A lying Content-Length with chunked encoding is only a header here; what matters is the answer.
        await send({ method: 'POST', path: `${route}${query}`, headers: [['content-type', 'application/json'], ...headers], body }, undefined, limitedApp);
      }),
      { numRuns: RUNS },
    );
  });

  test('GET /api/private-route/:routeId: traversal, encoded slashes, bad escapes, long and unknown ids answer 404 or 400', async () => {
    const ids = fc.oneof(
      fc.constantFrom(
        '..',
        '../..',
        '..%2F..%2Fetc%2Fpasswd',
        '%2e%2e%2f%2e%2e%2f',
        '%2F',
        '%5C',
        '%00',
        '%',
        '%zz',
        '%E0%A4%A',
        'rt_',
        `RT_${'A'.repeat(32)}`,
        `rt_${'g'.repeat(32)}`,
        `rt_${'0'.repeat(31)}`,
        `rt_${'0'.repeat(33)}`,
        `rt_${'0'.repeat(32)}%00`,
        `rt_${'0'.repeat(32)}%0A`,
        'quote%3F',
        'null',
        'undefined',
        '__proto__',
        'constructor',
        'toString',
        'a'.repeat(10_000),
        encodeURIComponent('\u202Ert_'),
        '%F0%9F%92%A9',
      ),
      fc.stringMatching(/^[0-9a-f]{32}$/).map((hex) => `rt_${hex}`),
      fc.string({ unit: 'binary', minLength: 1, maxLength: 100 }).map(encode),
      fc
        .string({ unit: 'binary', minLength: 1, maxLength: 100 })
        .map((text) => encodeURI(Buffer.from(text, 'utf8').toString('utf8')))
        .filter((s) => !s.includes('?') && !s.includes('#') && s !== '.' && s !== '..'),
    );
    await fc.assert(
      fc.asyncProperty(ids, queryString, oddHeaders, fc.constantFrom('GET', 'GET', 'GET', 'HEAD'), async (id, query, headers, method) => {
        const status = await send({
          method,
          path: `/api/private-route/${id}${query}`,
          headers: headers.filter(([name]) => name !== 'content-length' && name !== 'transfer-encoding'),
        });
        if (/^rt_[0-9a-f]{32}$/.test(id)) assert.ok(status === 404 || status === 401 || status === 429, `unknown routeId ${id} answered ${status}`);
      }),
      { numRuns: RUNS },
    );
  });

  test('GET of an existing route with junk statusTokens (Authorization, X-Status-Token, duplicates) answers the public view or 401, never the full one', async () => {
    const tokenHeader = fc.tuple(
      fc.constantFrom('authorization', 'Authorization', 'x-status-token', 'X-Status-Token'),
      fc.oneof(
        headerText,
        headerText.map((t) => `Bearer ${t}`),
        fc.constantFrom('Bearer st_', 'Bearer  ', 'bearer st_x', 'Basic st_x', `Bearer st_${'A'.repeat(43)}`),
      ),
    );
    const statuses = new Set<number>();
    await fc.assert(
      fc.asyncProperty(fc.array(tokenHeader, { maxLength: 3 }), queryString, async (headers, query) => {
        const status = await send(
          { method: 'GET', path: `/api/private-route/${existingRouteId}${query}`, headers },
          (s) => s === 200 || s === 401 || s === 429,
        );
        statuses.add(status);
        if (status === 200)
          assert.equal(
            (lastAnswer.data as Record<string, unknown>).userDestinationAddress,
            undefined,
            `a junk token read the full view: ${JSON.stringify(headers)}`,
          );
      }),
      { numRuns: Math.ceil(RUNS / 2) },
    );
    assert.deepEqual([...statuses].sort(), [200, 401], 'both the public view (no token) and the refusal (a wrong one) were met');
  });

  test('GET /api/bridge/tokens: missing, malformed, duplicate and unserved chainId and long search answer 4xx', async () => {
    const chainIdValue = fc.oneof(
      fc.constantFrom('', 'abc', '-1', '0', '1.5', '1e3', '0x1', ' 1', '1 ', '+1', '01', '999', String(2 ** 53), '9'.repeat(40), 'NaN', 'Infinity', '１', '١'),
      nastyString.filter((s) => !/^[1-9]\d*$/.test(s)),
    );
    const query = fc.oneof(
      fc.array(chainIdValue, { minLength: 1, maxLength: 3 }).map((values) => values.map((v) => `chainId=${encode(v)}`).join('&')),
      fc.constantFrom(
        '',
        'chainid=1',
        'chainId[]=1',
        'chainId[0]=1',
        '__proto__=1',
        'constructor=1',
        'search=usdc',
        `chainId=1&search=${'s'.repeat(65)}`,
        '%zz',
        'chainId=%E0%A4%A',
      ),
      fc.tuple(chainIdValue, headerText).map(([c, s]) => `chainId=${encode(c)}&search=${encode(s)}`),
    );
    await fc.assert(
      fc.asyncProperty(query, oddHeaders, async (q, headers) => {
        await send({
          method: 'GET',
          path: `/api/bridge/tokens?${q}`,
          headers: headers.filter(([name]) => name !== 'content-length' && name !== 'transfer-encoding'),
        });
      }),
      { numRuns: RUNS },
    );
  });

  test('GET /api/bridge/chains: odd headers and query strings are served or refused in the envelope, never 5xx', async () => {
    await fc.assert(
      fc.asyncProperty(queryString, oddHeaders, async (query, headers) => {
        await send(
          { method: 'GET', path: `/api/bridge/chains${query}`, headers: headers.filter(([name]) => name !== 'content-length' && name !== 'transfer-encoding') },
          (status) => status === 200 || CLIENT_ERRORS.has(status),
        );
      }),
      { numRuns: Math.ceil(RUNS / 2) },
    );
  });

  test('unknown paths and wrong methods answer 404 or 405', async () => {
    const known = [
      '/api/private-route/quote',
      '/api/private-route',
      `/api/private-route/rt_${'0'.repeat(32)}`,
      '/api/bridge/chains',
      '/api/bridge/tokens?chainId=1',
    ];
    const wrongMethod = fc
      .tuple(fc.constantFrom('PUT', 'DELETE', 'PATCH', 'OPTIONS', 'PROPFIND'), fc.constantFrom(...known))
      .map(([method, p]) => ({ method, path: p }));
    const postToGetRoute = fc
      .constantFrom('/api/bridge/chains', '/api/bridge/tokens?chainId=1', `/api/private-route/rt_${'0'.repeat(32)}`)
      .map((p) => ({ method: 'POST', path: p }));
    const getToPostRoute = fc.constant({ method: 'GET', path: '/api/private-route' });
    const unknownPath = fc
      .tuple(
        fc.constantFrom(
          '',
          '/api',
          '/api/',
          '/api/bridge',
          '/api/bridge/',
          '/api/private-route/quote/',
          '/api/v2',
          '/API/bridge/chains',
          '//api/bridge/chains',
          '/api/bridge/chains/x',
        ),
        fc.webPath(),
      )
      .map(([prefix, rest]) => ({ method: 'GET', path: `${prefix}${rest}` || '/x' }))
      .filter((r) => !/^\/api\/(bridge\/(chains|tokens)|private-route\/[^/]+)\/?$/.test(r.path.split('?')[0]!) && r.path.startsWith('/'));
    const extraSegments = fc
      .constantFrom('/api/private-route/quote/x', `/api/private-route/rt_${'0'.repeat(32)}/status`, '/api/private-route/%2F/x', '/api/bridge/chains/../tokens')
      .map((p) => ({ method: 'POST', path: p }));
    await fc.assert(
      fc.asyncProperty(fc.oneof(wrongMethod, postToGetRoute, getToPostRoute, unknownPath, extraSegments), fc.option(notAnObject), async (request, body) => {
        const withBody = request.method !== 'GET' && request.method !== 'HEAD' && body !== null;
        const status = await send({ ...request, headers: [['content-type', 'application/json']], body: withBody ? body : undefined });
        assert.ok(status !== 400 || request.method === 'POST', `${request.method} ${request.path}: 400 where no route exists`);
      }),
      { numRuns: RUNS },
    );
  });

  test('nothing was created: no transfer row, no create that returned, no request logged as failed', async () => {
    assert.equal(await transferRows(), rowsBefore, 'a rejected request left a transfer row');
    const returned = createCalls.filter((c) => c.created);
    assert.deepEqual(returned, [], 'the transfer service created a transfer for a malformed request');
    const failures = logLines.filter((line) => (JSON.parse(line) as { level: string }).level === 'error');
    assert.deepEqual(failures, [], 'a malformed request was logged as a server failure');
    assert.ok(requestsSent >= 5_000 || RUNS < 700, `only ${requestsSent} requests were sent`);
    // The fuzz reached the codes of each kind of malformed request (the catalogue is not just one catch-all).
    for (const code of [
      'INVALID_JSON',
      'INVALID_REQUEST',
      'INVALID_AMOUNT',
      'INVALID_ADDRESS',
      'UNSUPPORTED_CHAIN',
      'UNSUPPORTED_TOKEN',
      'UNKNOWN_ROUTE',
      'UNKNOWN_ENDPOINT',
      'STATUS_TOKEN_MISMATCH',
      'INVALID_API_KEY',
      'BODY_TOO_LARGE',
    ] as const) {
      assert.ok(codesSeen.has(code), `no answer carried ${code}; seen: ${[...codesSeen].join(', ')}`);
    }
    const seconds = (Date.now() - started) / 1000;
    process.stdout.write(
      `# api fuzz: ${requestsSent} requests in ${seconds.toFixed(1)} s; create reached ${createCalls.length} times (refused by the quote); ${logLines.length} log lines\n`,
    );
  });
});
