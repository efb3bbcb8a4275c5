import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createPublicClient, createWalletClient, erc20Abi, http, zeroAddress, type Address, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { DEVNET_ACCOUNTS, startDevnetChains, type DevnetChains } from '../../devnet/chains.ts';
import { freeChainPorts } from '../../devnet/ports.ts';
import type { ChainRole, DevnetChain, DevnetManifest } from '../../devnet/manifest.ts';
import { startRelayEmulator, type PriceWalkOptions, type RelayEmulator } from '../../devnet/emulators/relay/index.ts';
import { parseUsdPrice, quoteExactInput } from '../../devnet/emulators/relay/pricing.ts';
import {
  BridgeRouteError,
  BridgeUnavailableError,
  type BridgeOrderStatus,
  type BridgeQuoteRequest,
  type DepositAddressBridge,
} from '../../src/providers/bridge.ts';
import { createRelayBridge } from '../../src/providers/relay/adapter.ts';

const USD_PRICES = { USDC: '1', WETH: '2500' };
const FEE_BPS = 10;
const USDC = (whole: bigint) => whole * 10n ** 6n;
const WETH = (whole: bigint) => whole * 10n ** 18n;

const stateDir = mkdtempSync(join(tmpdir(), 'relay-emulator-test-'));
const statePath = join(stateDir, 'relay.json');
const faucet = privateKeyToAccount(DEVNET_ACCOUNTS.faucet);
const solver = privateKeyToAccount(DEVNET_ACCOUNTS.relaySolver).address;

let chains: DevnetChains | undefined;
let emulator: RelayEmulator | undefined;
let bridge: DepositAddressBridge;

function manifest(): DevnetManifest {
  assert.ok(chains, 'devnet chains are running');
  return chains.manifest;
}

function chain(role: ChainRole): DevnetChain {
  const found = manifest().chains.find((c) => c.role === role);
  assert.ok(found, `no ${role} chain`);
  return found;
}

function token(role: ChainRole, symbol: string): Address {
  const found = chain(role).tokens.find((t) => t.symbol === symbol);
  assert.ok(found, `no ${symbol} on ${role}`);
  return found.address;
}

async function balanceOf(role: ChainRole, symbol: string, owner: Address): Promise<bigint> {
  const client = createPublicClient({ transport: http(chain(role).rpcUrl) });
  return client.readContract({ address: token(role, symbol), abi: erc20Abi, functionName: 'balanceOf', args: [owner] });
}

/** The faucet sends `amount` of `symbol` to `to` on `role`'s chain; returns the mined tx hash. */
async function faucetTransfer(role: ChainRole, symbol: string, to: Address, amount: bigint): Promise<Hex> {
  const c = chain(role);
  const wallet = createWalletClient({ account: faucet, transport: http(c.rpcUrl) });
  const hash = await wallet.writeContract({
    chain: null,
    address: token(role, symbol),
    abi: erc20Abi,
    functionName: 'transfer',
    args: [to, amount],
  });
  const receipt = await createPublicClient({ transport: http(c.rpcUrl) }).waitForTransactionReceipt({ hash, pollingInterval: 50 });
  assert.equal(receipt.status, 'success');
  return hash;
}

async function waitForState(requestId: string, states: string[], timeoutMs = 20_000): Promise<BridgeOrderStatus> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const status = await bridge.orderStatus(requestId);
    if (states.includes(status.state)) return status;
    if (Date.now() > deadline) assert.fail(`order ${requestId} still ${status.providerStatus} after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

const freshAddress = () => privateKeyToAccount(generatePrivateKey()).address;

function request(
  overrides: Partial<BridgeQuoteRequest> &
    Pick<BridgeQuoteRequest, 'originChainId' | 'destinationChainId' | 'originCurrency' | 'destinationCurrency' | 'amount'>,
): BridgeQuoteRequest {
  return {
    tradeType: 'EXACT_INPUT',
    user: faucet.address,
    recipient: freshAddress(),
    refundTo: freshAddress(),
    useDepositAddress: false,
    ...overrides,
  };
}

async function startEmulator(): Promise<RelayEmulator> {
  return startRelayEmulator({
    manifest: manifest(),
    port: 0,
    solverPrivateKey: DEVNET_ACCOUNTS.relaySolver,
    usdPrices: USD_PRICES,
    feeBps: FEE_BPS,
    pollIntervalMs: 100,
    statePath,
  });
}

before(async () => {
  chains = await startDevnetChains({
    ports: await freeChainPorts(),
  });
  emulator = await startEmulator();
  bridge = createRelayBridge({ baseUrl: emulator.url });
});

after(async () => {
  await emulator?.stop();
  await chains?.stop();
  rmSync(stateDir, { recursive: true, force: true });
});

describe('relay emulator through the production adapter', () => {
  test('chains: every devnet chain, in Relay’s shape', async () => {
    const listed = await bridge.listChains();
    assert.deepEqual(
      listed.map((c) => [c.chainId, c.name, c.vmType]),
      manifest().chains.map((c) => [c.chainId, c.name, 'evm']),
    );
    const raw = (await (await fetch(`${emulator!.url}/chains`)).json()) as { chains: Array<Record<string, unknown>> };
    const hub = raw.chains.find((c) => c.id === chain('hub').chainId)!;
    assert.equal(hub.depositEnabled, true);
    assert.equal(hub.disabled, false);
    assert.deepEqual(hub.solverAddresses, [solver.toLowerCase()]);
  });

  test('tokens: per chain, with case-insensitive search by symbol or name', async () => {
    const hub = chain('hub');
    const all = await bridge.listTokens(hub.chainId);
    assert.deepEqual(
      all.map((t) => [t.symbol, t.address, t.decimals]),
      // The native currency first, as Relay names it: the zero address.
      [['ETH', zeroAddress, 18], ...hub.tokens.map((t) => [t.symbol, t.address, t.decimals])],
    );
    assert.deepEqual(
      (await bridge.listTokens(hub.chainId, 'usdc')).map((t) => t.symbol),
      ['USDC'],
    );
    assert.deepEqual(
      (await bridge.listTokens(hub.chainId, 'WRAPPED')).map((t) => t.symbol),
      ['WETH'],
    );
    assert.deepEqual(await bridge.listTokens(hub.chainId, 'dai'), []);
    assert.deepEqual(await bridge.listTokens(123456), []);
  });

  test('token price: the fixed USD prices', async () => {
    assert.equal(await bridge.tokenUsdPrice(chain('source').chainId, token('source', 'WETH')), '2500');
    assert.equal(await bridge.tokenUsdPrice(chain('hub').chainId, token('hub', 'USDC')), '1');
    assert.equal(await bridge.tokenUsdPrice(chain('hub').chainId, freshAddress()), null);
    assert.equal(await bridge.tokenUsdPrice(chain('source').chainId, zeroAddress), '2500', 'native ETH is priced as WETH');
  });

  test('quote EXACT_INPUT: converted at the fixed prices minus 0.1%, rounded down', async () => {
    const usdcToUsdc = await bridge.quote(
      request({
        originChainId: chain('source').chainId,
        destinationChainId: chain('hub').chainId,
        originCurrency: token('source', 'USDC'),
        destinationCurrency: token('hub', 'USDC'),
        amount: USDC(100n),
      }),
    );
    assert.equal(usdcToUsdc.amountIn, USDC(100n));
    assert.equal(usdcToUsdc.amountOut, 99_900_000n);
    assert.equal(usdcToUsdc.amountInUsd, '100');
    assert.equal(usdcToUsdc.amountOutUsd, '99.9');
    assert.equal(usdcToUsdc.timeEstimateSeconds, 10);
    assert.equal(usdcToUsdc.requestId, null);
    assert.equal(usdcToUsdc.depositAddress, null);

    const usdcToWeth = await bridge.quote(
      request({
        originChainId: chain('hub').chainId,
        destinationChainId: chain('destination').chainId,
        originCurrency: token('hub', 'USDC'),
        destinationCurrency: token('destination', 'WETH'),
        amount: USDC(1000n) + 1n,
      }),
    );
    // 1000.000001 USDC / 2500 = 0.4000000004 WETH; × 0.999 = 0.3996000003996 WETH.
    assert.equal(usdcToWeth.amountOut, 399_600_000_399_600_000n);
    // 999.000000999 USD, rounded down to micro-dollars.
    assert.equal(usdcToWeth.amountOutUsd, '999');
  });

  test('quote EXACT_OUTPUT: the smallest input that yields the amount', async () => {
    const base = {
      originChainId: chain('source').chainId,
      destinationChainId: chain('destination').chainId,
      originCurrency: token('source', 'USDC'),
      destinationCurrency: token('destination', 'WETH'),
    };
    const wanted = WETH(1n);
    const exactOut = await bridge.quote(request({ ...base, amount: wanted, tradeType: 'EXACT_OUTPUT' }));
    assert.equal(exactOut.amountOut, wanted);
    // ceil(1e18 × 2500e6 × 10000 / (1e18 × 9990)) = ceil(2502502502.50…)
    assert.equal(exactOut.amountIn, 2_502_502_503n);
    const atIn = await bridge.quote(request({ ...base, amount: exactOut.amountIn }));
    const belowIn = await bridge.quote(request({ ...base, amount: exactOut.amountIn - 1n }));
    assert.ok(atIn.amountOut >= wanted, `${atIn.amountOut} >= ${wanted}`);
    assert.ok(belowIn.amountOut < wanted, `${belowIn.amountOut} < ${wanted}`);

    const usdc = await bridge.quote(
      request({
        ...base,
        destinationCurrency: token('destination', 'USDC'),
        amount: 99_900_000n,
        tradeType: 'EXACT_OUTPUT',
      }),
    );
    assert.equal(usdc.amountIn, USDC(100n));
    assert.equal(usdc.amountOut, 99_900_000n);
  });

  test('400 answers map to BridgeRouteError', async () => {
    const base = {
      originChainId: chain('source').chainId,
      destinationChainId: chain('hub').chainId,
      originCurrency: token('source', 'USDC'),
      destinationCurrency: token('hub', 'USDC'),
      amount: USDC(1n),
    };
    await assert.rejects(bridge.quote(request({ ...base, originCurrency: freshAddress() })), (err: Error) => {
      assert.ok(err instanceof BridgeRouteError);
      assert.match(err.message, /^no route: .*\(INVALID_INPUT_CURRENCY\)$/);
      return true;
    });
    await assert.rejects(bridge.quote(request({ ...base, destinationChainId: 999 })), /UNSUPPORTED_CHAIN/);
    await assert.rejects(
      bridge.quote(request({ ...base, destinationChainId: base.originChainId, destinationCurrency: base.originCurrency })),
      /UNSUPPORTED_ROUTE/,
    );
    // 1 wei of WETH is worth 0.0000000000000025 USD: no USDC unit comes out.
    await assert.rejects(bridge.quote(request({ ...base, originCurrency: token('source', 'WETH'), amount: 1n })), /AMOUNT_TOO_LOW/);
    await assert.rejects(bridge.quote(request({ ...base, amount: USDC(100_000_000n) })), /INSUFFICIENT_LIQUIDITY/);
    const raw = await fetch(`${emulator!.url}/quote/v2`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ ...base, amount: '1.5', user: faucet.address, tradeType: 'EXACT_INPUT' }),
    });
    assert.equal(raw.status, 400);
    assert.deepEqual(Object.keys((await raw.json()) as object).sort(), ['errorCode', 'message']);
  });

  test('a deposit to the deposit address is filled once, for exactly amountOut', async () => {
    const recipient = freshAddress();
    const quote = await bridge.quote(
      request({
        originChainId: chain('source').chainId,
        destinationChainId: chain('hub').chainId,
        originCurrency: token('source', 'USDC'),
        destinationCurrency: token('hub', 'USDC'),
        amount: USDC(250n),
        recipient,
        useDepositAddress: true,
      }),
    );
    assert.ok(quote.requestId && /^0x[0-9a-f]{64}$/.test(quote.requestId));
    assert.ok(quote.depositAddress);
    assert.equal((await bridge.orderStatus(quote.requestId)).state, 'waiting');

    const depositTx = await faucetTransfer('source', 'USDC', quote.depositAddress, quote.amountIn);
    const done = await waitForState(quote.requestId, ['success', 'failed', 'refunded']);
    assert.equal(done.state, 'success');
    assert.equal(done.providerStatus, 'success');
    assert.equal(done.destinationChainId, chain('hub').chainId);
    assert.deepEqual(done.inTxHashes, [depositTx]);
    assert.equal(done.outTxHashes.length, 1);
    assert.equal(await balanceOf('hub', 'USDC', recipient), quote.amountOut);
    // The deposit stays at the deposit address.
    assert.equal(await balanceOf('source', 'USDC', quote.depositAddress), quote.amountIn);

    // More money at the address, and several more watcher rounds: still one fill.
    await faucetTransfer('source', 'USDC', quote.depositAddress, quote.amountIn);
    await new Promise((resolve) => setTimeout(resolve, 600));
    const later = await bridge.orderStatus(quote.requestId);
    assert.deepEqual(later.outTxHashes, done.outTxHashes);
    assert.equal(await balanceOf('hub', 'USDC', recipient), quote.amountOut);
  });

  test('EXACT_OUTPUT with an overpaid deposit fills the quoted amountOut only', async () => {
    const recipient = freshAddress();
    const quote = await bridge.quote(
      request({
        originChainId: chain('hub').chainId,
        destinationChainId: chain('destination').chainId,
        originCurrency: token('hub', 'USDC'),
        destinationCurrency: token('destination', 'WETH'),
        amount: WETH(1n) / 10n,
        tradeType: 'EXACT_OUTPUT',
        recipient,
        useDepositAddress: true,
      }),
    );
    assert.ok(quote.requestId && quote.depositAddress);
    assert.equal(quote.amountOut, WETH(1n) / 10n);
    await faucetTransfer('hub', 'USDC', quote.depositAddress, quote.amountIn + USDC(5n));
    assert.equal((await waitForState(quote.requestId, ['success', 'failed', 'refunded'])).state, 'success');
    assert.equal(await balanceOf('destination', 'WETH', recipient), WETH(1n) / 10n);
  });

  test('an underpaid deposit waits', async () => {
    const quote = await bridge.quote(
      request({
        originChainId: chain('source').chainId,
        destinationChainId: chain('hub').chainId,
        originCurrency: token('source', 'USDC'),
        destinationCurrency: token('hub', 'USDC'),
        amount: USDC(10n),
        useDepositAddress: true,
      }),
    );
    await faucetTransfer('source', 'USDC', quote.depositAddress!, quote.amountIn - 1n);
    await new Promise((resolve) => setTimeout(resolve, 400));
    assert.equal((await bridge.orderStatus(quote.requestId!)).providerStatus, 'waiting');
  });

  test('unknown request ids are reported as waiting, like Relay', async () => {
    const status = await bridge.orderStatus(`0x${'00'.repeat(32)}`);
    assert.equal(status.state, 'waiting');
    assert.deepEqual(status.outTxHashes, []);
  });
});

describe('relay emulator fault injection', () => {
  const bridgeIn = () =>
    request({
      originChainId: chain('source').chainId,
      destinationChainId: chain('hub').chainId,
      originCurrency: token('source', 'USDC'),
      destinationCurrency: token('hub', 'USDC'),
      amount: USDC(5n),
      useDepositAddress: true,
    });

  test("'fail' with count 1: the first quote is unavailable, the second works", async () => {
    const res = await fetch(`${emulator!.url}/_emulator/faults`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ operation: 'bridge-in', mode: 'fail', count: 1 }),
    });
    assert.equal(res.status, 200);
    assert.deepEqual(emulator!.faults.list(), [{ operation: 'bridge-in', mode: 'fail', count: 1 }]);

    // A bridge-out quote is not affected.
    await bridge.quote(
      request({
        originChainId: chain('hub').chainId,
        destinationChainId: chain('destination').chainId,
        originCurrency: token('hub', 'USDC'),
        destinationCurrency: token('destination', 'USDC'),
        amount: USDC(5n),
      }),
    );
    await assert.rejects(bridge.quote(bridgeIn()), (err: Error) => {
      assert.ok(err instanceof BridgeUnavailableError);
      assert.match(err.message, /injected fault/);
      return true;
    });
    const ok = await bridge.quote(bridgeIn());
    assert.ok(ok.depositAddress);
    const listed = (await (await fetch(`${emulator!.url}/_emulator/faults`)).json()) as { faults: unknown[] };
    assert.deepEqual(listed.faults, []);
  });

  test('faults can be listed and cleared per operation or all at once', async () => {
    const post = (body: object) =>
      fetch(`${emulator!.url}/_emulator/faults`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    assert.equal((await post({ operation: 'bridge-in', mode: 'delay' })).status, 400, 'delay needs delayMs');
    assert.equal((await post({ operation: 'sideways', mode: 'fail' })).status, 400);
    await post({ operation: 'bridge-in', mode: 'fail' });
    await post({ operation: 'bridge-out', mode: 'delay', delayMs: 1000 });
    assert.equal(emulator!.faults.list().length, 2);
    await fetch(`${emulator!.url}/_emulator/faults/bridge-in`, { method: 'DELETE' });
    assert.deepEqual(emulator!.faults.list(), [{ operation: 'bridge-out', mode: 'delay', delayMs: 1000 }]);
    await fetch(`${emulator!.url}/_emulator/faults`, { method: 'DELETE' });
    assert.deepEqual(emulator!.faults.list(), []);
  });

  test("'refund': the deposit goes back to refundTo and the order is refunded", async () => {
    emulator!.faults.set({ operation: 'bridge-out', mode: 'refund', count: 1 });
    const recipient = freshAddress();
    const refundTo = freshAddress();
    const quote = await bridge.quote(
      request({
        originChainId: chain('hub').chainId,
        destinationChainId: chain('destination').chainId,
        originCurrency: token('hub', 'USDC'),
        destinationCurrency: token('destination', 'USDC'),
        amount: USDC(42n),
        recipient,
        refundTo,
        useDepositAddress: true,
      }),
    );
    await faucetTransfer('hub', 'USDC', quote.depositAddress!, quote.amountIn);
    const done = await waitForState(quote.requestId!, ['success', 'failed', 'refunded']);
    assert.equal(done.state, 'refunded');
    assert.equal(done.providerStatus, 'refund');
    assert.equal(done.outTxHashes.length, 1);
    assert.equal(await balanceOf('hub', 'USDC', refundTo), quote.amountIn);
    assert.equal(await balanceOf('destination', 'USDC', recipient), 0n);
    assert.deepEqual(emulator!.faults.list(), []);
  });

  test("'delay': the fill waits delayMs", async () => {
    emulator!.faults.set({ operation: 'bridge-in', mode: 'delay', delayMs: 1500, count: 1 });
    const order = bridgeIn();
    const quote = await bridge.quote(order);
    await faucetTransfer('source', 'USDC', quote.depositAddress!, quote.amountIn);
    const seen = await waitForState(quote.requestId!, ['pending', 'success']);
    const seenAt = Date.now();
    assert.equal(seen.providerStatus, 'delayed');
    const done = await waitForState(quote.requestId!, ['success']);
    assert.ok(Date.now() - seenAt >= 1000, 'filled only after the delay');
    assert.equal(await balanceOf('hub', 'USDC', order.recipient), quote.amountOut);
    assert.equal(done.outTxHashes.length, 1);
  });
});

/** GET /requests/v2, Relay's public request history, as an analyst would read it. */
interface RelayRequest {
  id: string;
  status: string;
  user: string;
  recipient: string;
  data: { inTxs: Array<{ hash: string; chainId: number }>; outTxs: Array<{ hash: string; chainId: number }> };
  createdAt: string;
  updatedAt: string;
}

async function getRequests(query: Record<string, string | number>): Promise<{ requests: RelayRequest[]; continuation?: string }> {
  const params = new URLSearchParams(Object.entries(query).map(([k, v]) => [k, String(v)]));
  const res = await fetch(`${emulator!.url}/requests/v2?${params}`);
  assert.equal(res.status, 200, await res.clone().text());
  return (await res.json()) as { requests: RelayRequest[]; continuation?: string };
}

describe('relay emulator public request history', () => {
  test('lists a filled deposit-address order with its deposit and payout transactions', { timeout: 60_000 }, async () => {
    const user = freshAddress();
    const recipient = freshAddress();
    const quote = await bridge.quote(
      request({
        originChainId: chain('source').chainId,
        destinationChainId: chain('hub').chainId,
        originCurrency: token('source', 'USDC'),
        destinationCurrency: token('hub', 'USDC'),
        amount: USDC(7n),
        user,
        recipient,
        useDepositAddress: true,
      }),
    );
    const depositTx = await faucetTransfer('source', 'USDC', quote.depositAddress!, quote.amountIn);
    const done = await waitForState(quote.requestId!, ['success', 'failed', 'refunded']);
    assert.equal(done.state, 'success');

    const { requests, continuation } = await getRequests({ user });
    assert.equal(continuation, undefined);
    assert.equal(requests.length, 1);
    const [listed] = requests as [RelayRequest];
    assert.equal(listed.id, quote.requestId);
    assert.equal(listed.status, 'success');
    assert.equal(listed.user, user.toLowerCase());
    assert.equal(listed.recipient, recipient.toLowerCase());
    // The public record links the deposit on the origin chain to the payout on the destination.
    assert.deepEqual(
      listed.data.inTxs.map((tx) => [tx.hash, tx.chainId]),
      [[depositTx, chain('source').chainId]],
    );
    assert.deepEqual(
      listed.data.outTxs.map((tx) => [tx.hash, tx.chainId]),
      [[done.outTxHashes[0], chain('hub').chainId]],
    );
    assert.ok(Date.parse(listed.createdAt) <= Date.parse(listed.updatedAt));

    // `user` matches the sender or the recipient, in any letter case.
    assert.deepEqual(
      (await getRequests({ user: recipient.toLowerCase() })).requests.map((r) => r.id),
      [quote.requestId],
    );
    assert.deepEqual((await getRequests({ user: freshAddress() })).requests, []);
    assert.equal((await getRequests({ user, originChainId: chain('source').chainId })).requests.length, 1);
    assert.equal((await getRequests({ user, originChainId: chain('hub').chainId })).requests.length, 0);
    assert.equal((await getRequests({ user, destinationChainId: chain('hub').chainId })).requests.length, 1);
    assert.equal((await getRequests({ user, destinationChainId: chain('destination').chainId })).requests.length, 0);
  });

  test('pages newest first with limit and an opaque continuation', { timeout: 60_000 }, async () => {
    const orders = ((await (await fetch(`${emulator!.url}/_emulator/orders`)).json()) as { orders: unknown[] }).orders;
    const all = (await getRequests({ limit: 50 })).requests;
    assert.ok(all.length >= 3, `${all.length} requests`);
    assert.equal(all.length, Math.min(orders.length, 50));
    const times = all.map((r) => Date.parse(r.createdAt));
    assert.deepEqual(
      times,
      [...times].sort((a, b) => b - a),
    );

    const paged: string[] = [];
    let continuation: string | undefined;
    do {
      const page = await getRequests({ limit: 2, ...(continuation ? { continuation } : {}) });
      assert.ok(page.requests.length <= 2);
      paged.push(...page.requests.map((r) => r.id));
      continuation = page.continuation;
    } while (continuation);
    assert.deepEqual(
      paged,
      all.map((r) => r.id),
    );

    for (const query of ['limit=51', 'limit=0', 'originChainId=abc', 'continuation=not-a-cursor']) {
      const res = await fetch(`${emulator!.url}/requests/v2?${query}`);
      assert.equal(res.status, 400, query);
      assert.equal(((await res.json()) as { errorCode: string }).errorCode, 'INVALID_INPUT');
    }
  });
});

describe('relay emulator price walk', () => {
  const STEP_MS = 5_000;
  const WALK: PriceWalkOptions = { seed: 'relay-emulator-test', stepMs: STEP_MS, volatilityBps: 10 };
  /** The walking emulators' shared clock, moved by hand. */
  let clock = Date.parse('2030-01-01T00:00:00Z');
  const started: RelayEmulator[] = [];

  async function walkingEmulator(walk: PriceWalkOptions): Promise<RelayEmulator> {
    const walking = await startRelayEmulator({
      manifest: manifest(),
      port: 0,
      solverPrivateKey: DEVNET_ACCOUNTS.relaySolver,
      usdPrices: USD_PRICES,
      feeBps: FEE_BPS,
      priceWalk: walk,
      now: () => clock,
    });
    started.push(walking);
    return walking;
  }

  async function pricesOf(walking: RelayEmulator): Promise<Record<string, string>> {
    return ((await (await fetch(`${walking.url}/_emulator/prices`)).json()) as { prices: Record<string, string> }).prices;
  }

  after(async () => {
    await Promise.all(started.map((e) => e.stop()));
  });

  test('the same seed and start give the same prices; another seed others; USDC never moves', { timeout: 60_000 }, async () => {
    const [first, twin, other] = await Promise.all([walkingEmulator(WALK), walkingEmulator({ ...WALK }), walkingEmulator({ ...WALK, seed: 'other' })]);
    assert.deepEqual(await pricesOf(first), USD_PRICES);

    clock += 40 * STEP_MS;
    const prices = await pricesOf(first);
    assert.deepEqual(await pricesOf(twin), prices);
    assert.notEqual(prices.WETH, USD_PRICES.WETH);
    assert.notEqual((await pricesOf(other)).WETH, prices.WETH);
    for (const walking of [first, twin, other]) assert.equal((await pricesOf(walking)).USDC, '1');

    // Relay's price endpoint reports the walked price too.
    const tokenPrice = await createRelayBridge({ baseUrl: first.url }).tokenUsdPrice(chain('hub').chainId, token('hub', 'WETH'));
    assert.equal(Number(tokenPrice), Number(prices.WETH));
  });

  test('volatility 0 keeps the fixed prices', { timeout: 60_000 }, async () => {
    const fixed = await walkingEmulator({ ...WALK, volatilityBps: 0 });
    clock += 1_000 * STEP_MS;
    assert.deepEqual(await pricesOf(fixed), USD_PRICES);
    const quote = await createRelayBridge({ baseUrl: fixed.url }).quote(
      request({
        originChainId: chain('hub').chainId,
        destinationChainId: chain('destination').chainId,
        originCurrency: token('hub', 'USDC'),
        destinationCurrency: token('destination', 'WETH'),
        amount: USDC(1000n) + 1n,
      }),
    );
    // The same figure as the fixed-price emulator above.
    assert.equal(quote.amountOut, 399_600_000_399_600_000n);
  });

  test('WETH quotes some steps apart differ, each at the price of its moment', { timeout: 60_000 }, async () => {
    const walking = await walkingEmulator(WALK);
    const walkingBridge = createRelayBridge({ baseUrl: walking.url });
    const wethToUsdc = request({
      originChainId: chain('hub').chainId,
      destinationChainId: chain('destination').chainId,
      originCurrency: token('hub', 'WETH'),
      destinationCurrency: token('destination', 'USDC'),
      amount: WETH(1n),
    });
    const quoteNow = async () => {
      const [quote, prices] = await Promise.all([walkingBridge.quote(wethToUsdc), pricesOf(walking)]);
      const expected = quoteExactInput(
        WETH(1n),
        { decimals: 18, price: parseUsdPrice(prices.WETH!) },
        { decimals: 6, price: parseUsdPrice(prices.USDC!) },
        BigInt(FEE_BPS),
      );
      assert.equal(quote.amountOut, expected);
      return quote;
    };

    clock += 3 * STEP_MS;
    const before = await quoteNow();
    clock += 10 * STEP_MS;
    const later = await quoteNow();
    assert.notEqual(later.amountOut, before.amountOut);
    assert.notEqual(later.amountInUsd, before.amountInUsd);
  });
});

describe('relay emulator restart', () => {
  test('orders and deposit indexes survive a restart with the same statePath', async () => {
    const quote = await bridge.quote(
      request({
        originChainId: chain('source').chainId,
        destinationChainId: chain('hub').chainId,
        originCurrency: token('source', 'USDC'),
        destinationCurrency: token('hub', 'USDC'),
        amount: USDC(3n),
        useDepositAddress: true,
      }),
    );
    await emulator!.stop();
    emulator = await startEmulator();
    bridge = createRelayBridge({ baseUrl: emulator.url });

    assert.equal((await bridge.orderStatus(quote.requestId!)).state, 'waiting');
    const next = await bridge.quote(
      request({
        originChainId: chain('source').chainId,
        destinationChainId: chain('hub').chainId,
        originCurrency: token('source', 'USDC'),
        destinationCurrency: token('hub', 'USDC'),
        amount: USDC(3n),
        useDepositAddress: true,
      }),
    );
    assert.notEqual(next.depositAddress, quote.depositAddress);
    // The order quoted before the restart still fills.
    await faucetTransfer('source', 'USDC', quote.depositAddress!, quote.amountIn);
    assert.equal((await waitForState(quote.requestId!, ['success', 'failed', 'refunded'])).state, 'success');
  });
});
