import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { and, eq } from 'drizzle-orm';
import { createWalletClient, erc20Abi, getAddress, http, type Address, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { ledgerEntries, transfers } from '../../src/db/schema.ts';
import { testTokenAbi, testTokenBytecode } from '../../devnet/artifacts/TestToken.ts';
import { startTestStack, waitFor, type TestStack } from '../support/testStack.ts';
import type { TransferView } from '../../src/client/types.ts';
import { assertRefundOnChain } from '../support/refunds.ts';

/** Anvil's default account 5: used by nothing else on the devnet; deploys the look-alike token. */
const STRANGER_KEY: Hex = '0x8b3a350cf5c34c9194ca85829a2df0ec3153be0318b5e2d3348e872092edffba';
const RECIPIENT = '0x000000000000000000000000000000000000bEEF';
const REFUND_A = '0x00000000000000000000000000000000000a11ce' as Address;
const REFUND_C = '0x00000000000000000000000000000000000c0ffe' as Address;
const OPERATOR_REFUND = '0x0000000000000000000000000000000000000b0b' as Address;

let stack: TestStack;
let source: number;
let destination: number;
let lookalike: Address;

before(
  async () => {
    // Deposits time out quickly and the scanner runs every second.
    // A route that asks for more peers than it gets waits in the pool for PRIVACY_MAX_WAIT_SECONDS (5 min here).
    stack = await startTestStack({
      env: {
        DEPOSIT_TIMEOUT_SECONDS: '8',
        STRAY_SCAN_INTERVAL_SECONDS: '1',
        OPERATOR_ALLOWED_DESTINATIONS: OPERATOR_REFUND,
        PRIVACY_MAX_WAIT_SECONDS: '300',
        PUBLIC_STATUS_HOLD_SECONDS: '310',
      },
    });
    const byRole = (role: string) => stack.manifest.chains.find((c) => c.role === role)!.chainId;
    [source, destination] = [byRole('source'), byRole('destination')];

    // A second ERC-20 on the source chain with the same symbol and decimals as the real USDC.
    const rpcUrl = stack.manifest.chains.find((c) => c.role === 'source')!.rpcUrl;
    const wallet = createWalletClient({ account: privateKeyToAccount(STRANGER_KEY), transport: http(rpcUrl) });
    const client = stack.chainClient('source');
    const deploy = await wallet.deployContract({ chain: null, abi: testTokenAbi, bytecode: testTokenBytecode, args: ['USD Coin', 'USDC', 6] });
    lookalike = getAddress((await client.waitForTransactionReceipt({ hash: deploy })).contractAddress!);
    const mint = await wallet.writeContract({
      chain: null,
      address: lookalike,
      abi: testTokenAbi,
      functionName: 'mint',
      args: [wallet.account.address, 1_000_000_000n],
    });
    await client.waitForTransactionReceipt({ hash: mint });
  },
  { timeout: 240_000 },
);
after(async () => stack?.close(), { timeout: 60_000 });

async function sendLookalike(to: Address, amount: bigint) {
  const rpcUrl = stack.manifest.chains.find((c) => c.role === 'source')!.rpcUrl;
  const wallet = createWalletClient({ account: privateKeyToAccount(STRANGER_KEY), transport: http(rpcUrl) });
  const hash = await wallet.writeContract({ chain: null, address: lookalike, abi: erc20Abi, functionName: 'transfer', args: [to, amount] });
  await stack.chainClient('source').waitForTransactionReceipt({ hash });
}

const balance = (token: Address, owner: Address) =>
  stack.chainClient('source').readContract({ address: token, abi: erc20Abi, functionName: 'balanceOf', args: [owner] });

async function create(refundAddress?: Address, extra: Record<string, unknown> = {}) {
  const { status, body } = await stack.api<{ routeId: string; amount: string; depositAddress: Address; depositTokenAddress: Address }>(
    'POST',
    '/api/private-route',
    {
      sourceChainId: source,
      destChainId: destination,
      amount: '10',
      userDestinationAddress: RECIPIENT,
      ...(refundAddress && { refundAddress }),
      ...extra,
    },
  );
  assert.equal(status, 200, JSON.stringify(body));
  return body.data!;
}

/** The route's `refunded` ledger entry, once it is booked (it follows the receipt). */
const refundEntry = (routeId: string) =>
  waitFor(
    `the ledger entry of ${routeId}'s refund`,
    async () => {
      const [entry] = await stack.service.db
        .select()
        .from(ledgerEntries)
        .where(and(eq(ledgerEntries.routeId, routeId), eq(ledgerEntries.kind, 'refunded')));
      return entry;
    },
    30_000,
  );

/** The full view, as the route's creator reads it (its statusToken). */
const view = async (routeId: string) => (await stack.api<TransferView>('GET', `/api/private-route/${routeId}`)).body.data!;

const row = async (routeId: string) => (await stack.service.db.select().from(transfers).where(eq(transfers.routeId, routeId)))[0]!;

describe('deposits of another token contract', { timeout: 180_000 }, () => {
  test('create and GET name the token contract to deposit; other ERC-20s sent to deposit addresses are found, held or refunded', async () => {
    const usdc = stack.token('source', 'USDC');
    const weth = stack.token('source', 'WETH');
    const [a, b, c] = await Promise.all([create(REFUND_A), create(), create(REFUND_C)]);
    for (const created of [a, b, c]) {
      assert.equal(created.depositTokenAddress, usdc);
      const view = await stack.api<{ depositTokenAddress: string }>('GET', `/api/private-route/${created.routeId}`);
      assert.equal(view.body.data!.depositTokenAddress, usdc);
    }

    // A and B get 10 "USDC" of the look-alike contract (same symbol, other address); C gets WETH instead of USDC.
    await sendLookalike(a.depositAddress, 10_000_000n);
    await sendLookalike(b.depositAddress, 7_000_000n);
    await stack.fund(c.depositAddress, 'WETH', 3_000_000_000_000_000n);

    // None of them funds a transfer: each ends FAILED at its deadline with nothing of its own token.
    for (const created of [a, b, c]) {
      await waitFor(`${created.routeId} FAILED`, async () => ((await row(created.routeId)).status === 'FAILED' ? true : undefined), 60_000);
    }

    // C: WETH is a token the bridge lists, and C has a refundAddress: refunded automatically, booked in the ledger.
    await waitFor('the WETH refund of C', async () => ((await balance(weth, REFUND_C)) === 3_000_000_000_000_000n ? true : undefined), 60_000);
    assert.equal(await balance(weth, c.depositAddress), 0n);
    // The ledger entry follows the receipt.
    const refunded = await refundEntry(c.routeId);
    assert.equal(refunded.token, weth);
    assert.equal(refunded.amount, '3000000000000000');
    // GET tells C's creator why it failed, that none of its USDC arrived, and what went back in which transaction.
    const cView = await view(c.routeId);
    assert.deepEqual([cView.status, cView.failureCode, cView.depositedAmount], ['FAILED', 'DEPOSIT_EXPIRED', '0']);
    assert.equal(cView.refund?.txHash, refunded.txHash);
    assert.equal(cView.refund?.amount, '3000000000000000');
    assert.equal(cView.refund?.symbol, null, "WETH is not the route's token: no symbol of the route's is claimed for it");
    await assertRefundOnChain(stack, cView.refund, { from: c.depositAddress, to: REFUND_C, token: weth });
    await waitFor('C no longer needs attention', async () => ((await row(c.routeId)).needsAttention ? undefined : true), 30_000);

    // A and B: an unknown contract is never refunded automatically (it could make the service pay gas for
    // nothing); it is held and listed for an operator with its token address.
    for (const [created, amount] of [
      [a, '10000000'],
      [b, '7000000'],
    ] as const) {
      // Listed at once, flagged for an operator with its batch (STRAY_LIST_BATCH_SECONDS, 10 s on the local stack):
      // never earlier, so the flag does not follow the route's end.
      let flaggedEarly = false;
      const held = await waitFor(
        `${created.routeId} lists the look-alike and flags it with its batch`,
        async () => {
          const readAt = Date.now();
          const r = await row(created.routeId);
          const listedFrom = r.heldFunds?.find((h) => h.place === 'deposit')?.listedFrom;
          if (listedFrom && r.needsAttention && readAt < Date.parse(listedFrom)) flaggedEarly = true;
          return r.needsAttention ? r : undefined;
        },
        40_000,
      );
      assert.equal(flaggedEarly, false, 'flagged before its batch');
      const listedFrom = held.heldFunds?.[0]?.listedFrom ?? '';
      assert.equal(Date.parse(listedFrom) % 10_000, 0, `a batch on the 10 s clock (${listedFrom})`);
      assert.deepEqual(held.heldFunds, [{ place: 'deposit', chainId: source, token: lookalike, address: created.depositAddress, amount, listedFrom }]);
      assert.match(held.lastError ?? '', new RegExp(`of token ${lookalike} is held at the deposit address: it is not this route's USDC \\(${usdc}\\)`));
      assert.match(held.lastError ?? '', new RegExp(`routectl refund ${created.routeId} --to <address>`));
      const view = await stack.api<{ needsAttention: boolean }>('GET', `/api/private-route/${created.routeId}`);
      assert.equal(view.body.data!.needsAttention, true);
    }
    assert.equal(await balance(lookalike, REFUND_A), 0n);
    assert.equal(await balance(lookalike, a.depositAddress), 10_000_000n);

    // An operator refunds B's look-alike tokens the way strays are refunded.
    const result = await stack.routectl('refund', b.routeId, '--to', OPERATOR_REFUND, '--reason', 'look-alike tokens back to the sender', '--now');
    assert.equal(result.code, 0, `${result.stdout}${result.stderr}`);
    assert.equal(await balance(lookalike, OPERATOR_REFUND), 7_000_000n);
    assert.equal(await balance(lookalike, b.depositAddress), 0n);
    const cleared = await row(b.routeId);
    assert.equal(cleared.needsAttention, false);
    assert.equal(cleared.heldFunds, null);
    const [operatorRefund] = await stack.service.db
      .select()
      .from(ledgerEntries)
      .where(and(eq(ledgerEntries.routeId, b.routeId), eq(ledgerEntries.kind, 'refunded')));
    assert.equal(operatorRefund!.token, lookalike);
    // The scanner does not list it again.
    await new Promise((r) => setTimeout(r, 3_000));
    assert.equal((await row(b.routeId)).needsAttention, false);
  });

  test('a dust poke of a route in flight is refunded after its own delay, while the route still waits in the pool', async () => {
    const usdc = stack.token('source', 'USDC');
    const refundTo = '0x00000000000000000000000000000000000d0057' as Address;
    const route = await create(refundTo, { minAnonymitySet: 5 });
    await stack.fund(route.depositAddress, 'USDC', BigInt(route.amount));
    await waitFor(`${route.routeId} in the pool`, async () => ((await row(route.routeId)).status === 'SHIELDED' ? true : undefined), 120_000);

    // Anyone can send 0.10 USDC to a deposit address seen on chain.
    await stack.fund(route.depositAddress, 'USDC', 100_000n);
    await waitFor('the stray refunded to the refundAddress', async () => ((await balance(usdc, refundTo)) === 100_000n ? true : undefined), 60_000);
    assert.equal(await balance(usdc, route.depositAddress), 0n);
    const during = await row(route.routeId);
    assert.equal(during.status, 'SHIELDED', 'refunded while the route waits for its set: its end is not what the refund follows');
    assert.equal(during.needsAttention, false);
    assert.equal(during.heldFunds?.some((h) => h.place === 'deposit') ?? false, false, "the route's holdings are the workflow's, not the scanner's");
    const entry = await refundEntry(route.routeId);
    assert.equal(entry.amount, '100000');
    // GET shows the refund while the route is still in flight: no failure, all of its deposit arrived.
    const shown = await view(route.routeId);
    assert.deepEqual([shown.failureCode, shown.depositedAmount], [null, route.amount]);
    assert.deepEqual(shown.refunds, [shown.refund]);
    assert.deepEqual([shown.refund?.amount, shown.refund?.symbol, shown.refund?.txHash], ['100000', 'USDC', entry.txHash]);
    await assertRefundOnChain(stack, shown.refund, { from: route.depositAddress, to: refundTo, token: usdc });
  });
});
