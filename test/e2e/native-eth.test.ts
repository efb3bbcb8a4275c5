import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { and, eq } from 'drizzle-orm';
import { createWalletClient, http, toHex, zeroAddress, type Address, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { ledgerEntries, transfers } from '../../src/db/schema.ts';
import { amountClassOf } from '../../src/privacy/amountClass.ts';
import { startTestStack, waitFor, type TestStack } from '../support/testStack.ts';

/**
 * Native ETH in and out in deposit-address (Relay) mode, through the public API on the local stack: an ETH → USDC and
 * a USDC → ETH transfer run at once, each paying its recipient exactly quotedOutputAmount.
 */

let stack: TestStack;
before(async () => {
  // The stray check runs every second, so a stray's refund is seen within the test.
  stack = await startTestStack({ env: { STRAY_SCAN_INTERVAL_SECONDS: '1' } });
});
after(async () => stack?.close());

interface Transfer {
  routeId: string;
  status: string;
  error: string | null;
  depositAddress: Address;
  depositTokenAddress: Address;
  amount: string;
  quotedOutputAmount: string;
  depositTxHash: string | null;
  payoutTxHash: string | null;
}

const chainId = (role: 'source' | 'hub' | 'destination') => stack.manifest.chains.find((c) => c.role === role)!.chainId;
const freshAddress = () => privateKeyToAccount(generatePrivateKey()).address;

async function create(amount: string, tokenSymbol: string, destTokenSymbol: string, recipient: Address, refundAddress?: Address): Promise<Transfer> {
  const { status, body } = await stack.api<Transfer>('POST', '/api/private-route', {
    sourceChainId: chainId('source'),
    destChainId: chainId('destination'),
    amount,
    tokenSymbol,
    destTokenSymbol,
    userDestinationAddress: recipient,
    refundAddress,
  });
  assert.equal(status, 200, JSON.stringify(body));
  return body.data!;
}

/** Sends `value` wei to `to` on the source chain from a fresh address (anvil gives it the value and its gas), as a wallet would. */
async function sendEthAsNewUser(to: Address, value: bigint): Promise<{ hash: Hex; sender: Address }> {
  const rpcUrl = stack.manifest.chains.find((c) => c.role === 'source')!.rpcUrl;
  const user = privateKeyToAccount(generatePrivateKey());
  const client = stack.chainClient('source');
  await client.request({ method: 'anvil_setBalance' as never, params: [user.address, toHex(value + 10n ** 17n)] as never });
  const hash = await createWalletClient({ account: user, transport: http(rpcUrl) }).sendTransaction({ chain: null, to, value });
  assert.equal((await client.waitForTransactionReceipt({ hash })).status, 'success');
  return { hash, sender: user.address };
}

async function untilDone(routeId: string): Promise<Transfer> {
  return waitFor(
    `${routeId} to finish`,
    async () => {
      const { body } = await stack.api<Transfer>('GET', `/api/private-route/${routeId}`);
      const t = body.data!;
      return t.status === 'COMPLETED' || t.status === 'FAILED' ? t : undefined;
    },
    180_000,
  );
}

describe('native ETH in deposit-address mode', { timeout: 500_000 }, () => {
  test('the token list names native ETH by the zero address, apart from WETH', { timeout: 30_000 }, async () => {
    const { status, body } = await stack.api<{ address: string; symbol: string; decimals: number }[]>('GET', `/api/bridge/tokens?chainId=${chainId('source')}`);
    assert.equal(status, 200);
    const eth = body.data!.find((t) => t.symbol === 'ETH');
    assert.deepEqual(eth && { address: eth.address, decimals: eth.decimals }, { address: zeroAddress, decimals: 18 });
    const weth = body.data!.find((t) => t.symbol === 'WETH');
    assert.ok(weth && weth.address !== zeroAddress, 'WETH stays the ERC-20');
  });

  test('ETH → USDC and USDC → ETH complete at once, each paying its recipient exactly the quote; the gas left at the deposit address is no stray, ETH sent later is', {
    timeout: 460_000,
  }, async () => {
    const ethRecipient = freshAddress();
    const usdcRecipient = freshAddress();
    const refundAddress = freshAddress();
    const [ethIn, ethOut] = await Promise.all([create('0.05', 'ETH', 'USDC', usdcRecipient, refundAddress), create('100', 'USDC', 'ETH', ethRecipient)]);
    assert.equal(ethIn.depositTokenAddress, zeroAddress, 'an ETH route is funded in native ETH');
    assert.equal(ethIn.amount, '50000000000000000');
    assert.equal(ethOut.depositTokenAddress, stack.token('source', 'USDC'));
    // The privacy rules hold for native amounts: each payout is a value of the amount classes' grid (wei for ETH).
    for (const { quotedOutputAmount } of [ethIn, ethOut]) assert.equal(amountClassOf(BigInt(quotedOutputAmount)), BigInt(quotedOutputAmount));

    const [funding] = await Promise.all([
      sendEthAsNewUser(ethIn.depositAddress, BigInt(ethIn.amount)),
      stack.fund(ethOut.depositAddress, 'USDC', BigInt(ethOut.amount)),
    ]);
    const [doneIn, doneOut] = await Promise.all([untilDone(ethIn.routeId), untilDone(ethOut.routeId)]);
    assert.equal(doneIn.status, 'COMPLETED', doneIn.error ?? '');
    assert.equal(doneOut.status, 'COMPLETED', doneOut.error ?? '');

    // ETH in: the recipient got exactly the quote in USDC; the native funding transaction and its sender were found.
    assert.equal(await stack.balanceOf('destination', 'USDC', usdcRecipient), BigInt(ethIn.quotedOutputAmount));
    assert.equal(doneIn.depositTxHash, funding.hash);
    const [row] = await stack.service.db.select().from(transfers).where(eq(transfers.routeId, ethIn.routeId));
    assert.equal(row!.depositSender, funding.sender);
    // The bridge-in sent exactly the deposit: the service's gas top-up paid its fee, the user's amount did not.
    const bridgeIn = await stack.chainClient('source').getTransaction({ hash: row!.bridgeInTxHash as Hex });
    assert.equal(bridgeIn.value, BigInt(ethIn.amount));

    // ETH out: a fresh recipient that sent nothing holds exactly the quote, paid natively by the fill.
    assert.equal(await stack.chainClient('destination').getBalance({ address: ethRecipient }), BigInt(ethOut.quotedOutputAmount));
    const payout = await stack.chainClient('destination').getTransaction({ hash: doneOut.payoutTxHash as Hex });
    assert.equal(payout.to?.toLowerCase(), ethRecipient.toLowerCase());
    assert.equal(payout.value, BigInt(ethOut.quotedOutputAmount));

    // What the service's gas top-up left at the finished ETH route's deposit address is not a stray: never refunded.
    const source = stack.chainClient('source');
    const dust = await source.getBalance({ address: ethIn.depositAddress });
    assert.ok(dust > 0n, 'the gas top-up left some ETH at the deposit address');
    const refunds = async () =>
      stack.service.db
        .select()
        .from(ledgerEntries)
        .where(and(eq(ledgerEntries.routeId, ethIn.routeId), eq(ledgerEntries.kind, 'refunded')));
    await new Promise((resolve) => setTimeout(resolve, 4_000));
    assert.deepEqual(await refunds(), []);
    assert.equal(await source.getBalance({ address: ethIn.depositAddress }), dust);

    // ETH sent to it later is: refunded to the refundAddress, exactly that amount, the service paying the gas.
    const stray = 3_000_000_000_000_000n;
    await sendEthAsNewUser(ethIn.depositAddress, stray);
    await waitFor('the stray ETH refunded', async () => ((await source.getBalance({ address: refundAddress })) === stray ? true : undefined), 60_000);
    const [refunded] = await waitFor('the refund booked', async () => ((await refunds()).length > 0 ? refunds() : undefined), 30_000);
    assert.deepEqual({ token: refunded!.token, amount: refunded!.amount }, { token: zeroAddress, amount: stray.toString() });
    const [after] = await stack.service.db.select().from(transfers).where(eq(transfers.routeId, ethIn.routeId));
    assert.equal(after!.needsAttention, false);
  });
});
