import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { getAddress } from 'viem';
import { BridgeRouteError, BridgeUnavailableError, type BridgeQuoteRequest } from '../../src/providers/bridge.ts';
import { createRelayBridge } from '../../src/providers/relay/adapter.ts';

const BASE_URL = 'https://relay.test';
const API_KEY = 'sk-test-0123456789abcdef';

interface Recorded {
  method: string;
  url: URL;
  headers: Headers;
  body: unknown;
}

type Handler = (req: Recorded) => Response | Promise<Response>;

/** A fetch stand-in that records every request and answers with `handler`. */
function fakeFetch(handler: Handler) {
  const calls: Recorded[] = [];
  const fetch = (async (input: string | URL | Request, init?: RequestInit) => {
    const req: Recorded = {
      method: init?.method ?? 'GET',
      url: new URL(String(input)),
      headers: new Headers(init?.headers),
      body: typeof init?.body === 'string' ? JSON.parse(init.body) : undefined,
    };
    calls.push(req);
    return handler(req);
  }) as typeof globalThis.fetch;
  return { fetch, calls };
}

const json = (body: unknown, status = 200) => new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });

function bridgeWith(handler: Handler, extra: { apiKey?: string; timeoutMs?: number } = { apiKey: API_KEY }) {
  const fake = fakeFetch(handler);
  return { bridge: createRelayBridge({ baseUrl: `${BASE_URL}/`, fetch: fake.fetch, ...extra }), calls: fake.calls };
}

const USDC_BASE = '0x833589fcd6edb6e08f4c7c32d4f71b54bda02913';
const USDC_OP = '0x0b2c639c533813f4aa9d7837caf62653d097ff85';
const DEPOSIT = '0xd1a0000000000000000000000000000000000d0d';
const REQUEST_ID = `0x${'ab'.repeat(32)}`;

const quoteRequest: BridgeQuoteRequest = {
  originChainId: 8453,
  destinationChainId: 10,
  originCurrency: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913',
  destinationCurrency: '0x0b2C639c533813f4Aa9D7837CAf62653d097Ff85',
  amount: 25_000_000n,
  tradeType: 'EXACT_INPUT',
  user: '0x1111111111111111111111111111111111111111',
  recipient: '0x2222222222222222222222222222222222222222',
  refundTo: '0x3333333333333333333333333333333333333333',
  useDepositAddress: true,
};

function amountObject(chainId: number, address: string, amount: string, amountUsd: string) {
  return {
    currency: { chainId, address, symbol: 'USDC', name: 'USD Coin', decimals: 6, metadata: { verified: true } },
    amount,
    amountFormatted: '25',
    amountUsd,
    minimumAmount: amount,
  };
}

const quoteResponse = {
  steps: [
    {
      id: 'deposit',
      action: 'Confirm transaction in your wallet',
      description: 'Send USDC',
      kind: 'transaction',
      requestId: REQUEST_ID,
      depositAddress: DEPOSIT,
      items: [{ status: 'incomplete', data: { to: USDC_BASE, data: '0xa9059cbb', value: '0', chainId: 8453 } }],
    },
  ],
  fees: {},
  details: {
    operation: 'bridge',
    currencyIn: amountObject(8453, USDC_BASE, '25000000', '25.001'),
    currencyOut: amountObject(10, USDC_OP, '24975000', '24.976'),
    timeEstimate: 12,
    rate: '0.999',
  },
  protocol: { v2: { orderId: '0x01' } },
};

describe('relay adapter: requests and mapping', () => {
  test('listChains keeps enabled EVM chains with their explorer and native currency, and sends the API key header', async () => {
    const { bridge, calls } = bridgeWith(() =>
      json({
        chains: [
          {
            id: 8453,
            name: 'base',
            displayName: 'Base',
            vmType: 'evm',
            disabled: false,
            depositEnabled: true,
            logoUrl: 'https://x/base.png',
            explorerUrl: 'https://basescan.org/',
            currency: { id: 'eth', symbol: 'ETH', name: 'Ether', address: '0x0000000000000000000000000000000000000000', decimals: 18 },
          },
          { id: 792703809, name: 'solana', displayName: 'Solana', vmType: 'svm', disabled: false },
          { id: 999, name: 'dead', displayName: 'Dead', vmType: 'evm', disabled: true },
          { id: 10, name: 'optimism', displayName: 'OP Mainnet', vmType: 'evm', iconUrl: 'https://x/op.svg', explorerUrl: '', extra: { nested: 1 } },
        ],
      }),
    );
    const chains = await bridge.listChains();
    assert.deepEqual(chains, [
      {
        chainId: 8453,
        name: 'base',
        displayName: 'Base',
        logoUrl: 'https://x/base.png',
        vmType: 'evm',
        explorerUrl: 'https://basescan.org',
        nativeCurrency: { symbol: 'ETH', decimals: 18 },
      },
      { chainId: 10, name: 'optimism', displayName: 'OP Mainnet', logoUrl: 'https://x/op.svg', vmType: 'evm' },
    ]);
    assert.equal(calls.length, 1);
    assert.equal(calls[0]!.method, 'GET');
    assert.equal(calls[0]!.url.href, `${BASE_URL}/chains`);
    assert.equal(calls[0]!.headers.get('x-api-key'), API_KEY);
  });

  test('no x-api-key header without an API key', async () => {
    const { bridge, calls } = bridgeWith(() => json({ chains: [] }), {});
    await bridge.listChains();
    assert.equal(calls[0]!.headers.get('x-api-key'), null);
  });

  test('listTokens asks /currencies/v2 and keeps exact matches on the chain', async () => {
    const { bridge, calls } = bridgeWith(() =>
      json([
        {
          chainId: 8453,
          address: USDC_BASE,
          symbol: 'USDC',
          name: 'USD Coin',
          decimals: 6,
          vmType: 'evm',
          metadata: { logoURI: 'https://x/usdc.png', verified: true },
        },
        { chainId: 8453, address: '0x4200000000000000000000000000000000000006', symbol: 'WETH', name: 'Wrapped Ether', decimals: 18, vmType: 'evm' },
        { chainId: 10, address: USDC_OP, symbol: 'USDC', name: 'USD Coin', decimals: 6, vmType: 'evm' },
        { chainId: 8453, address: '0xd9aAEc86B65D86f6A7B5B1b0c42FFA531710b6CA', symbol: 'USDbC', name: 'USD Base Coin', decimals: 6 },
      ]),
    );
    const tokens = await bridge.listTokens(8453, '  usd ');
    assert.deepEqual(calls[0]!.body, { chainIds: [8453], term: 'usd', verified: true, limit: 100, depositAddressOnly: true });
    assert.equal(calls[0]!.method, 'POST');
    assert.equal(calls[0]!.url.pathname, '/currencies/v2');
    assert.equal(calls[0]!.headers.get('content-type'), 'application/json');
    assert.deepEqual(tokens, [
      { chainId: 8453, address: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913', symbol: 'USDC', name: 'USD Coin', decimals: 6, logoUrl: 'https://x/usdc.png' },
      { chainId: 8453, address: '0xd9aAEc86B65D86f6A7B5B1b0c42FFA531710b6CA', symbol: 'USDbC', name: 'USD Base Coin', decimals: 6, logoUrl: undefined },
    ]);
  });

  test("listTokens keeps a chain's native ETH once, at the zero address and first, and leaves out other native coins", async () => {
    const { bridge } = bridgeWith(() =>
      json([
        {
          chainId: 8453,
          address: '0x0000000000000000000000000000000000000000',
          symbol: 'ETH',
          name: 'Ether',
          decimals: 18,
          vmType: 'evm',
          metadata: { isNative: true },
        },
        { chainId: 8453, address: '0xEeeeeEeeeEeEeeEeEeEeeEEEeeeeEeeeeeeeEEeE', symbol: 'ETH', name: 'Ether', decimals: 18, vmType: 'evm' },
        { chainId: 8453, address: USDC_BASE, symbol: 'USDC', name: 'USD Coin', decimals: 6, vmType: 'evm' },
        // Another chain's native coin under the same chain id (a fuzzy answer): not ETH, so not moved.
        { chainId: 8453, address: '0x0000000000000000000000000000000000000000', symbol: 'AVAX', name: 'Avalanche', decimals: 18, metadata: { isNative: true } },
      ]),
    );
    assert.deepEqual(
      (await bridge.listTokens(8453)).map((t) => [t.symbol, t.address]),
      [
        ['ETH', '0x0000000000000000000000000000000000000000'],
        ['USDC', getAddress(USDC_BASE)],
      ],
    );
  });

  test('listTokens without a search sends no term', async () => {
    const { bridge, calls } = bridgeWith(() => json([]));
    assert.deepEqual(await bridge.listTokens(1), []);
    assert.equal((calls[0]!.body as Record<string, unknown>).term, undefined);
  });

  test('quote sends Relay’s body and reads the deposit step and details', async () => {
    const { bridge, calls } = bridgeWith(() => json(quoteResponse));
    const quote = await bridge.quote(quoteRequest);
    assert.equal(calls[0]!.url.pathname, '/quote/v2');
    assert.deepEqual(calls[0]!.body, {
      user: quoteRequest.user,
      recipient: quoteRequest.recipient,
      originChainId: 8453,
      destinationChainId: 10,
      originCurrency: quoteRequest.originCurrency,
      destinationCurrency: quoteRequest.destinationCurrency,
      amount: '25000000',
      tradeType: 'EXACT_INPUT',
      refundTo: quoteRequest.refundTo,
      useDepositAddress: true,
      strict: true,
    });
    assert.deepEqual(quote, {
      requestId: REQUEST_ID,
      depositAddress: getAddress(DEPOSIT),
      amountIn: 25_000_000n,
      amountOut: 24_975_000n,
      minAmountOut: 24_975_000n,
      amountInUsd: '25.001',
      amountOutUsd: '24.976',
      timeEstimateSeconds: 12,
    });
  });

  test('a preview quote has no order: no strict flag, no requestId, no deposit address', async () => {
    const preview = { ...quoteResponse, steps: [{ ...quoteResponse.steps[0]!, depositAddress: undefined }] };
    const { bridge, calls } = bridgeWith(() => json(preview));
    const quote = await bridge.quote({ ...quoteRequest, useDepositAddress: false, tradeType: 'EXACT_OUTPUT' });
    const body = calls[0]!.body as Record<string, unknown>;
    assert.equal(body.useDepositAddress, false);
    assert.equal(body.tradeType, 'EXACT_OUTPUT');
    assert.equal('strict' in body, false);
    assert.equal(quote.requestId, null);
    assert.equal(quote.depositAddress, null);
    assert.equal(quote.amountOut, 24_975_000n);
  });

  test('the order’s minimum output is Relay’s minimumAmount (the output less slippage)', async () => {
    const out = quoteResponse.details.currencyOut;
    const slipped = { ...quoteResponse, details: { ...quoteResponse.details, currencyOut: { ...out, minimumAmount: '24900000' } } };
    const { bridge } = bridgeWith(() => json(slipped));
    const quote = await bridge.quote(quoteRequest);
    assert.equal(quote.amountOut, 24_975_000n);
    assert.equal(quote.minAmountOut, 24_900_000n);
  });

  test('a deposit-address quote without a deposit address is a route error', async () => {
    const noAddress = { ...quoteResponse, steps: [{ ...quoteResponse.steps[0]!, depositAddress: undefined }] };
    const { bridge } = bridgeWith(() => json(noAddress));
    await assert.rejects(bridge.quote(quoteRequest), BridgeRouteError);
  });

  test('a zero amount is rejected before calling Relay', async () => {
    const { bridge, calls } = bridgeWith(() => json(quoteResponse));
    await assert.rejects(bridge.quote({ ...quoteRequest, amount: 0n }), BridgeRouteError);
    assert.equal(calls.length, 0);
  });

  test('orderStatus maps every Relay status', async () => {
    const expected: Record<string, string> = {
      waiting: 'waiting',
      depositing: 'waiting',
      pending: 'pending',
      submitted: 'pending',
      delayed: 'pending',
      success: 'success',
      refund: 'refunded',
      failure: 'failed',
      'some-new-status': 'pending',
    };
    for (const [providerStatus, state] of Object.entries(expected)) {
      const { bridge, calls } = bridgeWith(() =>
        json({
          status: providerStatus,
          inTxHashes: [`0x${'11'.repeat(32)}`],
          txHashes: [`0x${'22'.repeat(32)}`],
          updatedAt: 1713290386145,
          originChainId: 8453,
          destinationChainId: 10,
        }),
      );
      const status = await bridge.orderStatus(REQUEST_ID);
      assert.equal(calls[0]!.url.pathname, '/intents/status/v3');
      assert.equal(calls[0]!.url.searchParams.get('requestId'), REQUEST_ID);
      assert.deepEqual(status, {
        state,
        providerStatus,
        inTxHashes: [`0x${'11'.repeat(32)}`],
        outTxHashes: [`0x${'22'.repeat(32)}`],
        destinationChainId: 10,
      });
    }
  });

  test('orderStatus tolerates a bare {status} and keeps details', async () => {
    const { bridge } = bridgeWith(() => json({ status: 'failure', details: 'slippage' }));
    assert.deepEqual(await bridge.orderStatus(REQUEST_ID), {
      state: 'failed',
      providerStatus: 'failure',
      inTxHashes: [],
      outTxHashes: [],
      details: 'slippage',
    });
  });

  test('tokenUsdPrice returns a decimal string, or null when Relay has none', async () => {
    const { bridge, calls } = bridgeWith((req) =>
      req.url.searchParams.get('address') === USDC_BASE ? json({ price: 0.999912 }) : json({ error: 'not found' }, 400),
    );
    assert.equal(await bridge.tokenUsdPrice(8453, USDC_BASE), '0.999912');
    assert.equal(calls[0]!.url.pathname, '/currencies/token/price');
    assert.equal(calls[0]!.url.searchParams.get('chainId'), '8453');
    assert.equal(await bridge.tokenUsdPrice(8453, USDC_OP), null);

    const small = bridgeWith(() => json({ price: 1e-7 }));
    assert.equal(await small.bridge.tokenUsdPrice(1, USDC_BASE), '0.0000001');
    const text = bridgeWith(() => json({ price: '2501.25' }));
    assert.equal(await text.bridge.tokenUsdPrice(1, USDC_BASE), '2501.25');
  });
});

describe('relay adapter: error mapping', () => {
  test('400 with {message, errorCode} is a route error carrying Relay’s message', async () => {
    const { bridge } = bridgeWith(() => json({ message: 'Amount is too low', errorCode: 'AMOUNT_TOO_LOW' }, 400));
    await assert.rejects(bridge.quote(quoteRequest), (err: Error) => {
      assert.ok(err instanceof BridgeRouteError);
      assert.equal(err.message, 'no route: Amount is too low (AMOUNT_TOO_LOW)');
      return true;
    });
  });

  test('422 is a route error too', async () => {
    const { bridge } = bridgeWith(() => json({ message: 'Unprocessable', code: 'UNSUPPORTED_ROUTE' }, 422));
    await assert.rejects(bridge.quote(quoteRequest), BridgeRouteError);
  });

  for (const status of [429, 500, 502, 503, 401]) {
    test(`HTTP ${status} is unavailable${status === 401 ? ', and not transient (a key to fix)' : ', and transient'}`, async () => {
      const { bridge } = bridgeWith(() => json({ message: 'nope' }, status));
      await assert.rejects(bridge.quote(quoteRequest), (err: Error) => {
        assert.ok(err instanceof BridgeUnavailableError);
        assert.equal(err.transient, status !== 401);
        return true;
      });
    });
  }

  test('a network error is unavailable', async () => {
    const { bridge } = bridgeWith(() => {
      throw new TypeError('fetch failed', { cause: new Error('connect ECONNREFUSED 127.0.0.1:1') });
    });
    await assert.rejects(bridge.listChains(), (err: Error) => {
      assert.ok(err instanceof BridgeUnavailableError);
      assert.match(err.message, /ECONNREFUSED/);
      return true;
    });
  });

  test('a timeout is unavailable', async () => {
    const fake = fakeFetch(() => json({ chains: [] }));
    const slowFetch = ((input: string | URL | Request, init?: RequestInit) =>
      new Promise<Response>((resolve, reject) => {
        const timer = setTimeout(() => resolve(fake.fetch(input, init)), 5_000);
        init?.signal?.addEventListener('abort', () => {
          clearTimeout(timer);
          reject(init.signal!.reason);
        });
      })) as typeof fetch;
    const bridge = createRelayBridge({ baseUrl: BASE_URL, fetch: slowFetch, timeoutMs: 30 });
    await assert.rejects(bridge.listChains(), (err: Error) => {
      assert.ok(err instanceof BridgeUnavailableError);
      assert.match(err.message, /no answer within 30 ms/);
      return true;
    });
  });

  test('a malformed 200 body is unavailable', async () => {
    const { bridge } = bridgeWith(() => json({ steps: [], details: { currencyIn: { amount: '1.5' } } }));
    await assert.rejects(bridge.quote(quoteRequest), BridgeUnavailableError);
    const notJson = bridgeWith(() => new Response('<html>gateway</html>', { status: 200 }));
    await assert.rejects(notJson.bridge.listChains(), BridgeUnavailableError);
  });

  test('the API key never appears in error messages, even when Relay echoes it', async () => {
    const answers: Array<() => Response> = [
      () => json({ message: `invalid key ${API_KEY}`, errorCode: 'UNAUTHORIZED' }, 400),
      () => json({ message: `key ${API_KEY} is rate limited` }, 429),
      () => json({ message: `boom ${API_KEY}` }, 500),
      () => {
        throw new TypeError(`fetch failed for ${API_KEY}`);
      },
    ];
    for (const answer of answers) {
      const { bridge, calls } = bridgeWith(answer);
      const err = await bridge.quote(quoteRequest).then(
        () => assert.fail('expected an error'),
        (e: Error) => e,
      );
      assert.equal(calls[0]!.headers.get('x-api-key'), API_KEY);
      assert.ok(!err.message.includes(API_KEY), err.message);
      assert.ok(!String(err.stack).includes(API_KEY));
    }
  });
});
