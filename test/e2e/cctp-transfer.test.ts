import assert from 'node:assert/strict';
import { after, afterEach, before, describe, test } from 'node:test';
import { type Address, toHex } from 'viem';
import { eq } from 'drizzle-orm';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { txIntents } from '../../src/db/schema.ts';
import { amountClassOf } from '../../src/privacy/amountClass.ts';
import { startTestStack, waitFor, type TestStack } from '../support/testStack.ts';

let stack: TestStack;

before(async () => {
  // Attested burns stay receivable for 60 destination blocks: a route parked longer finds its message expired.
  stack = await startTestStack({
    env: { BRIDGE_PROVIDER: 'cctp', STEP_MAX_ATTEMPTS: '2', STEP_TIME_BUDGET_SECONDS: '40', DEVNET_IRIS_EXPIRATION_BLOCKS: '60' },
  });
});
after(async () => stack?.close());
afterEach(() => stack.relay.faults.clear());

interface Quote {
  symbol: string;
  destSymbol: string;
  amount: string;
  quotedOutputAmount: string;
  feeAmount: string;
  bridgeFeeAmount: string;
  privacyFeeAmount: string;
  roundingAmount: string;
  feeUsd: number;
  bridgeFeeUsd: number;
  privacyFeeUsd: number;
  quotedOutputUsd: number;
  etaSeconds: number;
  sourceToken: { chainId: number; address: string; symbol: string; decimals: number };
  destToken: { chainId: number; address: string; symbol: string; decimals: number };
}
interface Transfer extends Quote {
  routeId: string;
  status: string;
  error: string | null;
  needsAttention: boolean;
  depositAddress: Address;
  hubAccount: Address;
}

const routectl = (...args: string[]) => stack.routectl(...args);

const chainId = (role: string) => stack.manifest.chains.find((c) => c.role === role)!.chainId;
const freshAddress = () => privateKeyToAccount(generatePrivateKey()).address;

async function create(dest: 'destination' | 'hub', amount: string, recipient: Address): Promise<Transfer> {
  const { status, body } = await stack.api<Transfer>('POST', '/api/private-route', {
    sourceChainId: chainId('source'),
    destChainId: chainId(dest),
    amount,
    userDestinationAddress: recipient,
  });
  assert.equal(status, 200, JSON.stringify(body));
  return body.data!;
}

const until = (routeId: string, what: string, ok: (t: Transfer) => boolean) =>
  waitFor(
    `${routeId}: ${what}`,
    async () => {
      const t = (await stack.api<Transfer>('GET', `/api/private-route/${routeId}`)).body.data!;
      return ok(t) ? t : undefined;
    },
    90_000,
  );

describe('burn-and-mint mode (CCTP v2) on the local stack', () => {
  test('discovery lists the CCTP chains and USDC alone', async () => {
    const chains = (await stack.api<Array<{ chainId: number }>>('GET', '/api/bridge/chains')).body.data!;
    assert.deepEqual(chains.map((c) => c.chainId).sort(), stack.manifest.chains.map((c) => c.chainId).sort());
    const tokens = (await stack.api<Array<{ symbol: string; decimals: number; address: string }>>('GET', `/api/bridge/tokens?chainId=${chainId('source')}`))
      .body.data!;
    assert.deepEqual(
      tokens.map((t) => [t.symbol, t.decimals, t.address]),
      [['USDC', 6, stack.token('source', 'USDC')]],
    );
  });

  test('the quote itemizes service, privacy and bridge fees, and they add up exactly', async () => {
    const { status, body } = await stack.api<Quote>('POST', '/api/private-route/quote', {
      sourceChainId: chainId('source'),
      destChainId: chainId('destination'),
      amount: '1000',
    });
    assert.equal(status, 200, JSON.stringify(body));
    const q = body.data!;
    assert.equal(q.symbol, 'USDC');
    assert.equal(q.destSymbol, 'USDC');
    const [amount, output, fee, bridgeFee, privacyFee] = [q.amount, q.quotedOutputAmount, q.feeAmount, q.bridgeFeeAmount, q.privacyFeeAmount].map(BigInt) as [
      bigint,
      bigint,
      bigint,
      bigint,
      bigint,
    ];
    assert.equal(
      output,
      amount - fee - bridgeFee - privacyFee - BigInt(q.roundingAmount),
      'every unit of the input is itemized, the rounding to the amount class too',
    );
    assert.equal(amountClassOf(output), output);
    assert.equal(fee, 15_000_000n, '1.5 % of 1000 USDC');
    assert.ok(bridgeFee > 0n, 'fast transfers pay Circle a fee');
    assert.ok(privacyFee > 0n, 'the pool charges its unshield fee');
    assert.equal(q.feeUsd, 15);
    assert.equal(q.privacyFeeUsd, Math.floor(Number(privacyFee) / 1e4) / 100, 'USD figures are rounded down to the cent');
    assert.ok(q.etaSeconds > 0);
  });

  test('non-USDC requests (native ETH included) are refused with a clear reason', async () => {
    for (const body of [{ tokenSymbol: 'WETH' }, { destTokenSymbol: 'WETH' }, { tokenSymbol: 'ETH' }, { destTokenSymbol: 'ETH' }]) {
      const response = await stack.api('POST', '/api/private-route/quote', {
        sourceChainId: chainId('source'),
        destChainId: chainId('destination'),
        amount: '10',
        ...body,
      });
      assert.equal(response.status, 400);
      assert.match(response.body.error!, /burn-and-mint mode moves USDC only/);
      assert.equal((response.body as { code?: string }).code, 'UNSUPPORTED_TOKEN');
    }
    const pair = { sourceChainId: chainId('source'), destChainId: chainId('destination') };
    const unknown = await stack.api('POST', '/api/private-route/quote', { ...pair, amount: '10', tokenAddress: '0x000000000000000000000000000000000000dEaD' });
    assert.equal(unknown.status, 400);
    assert.equal((unknown.body as { code?: string }).code, 'UNSUPPORTED_TOKEN');
    assert.match(unknown.body.error!, /tokenAddress 0x0+dEaD is not a supported token on chain .*burn-and-mint mode moves USDC only/);
  });

  test("USDC named by its address, the amount in smallest units: the same quote, naming both chains' USDC", async () => {
    const pair = { sourceChainId: chainId('source'), destChainId: chainId('destination') };
    const bySymbol = (await stack.api<Quote>('POST', '/api/private-route/quote', { ...pair, amount: '1000' })).body.data!;
    const byAddress = await stack.api<Quote>('POST', '/api/private-route/quote', {
      ...pair,
      tokenAddress: stack.token('source', 'USDC'),
      destTokenAddress: stack.token('destination', 'USDC'),
      amountSmallestUnits: '1000000000',
    });
    assert.equal(byAddress.status, 200, JSON.stringify(byAddress.body));
    for (const field of ['amount', 'quotedOutputAmount', 'feeAmount', 'bridgeFeeAmount', 'privacyFeeAmount', 'sourceToken', 'destToken'] as const) {
      assert.deepEqual(byAddress.body.data![field], bySymbol[field], field);
    }
    assert.deepEqual(bySymbol.sourceToken, { chainId: pair.sourceChainId, address: stack.token('source', 'USDC'), symbol: 'USDC', decimals: 6 });
    assert.deepEqual(bySymbol.destToken, { chainId: pair.destChainId, address: stack.token('destination', 'USDC'), symbol: 'USDC', decimals: 6 });
  });

  test('source → destination completes; balances are right on every chain', async () => {
    const recipient = freshAddress();
    const created = await create('destination', '250', recipient);
    await stack.fund(created.depositAddress, 'USDC', BigInt(created.amount));
    const done = await until(created.routeId, 'completed', (t) => t.status === 'COMPLETED' || t.status === 'FAILED');
    assert.equal(done.status, 'COMPLETED', done.error ?? '');
    const received = await stack.balanceOf('destination', 'USDC', recipient);
    assert.ok(received >= BigInt(created.quotedOutputAmount), `recipient got ${received}, quoted ${created.quotedOutputAmount}`);
    // The burn is sized so that even Circle's maxFee leaves the quote; Circle charged its expected fee (1 bps on the
    // devnet), so the recipient also got the unused part of maxFee: the 20 % buffer on that fee, and rounding.
    const bufferBound = BigInt(created.quotedOutputAmount) / 50_000n + 3n;
    assert.ok(
      received - BigInt(created.quotedOutputAmount) <= bufferBound,
      `at most the maxFee buffer above the quote (${received - BigInt(created.quotedOutputAmount)})`,
    );
    assert.equal(await stack.balanceOf('source', 'USDC', created.depositAddress), 0n, 'the deposit was burned');
    assert.equal(await stack.balanceOf('hub', 'USDC', created.hubAccount), 0n, 'everything minted on the hub was shielded');

    // The exit account that burns got its gas from the pool's relayer, after the withdrawal: never from the gas
    // account that funded the hub account's deposit, so no funding path joins the two.
    const intents = await stack.service.db.select().from(txIntents).where(eq(txIntents.routeId, created.routeId));
    const relayer = stack.service.activityDeps.poolRelayer.address;
    const gasAccount = stack.service.activityDeps.gasAccount.address;
    const funderOf = (prefix: string) => intents.filter((i) => i.step.startsWith(prefix) && i.step.includes(':gas:')).map((i) => i.fromAddress.toLowerCase());
    assert.deepEqual([...new Set(funderOf('bridge-out'))], [relayer.toLowerCase()]);
    assert.deepEqual([...new Set(funderOf('shield'))], [gasAccount.toLowerCase()]);
    const [withdrawal] = intents.filter((i) => i.step === 'unshield');
    assert.equal(withdrawal?.fromAddress.toLowerCase(), relayer.toLowerCase(), 'the relayer submits the withdrawal');
  });

  test('a destination that is the hub chain itself is paid by a plain transfer', async () => {
    const recipient = freshAddress();
    const created = await create('hub', '80', recipient);
    assert.equal(created.bridgeFeeAmount, '0');
    await stack.fund(created.depositAddress, 'USDC', BigInt(created.amount));
    const done = await until(created.routeId, 'completed', (t) => t.status === 'COMPLETED' || t.status === 'FAILED');
    assert.equal(done.status, 'COMPLETED', done.error ?? '');
    assert.equal(await stack.balanceOf('hub', 'USDC', recipient), BigInt(created.quotedOutputAmount));
  });

  test('a failing attestation parks the transfer and `retry` completes it', async () => {
    const recipient = freshAddress();
    const created = await create('destination', '60', recipient);
    // the Iris emulator answers 500 for attestations of burns leaving the hub
    assert.equal((await routectl('devnet', 'fault', 'set', 'bridge-out')).code, 0);
    await stack.fund(created.depositAddress, 'USDC', BigInt(created.amount));
    const parked = await until(created.routeId, 'parked', (t) => t.needsAttention);
    assert.equal(parked.status, 'BRIDGING_OUT');
    assert.equal((await routectl('devnet', 'fault', 'clear')).code, 0);
    const retried = await routectl('retry', created.routeId, '--reason', 'attestations answer again');
    assert.equal(retried.code, 0, retried.stderr);
    assert.match(retried.stdout, /retrying bridge-out/);
    const done = await until(created.routeId, 'completed', (t) => t.status === 'COMPLETED' || t.status === 'FAILED');
    assert.equal(done.status, 'COMPLETED', done.error ?? '');
    assert.ok((await stack.balanceOf('destination', 'USDC', recipient)) >= BigInt(created.quotedOutputAmount));
  });

  test('a route parked past its message’s expirationBlock is re-attested on `retry` and minted once, paid the quote', async () => {
    const recipient = freshAddress();
    const created = await create('destination', '45', recipient);
    assert.equal((await routectl('devnet', 'fault', 'set', 'bridge-out')).code, 0);
    await stack.fund(created.depositAddress, 'USDC', BigInt(created.amount));
    const parked = await until(created.routeId, 'parked', (t) => t.needsAttention);
    assert.equal(parked.status, 'BRIDGING_OUT');
    // Iris attested the burn when it first saw it (its answers failed since): the destination mines past it meanwhile.
    await stack.chainClient('destination').request({ method: 'anvil_mine' as never, params: [toHex(80)] as never });
    const minedTo = await stack.chainClient('destination').getBlockNumber({ cacheTime: 0 });
    assert.equal((await routectl('devnet', 'fault', 'clear')).code, 0);
    const retried = await routectl('retry', created.routeId, '--reason', 'attestations answer again');
    assert.equal(retried.code, 0, retried.stderr);
    const done = await until(created.routeId, 'completed', (t) => t.status === 'COMPLETED' || t.status === 'FAILED');
    assert.equal(done.status, 'COMPLETED', done.error ?? '');
    assert.ok((await stack.balanceOf('destination', 'USDC', recipient)) >= BigInt(created.quotedOutputAmount));
    // The mint that paid carries the renewed message: its step names an expirationBlock past the blocks mined.
    const mints = (await stack.service.db.select().from(txIntents).where(eq(txIntents.routeId, created.routeId))).filter((i) =>
      i.step.startsWith('bridge-out:mint:'),
    );
    assert.equal(mints.length, 1, mints.map((m) => m.step).join(', '));
    const expiration = BigInt(mints[0]!.step.split(':').at(-1)!);
    assert.ok(expiration > minedTo, `minted with a renewed message (receivable until ${expiration}, parked until ${minedTo})`);
  });
});
