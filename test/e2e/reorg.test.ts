import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { and, eq } from 'drizzle-orm';
import { type Address, type Hex, type PublicClient, createWalletClient, encodeFunctionData, erc20Abi, http, parseEventLogs, toHex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { DEFAULT_DEVNET_CHAIN_IDS, DEVNET_ACCOUNTS } from '../../devnet/chains.ts';
import { depositTransfers, ledgerEntries, poolNotes, transfers, txIntents } from '../../src/db/schema.ts';
import { entrypointAbi, poolAbi } from '../../src/providers/privacy-pools/abi.ts';
import { startTestStack, type TestStack, waitFor } from '../support/testStack.ts';

/**
 * Reorgs (anvil's own anvil_reorg, which drops the blocks' transactions) while a route's transaction is shallower than
 * its chain's CHAIN_CONFIRMATIONS: on the hub during the shield, with another depositor's deposit landing first in the
 * new chain (so the route's note gets another label than its first receipt said), and on the source during the funding.
 * Blocks are mined here by hand: anvil mines only when a transaction comes.
 */
const { source: SOURCE, hub: HUB } = DEFAULT_DEVNET_CHAIN_IDS;
const DEPTH = 4;

let stack: TestStack;

before(
  async () => {
    stack = await startTestStack({ env: { CHAIN_CONFIRMATIONS: JSON.stringify({ [SOURCE]: DEPTH, [HUB]: DEPTH }) } });
  },
  { timeout: 240_000 },
);
after(async () => stack?.close(), { timeout: 60_000 });

const rpc = (client: PublicClient, method: string, params: unknown[]) => client.request({ method: method as never, params: params as never });

/** Mines a block every `everyMs` on a chain until stopped. */
function miner(role: 'source' | 'hub', everyMs = 300) {
  const timer = setInterval(() => void rpc(stack.chainClient(role), 'anvil_mine', ['0x1']).catch(() => {}), everyMs);
  return { stop: () => clearInterval(timer) };
}

async function create(recipient: Address) {
  const { status, body } = await stack.api<{ routeId: string; amount: string; quotedOutputAmount: string; depositAddress: Address }>(
    'POST',
    '/api/private-route',
    {
      sourceChainId: SOURCE,
      destChainId: DEFAULT_DEVNET_CHAIN_IDS.destination,
      amount: '20',
      userDestinationAddress: recipient,
    },
  );
  assert.equal(status, 200, JSON.stringify(body));
  return body.data!;
}

const route = async (routeId: string) => (await stack.service.db.select().from(transfers).where(eq(transfers.routeId, routeId)))[0]!;
const completed = (routeId: string) =>
  waitFor(
    `${routeId} COMPLETED`,
    async () => {
      const row = await route(routeId);
      assert.notEqual(row.status, 'FAILED', row.error ?? '');
      return row.status === 'COMPLETED' ? row : undefined;
    },
    240_000,
    500,
  );
const paidOnce = async (routeId: string) =>
  (
    await stack.service.db
      .select()
      .from(ledgerEntries)
      .where(and(eq(ledgerEntries.routeId, routeId), eq(ledgerEntries.kind, 'paid')))
  ).length;

describe('reorgs shallower than the chain’s confirmations', { timeout: 600_000 }, () => {
  test('on the hub during the shield, another deposit first in the new chain: the note is the canonical one, the route completes, paid once', async () => {
    const recipient = privateKeyToAccount(generatePrivateKey()).address;
    const created = await create(recipient);
    const fundingMiner = miner('source');
    await stack.fund(created.depositAddress, 'USDC', BigInt(created.amount));
    const hub = stack.chainClient('hub');

    // The route's pool deposit mined: its first receipt, and the approve before it.
    const shield = await waitFor(
      'the shield mined',
      async () => {
        const [row] = await stack.service.db
          .select()
          .from(txIntents)
          .where(and(eq(txIntents.routeId, created.routeId), eq(txIntents.step, 'shield'), eq(txIntents.status, 'mined')));
        return row;
      },
      120_000,
      100,
    );
    fundingMiner.stop();
    const [approve] = await stack.service.db
      .select()
      .from(txIntents)
      .where(and(eq(txIntents.routeId, created.routeId), eq(txIntents.step, 'shield:approve')));
    const firstReceipt = await hub.getTransactionReceipt({ hash: shield.txHash as Hex });
    const [firstDeposit] = parseEventLogs({ abi: poolAbi, eventName: 'Deposited', logs: firstReceipt.logs });
    const approveBlock = (await hub.getTransactionReceipt({ hash: approve!.txHash as Hex })).blockNumber;
    const head = await hub.getBlockNumber();
    assert.ok(head < firstReceipt.blockNumber + BigInt(DEPTH), 'the reorg comes before the deposit is deep enough to count');
    assert.equal((await stack.service.db.select().from(poolNotes).where(eq(poolNotes.routeId, created.routeId))).length, 0, 'no note recorded yet');

    // The reorg takes the approve and the deposit; another depositor's deposit lands first in the new chain.
    await rpc(hub, 'anvil_reorg', [Number(head - approveBlock + 1n), []]);
    assert.equal(await hub.getTransactionReceipt({ hash: shield.txHash as Hex }).catch(() => null), null, 'the reorg dropped the deposit');
    const usdc = stack.token('hub', 'USDC');
    const faucet = createWalletClient({
      account: privateKeyToAccount(DEVNET_ACCOUNTS.faucet),
      transport: http(stack.manifest.chains.find((c) => c.role === 'hub')!.rpcUrl),
    });
    const entrypoint = stack.manifest.privacyPools.entrypoint as Address;
    for (const data of [
      encodeFunctionData({ abi: erc20Abi, functionName: 'approve', args: [entrypoint, 15_000_000n] }),
      encodeFunctionData({ abi: entrypointAbi, functionName: 'deposit', args: [usdc, 15_000_000n, BigInt(Date.now()) * 1_000_003n] }),
    ]) {
      const hash = await faucet.sendTransaction({ chain: null, to: data.startsWith('0x095ea7b3') ? usdc : entrypoint, data });
      assert.equal((await hub.waitForTransactionReceipt({ hash })).status, 'success');
    }

    // Blocks come again: the worker finds its transactions gone, broadcasts them again, and records the note once deep enough.
    const hubMiner = miner('hub');
    try {
      const done = await completed(created.routeId);
      const [note] = await stack.service.db.select().from(poolNotes).where(eq(poolNotes.routeId, created.routeId));
      const receipt = await hub.getTransactionReceipt({ hash: note!.txHash as Hex });
      const [canonical] = parseEventLogs({ abi: poolAbi, eventName: 'Deposited', logs: receipt.logs });
      assert.equal(note!.label, canonical!.args._label.toString(), 'the note is the one the canonical chain holds');
      assert.equal(note!.commitment, canonical!.args._commitment.toString());
      assert.notEqual(note!.label, firstDeposit!.args._label.toString(), 'the other deposit took the first label');
      assert.equal(note!.blockNumber, receipt.blockNumber.toString());
      assert.equal(await stack.balanceOf('destination', 'USDC', recipient), BigInt(done.quotedOutputAmount), 'paid exactly the quote');
      assert.equal(await paidOnce(created.routeId), 1);
    } finally {
      hubMiner.stop();
    }
  });

  test('on the source during the funding: the dropped transfer never counts; re-sent, it funds the route once', async () => {
    const recipient = privateKeyToAccount(generatePrivateKey()).address;
    const created = await create(recipient);
    const source = stack.chainClient('source');
    const sourceUrl = stack.manifest.chains.find((c) => c.role === 'source')!.rpcUrl;
    // A new user, funded by the faucet, signs its transfer itself so that it can send the same bytes again.
    const user = privateKeyToAccount(generatePrivateKey());
    await rpc(source, 'anvil_setBalance', [user.address, toHex(10n ** 17n)]);
    const faucet = createWalletClient({ account: privateKeyToAccount(DEVNET_ACCOUNTS.faucet), transport: http(sourceUrl) });
    const usdc = stack.token('source', 'USDC');
    const gift = await faucet.writeContract({
      chain: null,
      address: usdc,
      abi: erc20Abi,
      functionName: 'transfer',
      args: [user.address, BigInt(created.amount)],
    });
    await source.waitForTransactionReceipt({ hash: gift });
    const fees = await source.estimateFeesPerGas();
    const raw = await user.signTransaction({
      chainId: SOURCE,
      type: 'eip1559',
      nonce: 0,
      to: usdc,
      data: encodeFunctionData({ abi: erc20Abi, functionName: 'transfer', args: [created.depositAddress, BigInt(created.amount)] }),
      gas: 100_000n,
      maxFeePerGas: fees.maxFeePerGas,
      maxPriorityFeePerGas: fees.maxPriorityFeePerGas,
    });
    const hash = await source.sendRawTransaction({ serializedTransaction: raw });
    await source.waitForTransactionReceipt({ hash });
    await new Promise((r) => setTimeout(r, 1_500));
    assert.equal((await route(created.routeId)).status, 'AWAITING_DEPOSIT', 'a transfer shallower than the confirmations does not fund the route');
    assert.equal((await stack.service.db.select().from(depositTransfers).where(eq(depositTransfers.routeId, created.routeId))).length, 0);

    // The reorg drops the transfer; blocks come; nothing is funded.
    await rpc(source, 'anvil_reorg', [1, []]);
    const sourceMiner = miner('source');
    const hubMiner = miner('hub');
    try {
      await new Promise((r) => setTimeout(r, 3_000));
      assert.equal((await route(created.routeId)).status, 'AWAITING_DEPOSIT', 'the dropped transfer never counted');
      // The user's wallet sends it again: it funds the route once.
      await source.sendRawTransaction({ serializedTransaction: raw });
      const resent = await source.waitForTransactionReceipt({ hash });
      const done = await completed(created.routeId);
      const seen = await stack.service.db.select().from(depositTransfers).where(eq(depositTransfers.routeId, created.routeId));
      assert.deepEqual(
        seen.map((t) => [t.txHash, t.blockNumber]),
        [[hash, Number(resent.blockNumber)]],
        'only the canonical transfer is recorded',
      );
      assert.equal(await stack.balanceOf('destination', 'USDC', recipient), BigInt(done.quotedOutputAmount), 'paid exactly the quote');
      assert.equal(await paidOnce(created.routeId), 1);
    } finally {
      sourceMiner.stop();
      hubMiner.stop();
    }
  });
});
