import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createHash } from 'node:crypto';
import { eq } from 'drizzle-orm';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { isAddress, recoverTransactionAddress } from 'viem';
import { ACCOUNT_XPUB_VARIABLES, API_FORBIDDEN_SECRETS } from '../../src/config.ts';
import { ledgerEntries, transfers } from '../../src/db/schema.ts';
import { freePorts } from '../../devnet/ports.ts';
import { API_ENV_FILE } from '../../devnet/stackInfo.ts';
import { amountClassOf } from '../../src/privacy/amountClass.ts';
import { ERROR_CODES } from '../../src/api/errorCodes.ts';
import { startTestStack, type TestStack } from '../support/testStack.ts';

let stack: TestStack;
let source: number;
let hub: number;
let destination: number;

before(async () => {
  stack = await startTestStack();
  const byRole = (role: string) => stack.manifest.chains.find((c) => c.role === role)!.chainId;
  [source, hub, destination] = [byRole('source'), byRole('hub'), byRole('destination')];
});
after(async () => stack?.close());

const RECIPIENT = '0x000000000000000000000000000000000000bEEF';

function assertQuoteShape(data: Record<string, unknown>) {
  for (const key of ['symbol', 'destSymbol', 'amount', 'quotedOutputAmount', 'feeAmount', 'bridgeFeeAmount', 'privacyFeeAmount'])
    assert.equal(typeof data[key], 'string', key);
  for (const key of ['sourceChainId', 'destChainId', 'hubChainId', 'etaSeconds']) assert.equal(typeof data[key], 'number', key);
  for (const key of ['amountInUsd', 'quotedOutputUsd', 'feeUsd', 'bridgeFeeUsd', 'privacyFeeUsd'])
    assert.ok(data[key] === null || typeof data[key] === 'number', key);
  for (const key of ['amount', 'quotedOutputAmount', 'feeAmount'])
    assert.match(data[key] as string, /^[1-9]\d*$/, `${key} is an integer string of smallest units`);
  assert.ok(Array.isArray(data.route) && data.route.length > 0 && data.route.every((hop) => typeof hop === 'string'));
}

async function expect400(path: string, body: unknown, pattern: RegExp, code?: string) {
  const response = await stack.api('POST', path, body);
  assert.equal(response.status, 400, `${JSON.stringify(body)} → ${JSON.stringify(response.body)}`);
  assert.equal(response.body.success, false);
  assert.equal(response.body.data, undefined);
  assert.match(response.body.error ?? '', pattern);
  const answered = (response.body as { code?: string }).code;
  assert.ok(answered !== undefined && Object.hasOwn(ERROR_CODES, answered), `${JSON.stringify(body)}: code ${answered} is in the catalogue`);
  if (code) assert.equal(answered, code, JSON.stringify(body));
}

describe('discovery', () => {
  test('GET /api/bridge/chains lists the bridge provider chains with the spec fields', async () => {
    const { status, body } = await stack.api<Array<Record<string, unknown>>>('GET', '/api/bridge/chains');
    assert.equal(status, 200);
    assert.equal(body.success, true);
    assert.deepEqual(body.data!.map((c) => c.chainId).sort(), [source, hub, destination].sort());
    for (const chain of body.data!) {
      assert.equal(typeof chain.chainId, 'number');
      assert.equal(typeof chain.name, 'string');
      assert.equal(typeof chain.displayName, 'string');
      if ('vmType' in chain) assert.equal(chain.vmType, 'evm');
    }
  });

  test('GET /api/bridge/tokens lists a chain tokens with the spec fields', async () => {
    const { status, body } = await stack.api<Array<Record<string, unknown>>>('GET', `/api/bridge/tokens?chainId=${source}`);
    assert.equal(status, 200);
    const bySymbol = Object.fromEntries(body.data!.map((t) => [t.symbol, t]));
    assert.deepEqual(Object.keys(bySymbol).sort(), ['ETH', 'USDC', 'WETH']);
    assert.deepEqual(bySymbol.USDC, { chainId: source, address: stack.token('source', 'USDC'), symbol: 'USDC', name: 'USD Coin', decimals: 6 });
    assert.equal(bySymbol.WETH!.decimals, 18);
    // The chain's native currency, at Relay's zero address: not WETH.
    assert.equal(bySymbol.ETH!.address, '0x0000000000000000000000000000000000000000');
    assert.equal(bySymbol.ETH!.decimals, 18);
  });

  test('search matches symbol or name, case-insensitively', async () => {
    const symbols = async (search: string) =>
      ((await stack.api<Array<{ symbol: string }>>('GET', `/api/bridge/tokens?chainId=${source}&search=${encodeURIComponent(search)}`)).body.data ?? []).map(
        (t) => t.symbol,
      );
    assert.deepEqual(await symbols('usdc'), ['USDC']);
    assert.deepEqual(await symbols('uSd'), ['USDC']);
    assert.deepEqual(await symbols('WRAPPED'), ['WETH']);
    assert.deepEqual(await symbols('nothing-like-this'), []);
  });

  test('tokens: a missing, malformed or unknown chainId is a 400', async () => {
    for (const [query, pattern] of [
      ['', /chainId/],
      ['?chainId=abc', /chainId must be a positive integer/],
      ['?chainId=-1', /chainId must be a positive integer/],
      ['?chainId=999999', /999999 is not a supported chain/],
    ] as const) {
      const response = await stack.api('GET', `/api/bridge/tokens${query}`);
      assert.equal(response.status, 400, query);
      assert.equal(response.body.success, false);
      assert.match(response.body.error!, pattern);
    }
  });
});

describe('POST /api/private-route/quote', () => {
  test("quotes USDC to USDC with every field, fee = max(1.5 %, 1 USD + the route's own gas) on the destination side", async () => {
    const { status, body } = await stack.api<Record<string, unknown>>('POST', '/api/private-route/quote', {
      sourceChainId: source,
      destChainId: destination,
      amount: '100',
    });
    assert.equal(status, 200);
    assert.equal(body.success, true);
    const q = body.data!;
    assertQuoteShape(q);
    assert.equal(q.symbol, 'USDC');
    assert.equal(q.destSymbol, 'USDC');
    assert.equal(q.sourceChainId, source);
    assert.equal(q.destChainId, destination);
    assert.equal(q.hubChainId, hub);
    assert.equal(q.amount, '100000000');
    assert.equal(q.bridgeFeeAmount, '0');
    assert.equal(q.privacyFeeAmount, '0');
    const output = BigInt(q.quotedOutputAmount as string);
    const fee = BigInt(q.feeAmount as string);
    const rounding = BigInt(q.roundingAmount as string);
    const gross = output + fee + rounding;
    // 1.5 % of the gross output, rounded up, and at least 1 USD plus what the route's transactions cost the service
    const networkCost = BigInt(q.networkCostAmount as string);
    assert.ok(networkCost > 0n, "the service's own gas is part of the fee");
    const percentage = (gross * 150n + 9_999n) / 10_000n;
    const floor = 1_000_000n + networkCost;
    assert.equal(fee, percentage > floor ? percentage : floor);
    assert.ok(output < 100_000_000n - fee);
    // the payout is its amount class: the rounding down to it costs less than 1 %
    const amountClass = q.amountClass as { value: string; roundingBps: number; paidLast24h: number; suggestions: unknown[] };
    assert.equal(amountClass.value, q.quotedOutputAmount);
    assert.equal(amountClassOf(output), output);
    assert.ok(rounding * 100n < gross, `rounding ${rounding} of ${gross}`);
    assert.equal(typeof amountClass.paidLast24h, 'number');
    assert.ok(Array.isArray(amountClass.suggestions));
    assert.equal(q.amountInUsd, 100);
    assert.ok((q.etaSeconds as number) > 0);
  });

  test("a quote rises with the hub's gas price: the fee's floor covers the route's gas at the live base fee", { timeout: 60_000 }, async () => {
    const request = { sourceChainId: source, destChainId: destination, amount: '100' };
    const before = (await stack.api<Record<string, string>>('POST', '/api/private-route/quote', request)).body.data!;
    const hubClient = stack.chainClient('hub');
    const baseFee = (await hubClient.getBlock()).baseFeePerGas ?? 0n;
    // The hub's base fee jumps to 2 gwei (Ethereum on a quiet day), then decays again as its blocks stay nearly empty.
    await hubClient.request({ method: 'anvil_setNextBlockBaseFeePerGas' as never, params: [`0x${(2_000_000_000n).toString(16)}`] as never });
    await hubClient.request({ method: 'evm_mine' as never, params: [] as never });
    try {
      // Past the fee cache (5 s) and the quote cache.
      await new Promise((resolve) => setTimeout(resolve, 6_000));
      const after = (await stack.api<Record<string, string>>('POST', '/api/private-route/quote', request)).body.data!;
      assert.ok(BigInt(after.networkCostAmount!) > 2n * BigInt(before.networkCostAmount!), `${before.networkCostAmount} → ${after.networkCostAmount}`);
      assert.ok(BigInt(after.feeAmount!) > BigInt(before.feeAmount!), 'the fee rose');
      assert.ok(BigInt(after.quotedOutputAmount!) < BigInt(before.quotedOutputAmount!), 'the output fell');
      assert.equal(BigInt(after.feeAmount!), 1_000_000n + BigInt(after.networkCostAmount!), 'the floor decides: 1 USD + the gas, more than 1.5 %');
      // So much gas that the fees exceed a small amount: refused with the reason, not quoted at a loss.
      const small = await stack.api('POST', '/api/private-route/quote', { ...request, amount: '5' });
      assert.equal(small.status, 400);
      assert.match(small.body.error!, /too small: the fees exceed the output .* USD of network fees at current gas prices/);
    } finally {
      await hubClient.request({ method: 'anvil_setNextBlockBaseFeePerGas' as never, params: [`0x${baseFee.toString(16)}`] as never });
      await hubClient.request({ method: 'evm_mine' as never, params: [] as never });
      // The next tests quote at the hub's usual fees again.
      await new Promise((resolve) => setTimeout(resolve, 6_000));
    }
  });

  test('quotes USDC to the 18-decimal token; destTokenSymbol defaults to tokenSymbol', async () => {
    const weth = await stack.api<Record<string, unknown>>('POST', '/api/private-route/quote', {
      sourceChainId: source,
      destChainId: destination,
      amount: '250.5',
      destTokenSymbol: 'WETH',
    });
    assert.equal(weth.status, 200);
    assertQuoteShape(weth.body.data!);
    assert.equal(weth.body.data!.destSymbol, 'WETH');
    assert.ok(BigInt(weth.body.data!.quotedOutputAmount as string) > 10n ** 16n, 'about 0.098 WETH in wei');
    const same = await stack.api<Record<string, unknown>>('POST', '/api/private-route/quote', {
      sourceChainId: source,
      destChainId: destination,
      amount: '0.5',
      tokenSymbol: 'WETH',
    });
    assert.equal(same.status, 200);
    assert.equal(same.body.data!.symbol, 'WETH');
    assert.equal(same.body.data!.destSymbol, 'WETH');
    assert.equal(same.body.data!.amount, '500000000000000000');
  });

  test('tokens by address and amounts in smallest units: the same quote as by symbol and decimal; unknown addresses and both amounts are 400s', async () => {
    const quote = async (body: Record<string, unknown>) => {
      const answer = await stack.api<Record<string, unknown>>('POST', '/api/private-route/quote', { sourceChainId: source, destChainId: destination, ...body });
      assert.equal(answer.status, 200, JSON.stringify(answer.body));
      return answer.body.data!;
    };
    const usdc = stack.token('source', 'USDC');
    const bySymbol = await quote({ amount: '100' });
    assert.deepEqual(bySymbol.sourceToken, { chainId: source, address: usdc, symbol: 'USDC', decimals: 6 });
    assert.deepEqual(bySymbol.destToken, { chainId: destination, address: stack.token('destination', 'USDC'), symbol: 'USDC', decimals: 6 });
    const byAddress = await quote({ tokenAddress: usdc.toLowerCase(), destTokenAddress: stack.token('destination', 'USDC'), amountSmallestUnits: '100000000' });
    for (const field of ['sourceToken', 'destToken', 'amount', 'quotedOutputAmount', 'feeAmount']) assert.deepEqual(byAddress[field], bySymbol[field], field);

    const found = await stack.api<Array<{ address: string }>>('GET', `/api/bridge/tokens?chainId=${source}&search=${usdc}`);
    assert.deepEqual(
      found.body.data!.map((t) => t.address),
      [usdc],
      'search finds a token by its address',
    );
    await expect400(
      '/api/private-route/quote',
      { sourceChainId: source, destChainId: destination, amount: '10', tokenAddress: '0x000000000000000000000000000000000000dEaD' },
      /tokenAddress .* is not a supported token on chain/,
      'UNSUPPORTED_TOKEN',
    );
    await expect400(
      '/api/private-route/quote',
      { sourceChainId: source, destChainId: destination, amount: '10', tokenSymbol: 'WETH', tokenAddress: usdc },
      /disagrees with tokenAddress/,
      'TOKEN_MISMATCH',
    );
    await expect400(
      '/api/private-route/quote',
      { sourceChainId: source, destChainId: destination, amount: '10', amountSmallestUnits: '10000000' },
      /not both/,
      'INVALID_AMOUNT',
    );
  });

  test('bad requests are 400s that say what is wrong', async () => {
    const base = { sourceChainId: source, destChainId: destination, amount: '10' };
    await expect400('/api/private-route/quote', '{not json', /valid JSON/, 'INVALID_JSON');
    await expect400('/api/private-route/quote', [], /JSON object/);
    await expect400('/api/private-route/quote', { ...base, sourceChainId: undefined }, /sourceChainId is required/);
    await expect400('/api/private-route/quote', { ...base, sourceChainId: String(source) }, /sourceChainId must be a number/);
    await expect400('/api/private-route/quote', { ...base, destChainId: 1.5 }, /destChainId must be an integer/);
    await expect400('/api/private-route/quote', { ...base, amount: 10 }, /amount must be a string/);
    await expect400('/api/private-route/quote', { ...base, amount: '0' }, /amount must be greater than zero/);
    await expect400('/api/private-route/quote', { ...base, amount: '-5' }, /amount must be a positive decimal/);
    await expect400('/api/private-route/quote', { ...base, amount: 'ten' }, /amount must be a positive decimal/);
    await expect400('/api/private-route/quote', { ...base, amount: '1e3' }, /amount must be a positive decimal/);
    await expect400('/api/private-route/quote', { ...base, amount: '10.1234567' }, /7 decimal places but the token has only 6/);
    await expect400('/api/private-route/quote', { ...base, amount: '99999999999999999999' }, /amount is too large/);
    await expect400('/api/private-route/quote', { ...base, amount: '5000000000' }, /no route/, 'NO_ROUTE');
    await expect400('/api/private-route/quote', { ...base, sourceChainId: 424242 }, /sourceChainId 424242 is not a supported chain/, 'UNSUPPORTED_CHAIN');
    await expect400('/api/private-route/quote', { ...base, tokenSymbol: 'DOGE' }, /tokenSymbol "DOGE" is not supported/, 'UNSUPPORTED_TOKEN');
    await expect400('/api/private-route/quote', { ...base, destTokenSymbol: 'DOGE' }, /destTokenSymbol "DOGE" is not supported/);
    await expect400('/api/private-route/quote', { ...base, destChainId: hub }, /hub chain/);
    await expect400('/api/private-route/quote', { ...base, amount: '1.002' }, /fees exceed the output/, 'INVALID_AMOUNT');
    await expect400('/api/private-route/quote', { ...base, amount: '1' }, /the privacy pool takes deposits of at least 1 USDC/);
    const oversized = await stack.api('POST', '/api/private-route/quote', { ...base, padding: 'x'.repeat(100_000) });
    assert.equal(oversized.status, 413);
    assert.match(oversized.body.error ?? '', /request body is too large/);
    assert.equal((oversized.body as { code?: string }).code, 'BODY_TOO_LARGE');
  });

  test('a bridge provider outage is a 503 with Retry-After and a safe message', async () => {
    stack.relay.faults.set({ operation: 'bridge-in', mode: 'fail', count: 1 });
    const response = await stack.api('POST', '/api/private-route/quote', { sourceChainId: source, destChainId: destination, amount: '10' });
    assert.equal(response.status, 503);
    assert.equal(response.headers.get('retry-after'), '5');
    assert.deepEqual(response.body, { success: false, error: 'the bridge provider is unavailable; try again shortly', code: 'BRIDGE_UNAVAILABLE' });
  });
});

describe('POST /api/private-route and GET /api/private-route/:routeId', () => {
  test('creates a transfer: quote fields plus routeId, depositAddress, hubAccount, hubIsSmartAccount, status', async () => {
    const { status, body } = await stack.api<Record<string, unknown>>('POST', '/api/private-route', {
      sourceChainId: source,
      destChainId: destination,
      amount: '42',
      userDestinationAddress: RECIPIENT,
    });
    assert.equal(status, 200);
    const created = body.data!;
    assertQuoteShape(created);
    assert.match(created.routeId as string, /^rt_[0-9a-f]{32}$/);
    assert.ok(isAddress(created.depositAddress as string));
    assert.ok(isAddress(created.hubAccount as string));
    assert.notEqual(created.depositAddress, created.hubAccount);
    assert.equal(created.hubIsSmartAccount, false);
    assert.equal(created.status, 'AWAITING_DEPOSIT');

    const fetched = await stack.api<Record<string, unknown>>('GET', `/api/private-route/${created.routeId}`);
    assert.equal(fetched.status, 200);
    const transfer = fetched.body.data!;
    assert.equal(transfer.status, 'AWAITING_DEPOSIT');
    assert.equal(transfer.error, null);
    for (const key of [
      'routeId',
      'depositAddress',
      'hubAccount',
      'hubIsSmartAccount',
      'amount',
      'quotedOutputAmount',
      'feeAmount',
      'symbol',
      'destSymbol',
      'hubChainId',
      'route',
    ]) {
      assert.deepEqual(transfer[key], created[key], key);
    }
    assert.equal(transfer.userDestinationAddress, RECIPIENT);
    assert.ok(!('exitAccount' in transfer) && !('accountIndex' in transfer), 'internal accounts stay private');
    for (const hop of ['depositTxHash', 'bridgeInTxHash', 'payoutTxHash']) assert.equal(transfer[hop], null, `${hop} is null until known`);
    assert.ok(!('webhookUrl' in transfer));

    const handle = stack.temporal.client.workflow.getHandle(created.routeId as string);
    assert.equal((await handle.describe()).status.name, 'RUNNING');
  });

  test('every transfer gets its own route id and accounts', async () => {
    const create = () =>
      stack.api<Record<string, string>>('POST', '/api/private-route', {
        sourceChainId: source,
        destChainId: destination,
        amount: '10',
        userDestinationAddress: RECIPIENT,
      });
    const [a, b] = await Promise.all([create(), create()]);
    assert.notEqual(a.body.data!.routeId, b.body.data!.routeId);
    assert.notEqual(a.body.data!.depositAddress, b.body.data!.depositAddress);
    assert.notEqual(a.body.data!.hubAccount, b.body.data!.hubAccount);
  });

  test('create validates the destination address and the transfer request', async () => {
    const base = { sourceChainId: source, destChainId: destination, amount: '10' };
    await expect400('/api/private-route', base, /userDestinationAddress is required/);
    await expect400('/api/private-route', { ...base, userDestinationAddress: 'alice.eth' }, /userDestinationAddress must be a 0x-prefixed 20-byte hex address/);
    await expect400('/api/private-route', { ...base, userDestinationAddress: '0x1234' }, /userDestinationAddress must be a 0x-prefixed/);
    await expect400('/api/private-route', { ...base, userDestinationAddress: '0x000000000000000000000000000000000000BeEF' }, /checksum/, 'INVALID_ADDRESS');
    await expect400('/api/private-route', { ...base, userDestinationAddress: '0x0000000000000000000000000000000000000000' }, /zero address/);
    await expect400('/api/private-route', { ...base, amount: '0.0000001', userDestinationAddress: RECIPIENT }, /decimal places/);
    await expect400('/api/private-route', { ...base, destChainId: 31337, userDestinationAddress: RECIPIENT }, /destChainId 31337 is not a supported chain/);
  });

  test('an unknown or malformed routeId is a 404', async () => {
    for (const id of ['rt_00000000000000000000000000000000', 'nope', "1' or '1'='1"]) {
      const response = await stack.api('GET', `/api/private-route/${encodeURIComponent(id)}`);
      assert.equal(response.status, 404);
      assert.equal(response.body.success, false);
      assert.match(response.body.error!, /unknown routeId/);
    }
  });

  test('a retried create with the same Idempotency-Key answers the first transfer again', async () => {
    const body = { sourceChainId: source, destChainId: destination, amount: '10', userDestinationAddress: RECIPIENT };
    const send = () =>
      fetch(`${stack.apiUrl}/api/private-route`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'idempotency-key': `e2e-${crypto.randomUUID()}` },
        body: JSON.stringify(body),
      });
    const key = `e2e-${crypto.randomUUID()}`;
    const post = () =>
      fetch(`${stack.apiUrl}/api/private-route`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'idempotency-key': key },
        body: JSON.stringify(body),
      });
    const first = await post();
    const again = await post();
    assert.equal(first.status, 200);
    assert.equal(again.headers.get('idempotent-replayed'), 'true');
    const [a, b] = [(await first.json()) as { data: { routeId: string } }, (await again.json()) as { data: { routeId: string } }];
    assert.equal(a.data.routeId, b.data.routeId);
    assert.notEqual(((await (await send()).json()) as { data: { routeId: string } }).data.routeId, a.data.routeId, 'another key is another transfer');
  });

  test('the API serves its OpenAPI document and reference page', async () => {
    const document = (await (await fetch(`${stack.apiUrl}/openapi.json`)).json()) as { openapi: string; paths: Record<string, unknown> };
    assert.equal(document.openapi, '3.1.0');
    assert.ok(document.paths['/api/private-route/{routeId}/events']);
    const page = await fetch(`${stack.apiUrl}/docs`);
    assert.equal(page.status, 200);
    assert.match(page.headers.get('content-security-policy') ?? '', /default-src 'none'/);
  });

  test('an unknown endpoint answers in the envelope', async () => {
    const response = await stack.api('GET', '/api/nothing-here');
    assert.equal(response.status, 404);
    assert.equal(response.body.success, false);
    assert.equal(typeof response.body.error, 'string');
  });
});

describe('GET /api/private-route/:routeId: who sees what', () => {
  /** A GET with exactly these headers (stack.api would add the remembered statusToken). */
  const getWith = async (routeId: string, headers: Record<string, string> = {}) => {
    const response = await fetch(`${stack.apiUrl}/api/private-route/${routeId}`, { headers });
    return {
      status: response.status,
      headers: response.headers,
      body: (await response.json()) as { success: boolean; data?: Record<string, unknown>; error?: string },
    };
  };
  let routeId: string;
  let statusToken: string;

  before(async () => {
    const { status, body } = await stack.api<{ routeId: string; statusToken: string }>('POST', '/api/private-route', {
      sourceChainId: source,
      destChainId: destination,
      amount: '10',
      userDestinationAddress: RECIPIENT,
    });
    assert.equal(status, 200, JSON.stringify(body));
    ({ routeId, statusToken } = body.data!);
  });

  test('create answers a statusToken (256 random bits) and the database keeps only its SHA-256', async () => {
    assert.match(statusToken, /^st_[A-Za-z0-9_-]{43}$/);
    const [row] = await stack.service.db.select({ hash: transfers.statusTokenHash }).from(transfers).where(eq(transfers.routeId, routeId));
    assert.equal(row!.hash, createHash('sha256').update(statusToken).digest('hex'));
  });

  test('without a token: routeId, status, error and needsAttention only; no address, amount, hash or privacy report', async () => {
    const { status, headers, body } = await getWith(routeId);
    assert.equal(status, 200);
    assert.deepEqual(body, { success: true, data: { routeId, status: 'AWAITING_DEPOSIT', error: null, needsAttention: false } });
    assert.equal(headers.get('cache-control'), 'no-store');
  });

  test('the right token, as Bearer or X-Status-Token, reads the full view (which never repeats the token)', async () => {
    for (const headers of [{ authorization: `Bearer ${statusToken}` }, { 'x-status-token': statusToken }] as Record<string, string>[]) {
      const { status, body } = await getWith(routeId, headers);
      assert.equal(status, 200, JSON.stringify(headers));
      assert.equal(body.data!.userDestinationAddress, RECIPIENT);
      assert.ok(isAddress(body.data!.depositAddress as string));
      assert.equal(typeof body.data!.amount, 'string');
      assert.ok(!('statusToken' in body.data!));
    }
  });

  test('a wrong token is a 401 in the envelope, not the public view', async () => {
    const other = await stack.api<{ statusToken: string }>('POST', '/api/private-route', {
      sourceChainId: source,
      destChainId: destination,
      amount: '10',
      userDestinationAddress: RECIPIENT,
    });
    const wrong: Record<string, string>[] = [
      { authorization: `Bearer ${other.body.data!.statusToken}` },
      { authorization: `Bearer ${statusToken.slice(0, -1)}${statusToken.endsWith('A') ? 'B' : 'A'}` },
      { authorization: `Basic ${Buffer.from(`x:${statusToken}`).toString('base64')}` },
      { 'x-status-token': 'st_guess' },
      { 'x-status-token': statusToken.toUpperCase() },
    ];
    for (const headers of wrong) {
      const { status, headers: answered, body } = await getWith(routeId, headers);
      assert.equal(status, 401, JSON.stringify(headers));
      assert.equal(body.success, false);
      assert.equal(body.data, undefined);
      assert.match(body.error!, /statusToken does not match this route/);
      assert.equal(answered.get('www-authenticate'), 'Bearer');
    }
  });

  test('a transfer created before statusTokens (no hash): the public view without a token, 401 with any', async () => {
    const old = await stack.api<{ routeId: string; statusToken: string }>('POST', '/api/private-route', {
      sourceChainId: source,
      destChainId: destination,
      amount: '10',
      userDestinationAddress: RECIPIENT,
    });
    const { routeId: oldId, statusToken: oldToken } = old.body.data!;
    await stack.service.db.update(transfers).set({ statusTokenHash: null }).where(eq(transfers.routeId, oldId));
    assert.deepEqual(Object.keys((await getWith(oldId)).body.data!).sort(), ['error', 'needsAttention', 'routeId', 'status']);
    assert.equal((await getWith(oldId, { authorization: `Bearer ${oldToken}` })).status, 401);
  });
});

describe('the production API entry (src/api.ts) holds no key', { timeout: 60_000 }, () => {
  test("started with the signer's xpubs and no key, it serves a create whose accounts are the ones the signer signs for", async () => {
    // What the stack gives an API: its configuration with the xpubs (api-env.json), nothing from this process's environment.
    const apiEnv = JSON.parse(readFileSync(path.join(stack.dataDir, API_ENV_FILE), 'utf8')) as Record<string, string>;
    const [port, metricsPort] = (await freePorts(2)) as [number, number];
    const env: Record<string, string> = {
      ...apiEnv,
      PATH: process.env.PATH ?? '',
      PORT: String(port),
      API_METRICS_PORT: String(metricsPort),
      LOG_LEVEL: 'info',
    };
    for (const name of [...API_FORBIDDEN_SECRETS, 'SIGNER_URL']) assert.equal(env[name], undefined, name);
    for (const name of ACCOUNT_XPUB_VARIABLES) assert.match(env[name] ?? '', /^xpub/, name);

    const child = spawn(process.execPath, ['--import', './src/loader/register.mjs', 'src/api.ts'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    try {
      const url = `http://127.0.0.1:${port}`;
      const deadline = Date.now() + 30_000;
      while (!output.includes('api listening')) {
        assert.equal(child.exitCode, null, `the API exited: ${output}`);
        assert.ok(Date.now() < deadline, `the API did not start within 30 s: ${output}`);
        await new Promise((r) => setTimeout(r, 100));
      }
      const response = await fetch(`${url}/api/private-route`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ sourceChainId: source, destChainId: destination, amount: '10', userDestinationAddress: RECIPIENT }),
      });
      const body = (await response.json()) as { success: boolean; data?: { routeId: string; depositAddress: string; hubAccount: string } };
      assert.equal(response.status, 200, JSON.stringify(body));
      const created = body.data!;
      const [row] = await stack.service.db.select().from(transfers).where(eq(transfers.routeId, created.routeId));

      // The signer process signs for exactly these addresses: a signature it makes for the route's index recovers to them.
      const own = stack.service.keyring.routeAccounts(row!.accountIndex);
      // A 0-value send to itself: the one transaction the signer's spending policy signs for any route account.
      const tx = { type: 'eip1559', chainId: source, nonce: 0, value: 0n, gas: 21_000n, maxFeePerGas: 1n, maxPriorityFeePerGas: 1n } as const;
      const signer = async (account: typeof own.deposit) =>
        recoverTransactionAddress({ serializedTransaction: (await account.signTransaction({ ...tx, to: account.address })) as `0x02${string}` });
      assert.equal(created.depositAddress, await signer(own.deposit));
      assert.equal(created.hubAccount, await signer(own.hub));
      // The API has no exit xpub: the exit account is not its to write (the worker writes it at the bridge-in).
      assert.equal(row!.exitAccount, null);
      // Its log shows the configuration, never the xpubs (they link a route's deposit and hub addresses).
      for (const name of ACCOUNT_XPUB_VARIABLES) assert.ok(!output.includes(env[name]!), `${name} was logged`);
    } finally {
      child.kill('SIGTERM');
      await exited;
    }
  });
});

describe('partner fees', () => {
  test("a partner's key earns its fee: quoted and itemized, booked in the ledger when the transfer completes, listed by routectl partner fees", {
    timeout: 180_000,
  }, async () => {
    const name = 'wallet-partner';
    const created = await stack.routectl('apikey', 'create', '--name', name, '--fee-bps', '50');
    assert.equal(created.code, 0, created.stderr);
    const key = /^(prk_[A-Za-z0-9_-]{43})$/m.exec(created.stdout)?.[1];
    assert.ok(key, created.stdout);
    const headers = { 'X-Api-Key': key };

    const quoteBody = { sourceChainId: source, destChainId: destination, amount: '40' };
    const plain = await stack.api<Record<string, string>>('POST', '/api/private-route/quote', quoteBody);
    const quoted = await stack.api<Record<string, string>>('POST', '/api/private-route/quote', quoteBody, headers);
    assert.equal(quoted.status, 200, JSON.stringify(quoted.body));
    const partnerFee = BigInt(quoted.body.data!.partnerFeeAmount!);
    assert.ok(partnerFee > 0n, 'the fee is itemized');
    assert.ok(BigInt(quoted.body.data!.quotedOutputAmount!) < BigInt(plain.body.data!.quotedOutputAmount!), 'and taken from the output');

    const transfer = await stack.api<{ routeId: string; depositAddress: `0x${string}`; quotedOutputAmount: string; partnerFeeAmount: string }>(
      'POST',
      '/api/private-route',
      { ...quoteBody, userDestinationAddress: RECIPIENT, quoteId: quoted.body.data!.quoteId, externalId: 'order-e2e-1' },
      headers,
    );
    assert.equal(transfer.status, 200, JSON.stringify(transfer.body));
    const { routeId, depositAddress } = transfer.body.data!;
    assert.equal(transfer.body.data!.partnerFeeAmount, partnerFee.toString());
    await stack.fund(depositAddress, 'USDC', 40_000_000n);
    const deadline = Date.now() + 150_000;
    let status = '';
    while (Date.now() < deadline) {
      status = (await stack.api<{ status: string }>('GET', `/api/private-route/${routeId}`)).body.data!.status;
      if (status === 'COMPLETED' || status === 'FAILED') break;
      await new Promise((resolve) => setTimeout(resolve, 1_000));
    }
    assert.equal(status, 'COMPLETED');

    const ledger = await stack.service.db.select().from(ledgerEntries).where(eq(ledgerEntries.routeId, routeId));
    const entry = (kind: string) => ledger.find((e) => e.kind === kind);
    assert.equal(entry('partner_fee')?.amount, partnerFee.toString(), 'the ledger books the quoted partner fee');
    assert.equal(entry('partner_fee')?.chainId, destination);
    assert.equal(entry('paid')?.amount, transfer.body.data!.quotedOutputAmount, 'the recipient is paid exactly the quote, fee already out');

    const listed = await stack.routectl('partner', 'fees', '--json');
    assert.equal(listed.code, 0, listed.stderr);
    const owed = (JSON.parse(listed.stdout) as { partner: string; chainId: number; amount: string; transfers: number }[]).filter((o) => o.partner === name);
    assert.deepEqual(
      owed.map(({ chainId, amount, transfers }) => ({ chainId, amount, transfers })),
      [{ chainId: destination, amount: partnerFee.toString(), transfers: 1 }],
    );
    const table = await stack.routectl('partner', 'fees');
    assert.match(table.stdout, new RegExp(`${name}\\s+${destination}\\s+0x[0-9a-fA-F]{40}\\s+${partnerFee}\\s+1`));

    // The key finds its transfer again by its own reference, by the deposit the watcher saw on chain, and by the
    // deposit address; another key and a keyless caller find nothing.
    type Page = { items: { routeId: string; status: string; externalId: string | null; depositTxHash: string | null }[]; nextCursor: string | null };
    const byExternalId = await stack.api<Page>('GET', '/api/private-route?externalId=order-e2e-1', undefined, headers);
    assert.equal(byExternalId.status, 200, JSON.stringify(byExternalId.body));
    const [found] = byExternalId.body.data!.items;
    assert.deepEqual([found?.routeId, found?.status, found?.externalId], [routeId, 'COMPLETED', 'order-e2e-1']);
    assert.match(found!.depositTxHash ?? '', /^0x[0-9a-f]{64}$/);
    const ids = (page: { body: { data?: Page } }) => page.body.data!.items.map((t) => t.routeId);
    assert.deepEqual(ids(await stack.api<Page>('GET', `/api/private-route?depositTxHash=${found!.depositTxHash}`, undefined, headers)), [routeId]);
    assert.deepEqual(ids(await stack.api<Page>('GET', `/api/private-route?depositAddress=${depositAddress}`, undefined, headers)), [routeId]);
    const other = /^(prk_[A-Za-z0-9_-]{43})$/m.exec((await stack.routectl('apikey', 'create', '--name', 'other-wallet')).stdout)?.[1];
    assert.ok(other);
    assert.deepEqual(ids(await stack.api<Page>('GET', `/api/private-route?depositTxHash=${found!.depositTxHash}`, undefined, { 'X-Api-Key': other })), []);
    const keyless = await stack.api('GET', '/api/private-route?externalId=order-e2e-1');
    assert.equal(keyless.status, 401);
    assert.equal((keyless.body as { code?: string }).code, 'API_KEY_REQUIRED');
  });
});
