import assert from 'node:assert/strict';
import { freeNetwork } from '../../src/quote/gasCost.ts';
import { describe, test } from 'node:test';
import { keccak256, toHex, type Address, type Hex } from 'viem';
import type { ChainClients } from '../../src/chain/clients.ts';
import type { TxSender } from '../../src/chain/txSender.ts';
import type { BridgeQuoteRequest, DepositAddressBridge } from '../../src/providers/bridge.ts';
import { BridgeUnavailableError } from '../../src/providers/bridge.ts';
import { withCatalogCache } from '../../src/providers/cachedBridge.ts';
import { createCctpBridge } from '../../src/providers/cctp/adapter.ts';
import { createAttestationPoller, type AttestationProgress, type PollerTimers } from '../../src/providers/cctp/attestationPoller.ts';
import { cctpNetwork } from '../../src/providers/cctp/chains.ts';
import { createIrisClient, IrisRateLimitedError, IrisRequestError, IrisUnavailableError, type IrisClient } from '../../src/providers/cctp/iris.ts';
import type { AttestationStatus } from '../../src/providers/cctp/types.ts';
import type { PrivacyPool } from '../../src/providers/privacyPool.ts';
import { createRelayBridge } from '../../src/providers/relay/adapter.ts';
import { createTtlCache, memoize } from '../../src/providers/ttlCache.ts';
import { createCctpQuoteService } from '../../src/quote/cctpQuoteService.ts';
import { quoteKey, withQuoteCache } from '../../src/quote/quoteCache.ts';
import { createQuoteService, QuoteError, type QuoteService, type ResolvedQuote } from '../../src/quote/quoteService.ts';
import { createInMemoryPriceEpochs } from '../../src/quote/priceEpochs.ts';

const TIMEOUT = { timeout: 30_000 };

// --- a fake clock driving the poller's timers --------------------------------------------------------

/** Lets every pending promise chain run (setImmediate comes after all microtasks). */
const flush = () => new Promise<void>((resolve) => setImmediate(resolve));

class FakeClock implements PollerTimers {
  t = 0;
  private seq = 0;
  readonly timers = new Map<number, { at: number; fn: () => void }>();
  now = () => this.t;
  setTimeout = (fn: () => void, ms: number) => {
    const id = ++this.seq;
    this.timers.set(id, { at: this.t + Math.max(0, ms), fn });
    return id;
  };
  clearTimeout = (handle: unknown) => {
    this.timers.delete(handle as number);
  };
  /** Moves time forward by `ms`, firing due timers in order and letting the promises they start settle. */
  async advance(ms: number) {
    const end = this.t + ms;
    for (;;) {
      await flush();
      let next: [number, { at: number; fn: () => void }] | undefined;
      for (const entry of this.timers) if (entry[1].at <= end && (!next || entry[1].at < next[1].at)) next = entry;
      if (!next) break;
      this.timers.delete(next[0]);
      this.t = next[1].at;
      next[1].fn();
    }
    this.t = end;
    await flush();
  }
}

const burnHash = (label: string | number): Hex => keccak256(toHex(`burn ${label}`));
const MESSAGE: Hex = '0x1234';
const ATTESTATION: Hex = '0xabcd';

/**
 * Iris' messages endpoint as the poller sees it: a burn is pending until its attestation time, then complete.
 * `failNext` makes the next lookups throw instead.
 */
function fakeIris(clock: FakeClock, attestedAt: (txHash: Hex) => number = () => Number.POSITIVE_INFINITY) {
  const calls: { at: number; domain: number; txHash: Hex }[] = [];
  const failures: Error[] = [];
  const iris: Pick<IrisClient, 'getMessages'> = {
    async getMessages(domain, txHash): Promise<AttestationStatus> {
      calls.push({ at: clock.now(), domain, txHash });
      const failure = failures.shift();
      if (failure) throw failure;
      if (clock.now() >= attestedAt(txHash)) return { state: 'complete', message: MESSAGE, attestation: ATTESTATION };
      return { state: 'pending', delayReason: 'waiting' };
    },
  };
  return { iris, calls, failNext: (...errors: Error[]) => failures.push(...errors) };
}

/** The most lookups in any window of `windowMs` starting at a lookup. */
function busiestWindow(times: number[], windowMs = 1000): number {
  let most = 0;
  for (let i = 0; i < times.length; i++) most = Math.max(most, times.filter((t) => t >= times[i]! && t < times[i]! + windowMs).length);
  return most;
}

describe('attestation poller', () => {
  test('all burns together stay within the request budget', TIMEOUT, async () => {
    const clock = new FakeClock();
    const fake = fakeIris(clock);
    const poller = createAttestationPoller({ iris: fake.iris, maxRequestsPerSecond: 10, timers: clock });
    const waits = Array.from({ length: 50 }, (_, i) => poller.awaitAttestation(6, burnHash(i)).catch(() => undefined));
    await clock.advance(60_000);
    assert.ok(fake.calls.length > 50, `every burn was looked up (${fake.calls.length} lookups)`);
    assert.ok(busiestWindow(fake.calls.map((c) => c.at)) <= 10, `at most 10 lookups in any second, saw ${busiestWindow(fake.calls.map((c) => c.at))}`);
    assert.equal(new Set(fake.calls.slice(0, 50).map((c) => c.txHash)).size, 50, 'every burn gets its first check before any gets a second');
    poller.close();
    await Promise.all(waits);
  });

  test('per burn: the first check at once, then further apart, capped', TIMEOUT, async () => {
    const clock = new FakeClock();
    const fake = fakeIris(clock);
    const progress: AttestationProgress[] = [];
    const poller = createAttestationPoller({ iris: fake.iris, initialIntervalMs: 1000, maxIntervalMs: 10_000, timers: clock });
    const wait = poller.awaitAttestation(6, burnHash('slow'), { onProgress: (p) => progress.push(p) }).catch((error: unknown) => error);
    await clock.advance(120_000);
    const times = fake.calls.map((c) => c.at);
    const gaps = times.slice(1).map((t, i) => t - times[i]!);
    assert.equal(times[0], 0, 'checked at registration');
    assert.deepEqual(gaps.slice(0, 4), [1000, 1250, 1562.5, 1953.125]);
    assert.ok(
      gaps.every((gap, i) => i === 0 || gap >= gaps[i - 1]!),
      `gaps never shrink: ${gaps.join(', ')}`,
    );
    assert.equal(Math.max(...gaps), 10_000, 'capped at maxIntervalMs');
    assert.equal(gaps.at(-1), 10_000);
    assert.deepEqual(
      progress.at(-1),
      { attestation: 'pending', delayReason: 'waiting', checks: fake.calls.length, nextCheckInMs: 10_000 },
      'reported when the lookup answered',
    );
    poller.close();
    assert.ok((await wait) instanceof BridgeUnavailableError, 'close rejects the waiter with a retryable error');
  });

  test('an attested burn resolves every waiter of it from one lookup; identical lookups are shared', TIMEOUT, async () => {
    const clock = new FakeClock();
    const tx = burnHash('shared');
    const fake = fakeIris(clock, (hash) => (hash === tx ? 2_000 : Number.POSITIVE_INFINITY));
    const poller = createAttestationPoller({ iris: fake.iris, initialIntervalMs: 1000, timers: clock });
    const a = poller.awaitAttestation(6, tx);
    const b = poller.awaitAttestation(6, tx.toUpperCase().replace('0X', '0x') as Hex);
    await clock.advance(500);
    const c = poller.awaitAttestation(6, tx); // joins while the burn is pending
    assert.equal(poller.pending, 1);
    await clock.advance(5_000);
    const results = await Promise.all([a, b, c]);
    for (const result of results) assert.deepEqual(result, { state: 'complete', message: MESSAGE, attestation: ATTESTATION });
    assert.deepEqual(
      fake.calls.map((call) => call.at),
      [0, 1000, 2250],
      'one lookup per check for three waiters',
    );
    assert.equal(poller.pending, 0);
    assert.equal(clock.timers.size, 0, 'no timer once nothing is pending');
    poller.close();
  });

  test('a 429 stops every lookup until retryAfterMs has passed, and the waiters are told', TIMEOUT, async () => {
    const clock = new FakeClock();
    const fake = fakeIris(clock, () => 400_000);
    const poller = createAttestationPoller({ iris: fake.iris, maxRequestsPerSecond: 10, initialIntervalMs: 1000, timers: clock });
    const progress = new Map<number, AttestationProgress[]>();
    const waits = Array.from({ length: 5 }, (_, i) => {
      progress.set(i, []);
      return poller.awaitAttestation(6, burnHash(`limited ${i}`), { onProgress: (p) => progress.get(i)!.push(p) });
    });
    await clock.advance(10_000);
    const before = fake.calls.length;
    fake.failNext(new IrisRateLimitedError('iris rate limit hit', 300_000));
    await clock.advance(5_000);
    assert.ok(fake.calls.length > before, 'the next lookup met the 429');
    const limitedAt = fake.calls[before]!.at;
    await clock.advance(limitedAt + 300_000 - 1 - clock.now());
    assert.equal(fake.calls.length, before + 1, 'only the lookup that met the 429 was sent during the block');
    for (const [i, reports] of progress) {
      assert.ok(
        reports.some((p) => p.rateLimitedForMs !== undefined && p.rateLimitedForMs > 290_000),
        `burn ${i} heard of the rate limit: ${JSON.stringify(reports.at(-1))}`,
      );
    }
    await clock.advance(1_000);
    const resumed = fake.calls.slice(before + 1);
    assert.ok(resumed.length > 0 && resumed[0]!.at >= limitedAt + 300_000, `lookups resume after the block (first at ${resumed[0]?.at})`);
    await clock.advance(100_000);
    assert.equal((await Promise.all(waits)).length, 5, 'every burn completes after the block');
  });

  test('transient failures are retried with backoff; an error retrying cannot fix rejects the burn', TIMEOUT, async () => {
    const clock = new FakeClock();
    const tx = burnHash('flaky');
    const fake = fakeIris(clock, () => 0);
    const poller = createAttestationPoller({ iris: fake.iris, initialIntervalMs: 1000, timers: clock });
    const progress: AttestationProgress[] = [];
    fake.failNext(
      new IrisUnavailableError('iris error (HTTP 500)'),
      new IrisUnavailableError('iris error (HTTP 502)'),
      new IrisUnavailableError('iris unreachable'),
    );
    const done = poller.awaitAttestation(6, tx, { onProgress: (p) => progress.push(p) });
    await clock.advance(10_000);
    assert.equal((await done).state, 'complete');
    assert.deepEqual(
      progress.map((p) => p.transientFailures),
      [1, 2, 3],
    );
    assert.deepEqual(
      fake.calls.map((c) => c.at),
      [0, 1000, 2250, 3812.5],
    );

    fake.failNext(new IrisRequestError('iris rejected GET /v2/messages/6 (HTTP 400)', 400));
    const refused = assert.rejects(poller.awaitAttestation(6, burnHash('bad')), IrisRequestError);
    await clock.advance(1);
    await refused;
    assert.equal(poller.pending, 0);
    poller.close();
  });

  test('a cancelled waiter leaves at once; the burn stops being looked up once nobody waits for it', TIMEOUT, async () => {
    const clock = new FakeClock();
    const fake = fakeIris(clock);
    const poller = createAttestationPoller({ iris: fake.iris, initialIntervalMs: 1000, timers: clock });
    const tx = burnHash('cancelled');
    const first = new AbortController();
    const second = new AbortController();
    const a = poller.awaitAttestation(6, tx, { signal: first.signal });
    const b = poller.awaitAttestation(6, tx, { signal: second.signal });
    await clock.advance(3_000);
    first.abort(new Error('activity cancelled'));
    await assert.rejects(a, /activity cancelled/);
    const afterFirst = fake.calls.length;
    await clock.advance(5_000);
    assert.ok(fake.calls.length > afterFirst, 'the other waiter still gets lookups');
    second.abort(new Error('activity cancelled too'));
    await assert.rejects(b, /cancelled too/);
    assert.equal(poller.pending, 0);
    const afterBoth = fake.calls.length;
    await clock.advance(60_000);
    assert.equal(fake.calls.length, afterBoth, 'no lookups for a burn nobody waits for');
    assert.equal(clock.timers.size, 0);
    const aborted = new AbortController();
    aborted.abort(new Error('already cancelled'));
    await assert.rejects(poller.awaitAttestation(6, tx, { signal: aborted.signal }), /already cancelled/);
    poller.close();
  });

  test('close rejects the waiters with a retryable error and leaves no timer; later waits are refused', TIMEOUT, async () => {
    const clock = new FakeClock();
    const fake = fakeIris(clock);
    const poller = createAttestationPoller({ iris: fake.iris, timers: clock });
    const waits = [poller.awaitAttestation(6, burnHash('x')), poller.awaitAttestation(3, burnHash('y'))];
    await clock.advance(2_000);
    assert.ok(clock.timers.size > 0);
    poller.close();
    for (const wait of waits) await assert.rejects(wait, (error: unknown) => error instanceof BridgeUnavailableError && error.transient);
    assert.equal(clock.timers.size, 0, 'no timer left running');
    const calls = fake.calls.length;
    await clock.advance(60_000);
    assert.equal(fake.calls.length, calls);
    await assert.rejects(poller.awaitAttestation(6, burnHash('z')), /closed/);
  });

  test('with real timers: a burn attested after a few lookups resolves and leaves no timer behind', TIMEOUT, async () => {
    let calls = 0;
    const poller = createAttestationPoller({
      iris: { getMessages: async () => (++calls >= 3 ? { state: 'complete', message: MESSAGE, attestation: ATTESTATION } : { state: 'pending' }) },
      initialIntervalMs: 20,
    });
    assert.equal((await poller.awaitAttestation(6, burnHash('real'))).attestation, ATTESTATION);
    assert.equal(calls, 3);
    poller.close();
  });
});

// --- caches --------------------------------------------------------------------------------------

describe('ttl cache', () => {
  test('reuses a value for ttlMs after it resolved, then loads again', TIMEOUT, async () => {
    let t = 0;
    let loads = 0;
    const get = memoize(
      1000,
      async () => ++loads,
      () => t,
    );
    assert.equal(await get(), 1);
    t = 999;
    assert.equal(await get(), 1);
    t = 1000;
    assert.equal(await get(), 2);
  });

  test('concurrent callers share one load (single flight)', TIMEOUT, async () => {
    let loads = 0;
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const cache = createTtlCache<number>({ ttlMs: 0 });
    const load = async () => {
      loads++;
      await gate;
      return 7;
    };
    const all = Promise.all([cache.get('k', load), cache.get('k', load), cache.get('k', load)]);
    release();
    assert.deepEqual(await all, [7, 7, 7]);
    assert.equal(loads, 1);
    assert.equal(await cache.get('k', load), 7);
    assert.equal(loads, 2, 'ttl 0 keeps nothing once settled');
  });

  test('a failed load is not cached: its callers get the error, the next caller loads again', TIMEOUT, async () => {
    const cache = createTtlCache<string>({ ttlMs: 60_000 });
    let loads = 0;
    const load = async () => {
      loads++;
      if (loads === 1) throw new Error('provider down');
      return 'ok';
    };
    const failed = await Promise.allSettled([cache.get('k', load), cache.get('k', load)]);
    assert.deepEqual(
      failed.map((r) => r.status),
      ['rejected', 'rejected'],
    );
    assert.equal(loads, 1);
    assert.equal(await cache.get('k', load), 'ok');
    assert.equal(await cache.get('k', load), 'ok');
    assert.equal(loads, 2);
  });

  test('keeps at most maxEntries keys, dropping the oldest', TIMEOUT, async () => {
    const cache = createTtlCache<number>({ ttlMs: 60_000, maxEntries: 3 });
    for (let i = 0; i < 10; i++) await cache.get(String(i), async () => i);
    assert.equal(cache.size, 3);
    let reloaded = false;
    await cache.get('0', async () => {
      reloaded = true;
      return 0;
    });
    assert.ok(reloaded, 'the oldest key was dropped');
  });
});

// --- provider fakes speaking the providers' HTTP APIs, counting requests ---------------------------

const CHAINS = [1, 2, 3];
const usdcOn = (chainId: number): Address => `0x${String(chainId).repeat(40)}` as Address;

/** Relay's API for three chains with USDC: /chains, /currencies/v2, /quote/v2 (0.1 % fee), /currencies/token/price. */
function fakeRelay() {
  const requests: string[] = [];
  const fetch = (async (input: string | URL | Request, init?: RequestInit) => {
    const url = new URL(String(input));
    requests.push(`${init?.method ?? 'GET'} ${url.pathname}`);
    const body = init?.body ? (JSON.parse(String(init.body)) as Record<string, unknown>) : {};
    const reply = (value: unknown) => new Response(JSON.stringify(value), { status: 200, headers: { 'content-type': 'application/json' } });
    switch (url.pathname) {
      case '/chains':
        return reply({ chains: CHAINS.map((id) => ({ id, name: `c${id}`, displayName: `Chain ${id}`, vmType: 'evm' })) });
      case '/currencies/v2':
        return reply(
          (body.chainIds as number[]).map((chainId) => ({ chainId, address: usdcOn(chainId), symbol: 'USDC', name: 'USD Coin', decimals: 6, vmType: 'evm' })),
        );
      case '/quote/v2': {
        const out = (BigInt(body.amount as string) * 999n) / 1000n;
        return reply({
          steps: [{ id: 'deposit' }],
          details: { currencyIn: { amount: body.amount }, currencyOut: { amount: out.toString() }, timeEstimate: 10 },
        });
      }
      case '/currencies/token/price':
        return reply({ price: 1 });
      default:
        return new Response('not found', { status: 404 });
    }
  }) as typeof globalThis.fetch;
  return { bridge: createRelayBridge({ baseUrl: 'https://relay.test', fetch }), requests };
}

const fakePool = (hubChainId: number): PrivacyPool =>
  ({
    chainId: hubChainId,
    fees: async () => ({ depositFeeBps: 50, withdrawalFeeBps: 10, minimumDeposit: 1_000_000n }),
  }) as unknown as PrivacyPool;

function relayQuotes(bridge: DepositAddressBridge): QuoteService {
  return createQuoteService({
    bridge,
    pool: fakePool(2),
    hubChainId: 2,
    hubTokenSymbol: 'USDC',
    feePolicy: { feeBps: 150n, feeMinUsd: '1' },
    networkCosts: freeNetwork,
    priceEpochs: createInMemoryPriceEpochs({ epochSeconds: 3600, marginBps: 50 }),
    priceMarginBps: 50,
    poolEtaSeconds: 60,
    previewAccount: `0x${'9'.repeat(40)}`,
  });
}

const REQUEST = { sourceChainId: 1, destChainId: 3, amount: '100' };

describe('catalogue and price cache (deposit-address mode)', () => {
  test('chains, token lists and prices are read once; quotes and statuses always reach the provider', TIMEOUT, async () => {
    const relay = fakeRelay();
    const bridge = withCatalogCache(relay.bridge);
    await Promise.all([bridge.listChains(), bridge.listChains()]);
    await bridge.listChains();
    await bridge.listTokens(1);
    await bridge.listTokens(1);
    await bridge.listTokens(2);
    await bridge.tokenUsdPrice(1, usdcOn(1));
    await bridge.tokenUsdPrice(1, usdcOn(1).toUpperCase().replace('0X', '0x') as Address);
    const quote: BridgeQuoteRequest = {
      user: usdcOn(9),
      recipient: usdcOn(9),
      refundTo: usdcOn(9),
      originChainId: 1,
      destinationChainId: 2,
      originCurrency: usdcOn(1),
      destinationCurrency: usdcOn(2),
      amount: 1_000_000n,
      tradeType: 'EXACT_INPUT',
      useDepositAddress: false,
    };
    await bridge.quote(quote);
    await bridge.quote(quote);
    assert.deepEqual(relay.requests, [
      'GET /chains',
      'POST /currencies/v2',
      'POST /currencies/v2',
      'GET /currencies/token/price',
      'POST /quote/v2',
      'POST /quote/v2',
    ]);
  });

  test('an expired catalogue is read again', TIMEOUT, async () => {
    let t = 0;
    const relay = fakeRelay();
    const bridge = withCatalogCache(relay.bridge, { catalogTtlMs: 1000, priceTtlMs: 100, now: () => t });
    await bridge.listChains();
    await bridge.tokenUsdPrice(1, usdcOn(1));
    t = 500;
    await bridge.listChains();
    await bridge.tokenUsdPrice(1, usdcOn(1));
    t = 1000;
    await bridge.listChains();
    assert.deepEqual(relay.requests, ['GET /chains', 'GET /currencies/token/price', 'GET /currencies/token/price', 'GET /chains']);
  });
});

describe('quote cache', () => {
  /** A quote service that counts its computations and can be made to fail. */
  function countingService() {
    const inner = relayQuotes(withCatalogCache(fakeRelay().bridge));
    const state = { computations: 0, fail: false };
    const service: QuoteService = {
      ...inner,
      async quote(request, options) {
        state.computations++;
        if (state.fail) throw new QuoteError('no route: liquidity', { code: 'NO_ROUTE' });
        return inner.quote(request, options);
      },
    };
    return { service, state };
  }

  test('an identical request within the TTL gets the same quote without a new computation; concurrent ones share one', TIMEOUT, async () => {
    let t = 0;
    const { service, state } = countingService();
    const quotes = withQuoteCache(service, { ttlMs: 5000, now: () => t });
    const [a, b] = await Promise.all([quotes.quote(REQUEST), quotes.quote({ ...REQUEST, tokenSymbol: 'usdc' })]);
    assert.deepEqual(a, b);
    assert.equal(state.computations, 1);
    t = 4999;
    assert.deepEqual(await quotes.quote({ ...REQUEST, destTokenSymbol: 'USDC' }), a);
    assert.equal(state.computations, 1);
    await quotes.quote({ ...REQUEST, amount: '100.5' });
    assert.equal(state.computations, 2, 'another amount is another quote');
    t = 5000;
    await quotes.quote(REQUEST);
    assert.equal(state.computations, 3, 'expired after the TTL');
  });

  test('one client’s cached quote is not another’s: how fast a quote comes back tells no client who else asked', TIMEOUT, async () => {
    const { service, state } = countingService();
    const quotes = withQuoteCache(service, { ttlMs: 60_000 });
    await quotes.quote(REQUEST, { cacheScope: 'client-a' });
    await quotes.quote(REQUEST, { cacheScope: 'client-a' });
    assert.equal(state.computations, 1, 'a client polling its quote is answered from the cache');
    await quotes.quote(REQUEST, { cacheScope: 'client-b' });
    assert.equal(state.computations, 2, 'another client’s identical request is priced afresh');
    await quotes.quote(REQUEST);
    assert.equal(state.computations, 3, 'an unscoped request shares neither');
  });

  test('fresh (a create) always computes; each caller gets its own copy; failures are not kept', TIMEOUT, async () => {
    const { service, state } = countingService();
    const quotes = withQuoteCache(service, { ttlMs: 60_000 });
    const first = await quotes.quote(REQUEST);
    await quotes.quote(REQUEST, { fresh: true });
    assert.equal(state.computations, 2);
    first.quote.quotedOutputAmount = '0';
    first.quote.route.push('tampered');
    const second: ResolvedQuote = await quotes.quote(REQUEST);
    assert.notEqual(second.quote.quotedOutputAmount, '0');
    assert.equal(second.quote.route.length, 4);

    state.fail = true;
    await assert.rejects(quotes.quote({ ...REQUEST, amount: '7' }), QuoteError);
    state.fail = false;
    await quotes.quote({ ...REQUEST, amount: '7' });
    assert.equal(state.computations, 4, 'the failed quote was computed again');
  });

  test('the key ignores what does not change the quote and keeps the amount as sent', () => {
    assert.equal(quoteKey(REQUEST), quoteKey({ ...REQUEST, tokenSymbol: 'usdc', destTokenSymbol: 'Usdc' }));
    assert.equal(quoteKey(REQUEST), quoteKey({ ...REQUEST, userDestinationAddress: usdcOn(5) } as typeof REQUEST));
    assert.notEqual(quoteKey({ ...REQUEST, tokenSymbol: 'WETH' }), quoteKey(REQUEST));
    assert.notEqual(quoteKey({ ...REQUEST, tokenSymbol: 'WETH' }), quoteKey({ ...REQUEST, tokenSymbol: 'WETH', destTokenSymbol: 'USDC' }));
    assert.notEqual(quoteKey({ ...REQUEST, amount: '100.0' }), quoteKey(REQUEST));
  });
});

// --- figures: provider calls per quote and Iris lookups per burn, before and after -----------------

describe('provider calls (figures for issue 9)', () => {
  test('deposit-address mode: Relay requests per quote', TIMEOUT, async (t) => {
    const relay = fakeRelay();
    const quotes = withQuoteCache(relayQuotes(withCatalogCache(relay.bridge)), { ttlMs: 5000 });
    const count = async (request: typeof REQUEST) => {
      const before = relay.requests.length;
      await quotes.quote(request);
      return relay.requests.slice(before);
    };
    const cold = await count(REQUEST);
    const warm = await count({ ...REQUEST, amount: '200' });
    const identical = await count({ ...REQUEST, amount: '200' });
    t.diagnostic(`relay requests per quote: cold ${cold.length}, another amount ${warm.length}, identical within QUOTE_CACHE_SECONDS ${identical.length}`);
    assert.equal(cold.length, 8, cold.join(', '));
    assert.deepEqual(warm, ['POST /quote/v2', 'POST /quote/v2']);
    assert.deepEqual(identical, []);
  });

  test('burn-and-mint mode: Iris fee requests per quote', TIMEOUT, async (t) => {
    const requests: string[] = [];
    const fees = [
      { finalityThreshold: 1000, minimumFee: 1 },
      { finalityThreshold: 2000, minimumFee: 0 },
    ];
    const iris = createIrisClient({
      baseUrl: 'https://iris.test',
      fetch: (async (input: string | URL | Request) => {
        requests.push(new URL(String(input)).pathname);
        return new Response(JSON.stringify(fees), { status: 200 });
      }) as typeof globalThis.fetch,
    });
    const mainnet = cctpNetwork('mainnet');
    const [source, hub, dest] = [1, 8453, 42161];
    const cctp = createCctpBridge({ iris, chains: mainnet, clients: {} as ChainClients, sender: {} as TxSender, finality: 'fast' });
    const quotes = withQuoteCache(
      createCctpQuoteService({
        bridge: cctp,
        pool: fakePool(hub),
        hubChainId: hub,
        enabledChainIds: [source, hub, dest],
        feePolicy: { feeBps: 150n, feeMinUsd: '1' },
        networkCosts: freeNetwork,
        poolEtaSeconds: 60,
        finality: 'fast',
      }),
      { ttlMs: 5000 },
    );
    const request = { sourceChainId: source, destChainId: dest, amount: '100' };
    const count = async (r: typeof request) => {
      const before = requests.length;
      await quotes.quote(r);
      return requests.length - before;
    };
    const cold = await count(request);
    const concurrent = await Promise.all([1, 2, 3].map((i) => count({ ...request, amount: String(100 + i) })));
    const identical = await count(request);
    t.diagnostic(`iris requests per quote: cold ${cold}, another amount ${concurrent[0]}, identical ${identical} (before: 2 per quote)`);
    assert.equal(cold, 2, 'source→hub and hub→destination fees');
    assert.deepEqual(concurrent, [0, 0, 0]);
    assert.equal(identical, 0);
  });

  test('Iris lookups per attested burn, alone and with 20 concurrent burns', TIMEOUT, async (t) => {
    /** The previous loop: one lookup per poll interval per burn until attested. */
    const before = (attestedAfterMs: number, intervalMs = 1000) => Math.floor(attestedAfterMs / intervalMs) + 1;
    const measure = async (burns: number, attestedAfterMs: number) => {
      const clock = new FakeClock();
      const fake = fakeIris(clock, () => attestedAfterMs);
      const poller = createAttestationPoller({ iris: fake.iris, maxRequestsPerSecond: 10, initialIntervalMs: 1000, timers: clock });
      const done: number[] = [];
      const waits = Array.from({ length: burns }, (_, i) => poller.awaitAttestation(6, burnHash(`${burns}/${i}`)).then(() => done.push(clock.now())));
      await clock.advance(attestedAfterMs + 60_000);
      await Promise.all(waits);
      poller.close();
      const times = fake.calls.map((c) => c.at);
      return { perBurn: fake.calls.length / burns, peakPerSecond: busiestWindow(times), lastDoneAfterAttestationMs: Math.max(...done) - attestedAfterMs };
    };
    for (const [label, attestedAfterMs] of [
      ['fast (20 s)', 20_000],
      ['standard (15 min)', 15 * 60_000],
    ] as const) {
      const one = await measure(1, attestedAfterMs);
      const twenty = await measure(20, attestedAfterMs);
      t.diagnostic(
        `${label}: lookups per burn before ${before(attestedAfterMs)}, after ${one.perBurn} (alone) / ${twenty.perBurn} (20 concurrent); ` +
          `peak lookups/s with 20 burns before 20, after ${twenty.peakPerSecond}; worst extra wait after attestation ${Math.round(twenty.lastDoneAfterAttestationMs)} ms`,
      );
      assert.ok(twenty.peakPerSecond <= 10);
      assert.ok(one.perBurn < before(attestedAfterMs));
      assert.ok(twenty.lastDoneAfterAttestationMs <= 10_000 + 2_000, 'an attested burn is noticed within the capped interval plus the queue');
    }
  });
});
