import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { and, eq } from 'drizzle-orm';
import { keccak256, toHex, type Address, type LocalAccount } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { ensureGas } from '../activities/gas.ts';
import { createTxSender, NonceConsumedError, SenderUnderfundedError } from '../src/chain/txSender.ts';
import { transfers, txIntents } from '../src/db/schema.ts';
import { startTestStack, waitFor, type TestStack } from './support/testStack.ts';

/**
 * Shared senders (gas account, pool relayer, CCTP relayer) and route accounts whose one recorded transaction
 * the node rejects, or that never mines, must not block every later send; operators see each sender's queue and
 * can void what can never mine.
 */
let stack: TestStack;

before(
  async () => {
    stack = await startTestStack();
  },
  { timeout: 300_000 },
);
after(async () => stack?.close(), { timeout: 60_000 });

const chainId = () => stack.manifest.chains.find((c) => c.role === 'source')!.chainId;
const client = () => stack.chainClient('source');
const rpc = (method: string, params: unknown[] = []) => client().request({ method: method as never, params: params as never });
const db = () => stack.service.db;
const freshAddress = () => privateKeyToAccount(generatePrivateKey()).address;
const balance = (address: Address) => client().getBalance({ address });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A sender that replaces a stuck transaction after one second (the service waits a minute). */
const quickSender = () => createTxSender(db(), stack.service.activityDeps.chains, { replaceAfterMs: 1000, receiptTimeoutMs: 30_000, pollIntervalMs: 100 });

async function fundedAccount(): Promise<LocalAccount> {
  const account = privateKeyToAccount(generatePrivateKey());
  await rpc('anvil_setBalance', [account.address, toHex(10n ** 19n)]);
  return account;
}

/** A transaction signed and recorded as the sender does it, never broadcast (its worker died in between). */
async function recordUnsent(account: LocalAccount, routeId: string, step: string, tx: { nonce: number; to: Address; value: bigint; maxFeePerGas?: bigint }) {
  const fees = await client().estimateFeesPerGas();
  const maxFeePerGas = tx.maxFeePerGas ?? fees.maxFeePerGas;
  const rawTx = await account.signTransaction({
    chainId: chainId(),
    type: 'eip1559',
    nonce: tx.nonce,
    to: tx.to,
    value: tx.value,
    gas: 21_000n,
    maxFeePerGas,
    maxPriorityFeePerGas: maxFeePerGas < fees.maxPriorityFeePerGas ? maxFeePerGas : fees.maxPriorityFeePerGas,
  });
  const [row] = await db().insert(txIntents).values({ routeId, step, chainId: chainId(), fromAddress: account.address, nonce: tx.nonce, txHash: keccak256(rawTx), rawTx }).returning();
  return row!;
}

const intentById = async (id: number) => (await db().select().from(txIntents).where(eq(txIntents.id, id)))[0]!;

describe('a stuck transaction does not block its sender', { timeout: 240_000 }, () => {
  test('one the node rejects for its fee (the base fee rose) is re-signed with higher fees, and the next send goes through', async () => {
    const account = await fundedAccount();
    const to = freshAddress();
    const stale = await recordUnsent(account, 'rt_senders_fee', 'stale', { nonce: 0, to, value: 1n, maxFeePerGas: 1n });
    const sender = quickSender();

    await sender.send({ routeId: 'rt_senders_fee', step: 'next', chainId: chainId(), account, to, value: 2n });
    const settled = await sender.send({ routeId: 'rt_senders_fee', step: 'stale', chainId: chainId(), account, to });
    assert.equal(await balance(to), 3n);
    const row = await intentById(stale.id);
    assert.equal(row.attempt, 2, 'a new attempt at the same nonce');
    assert.deepEqual(row.earlierTxHashes, [stale.txHash]);
    assert.equal(row.status, 'mined');
    assert.equal(row.minedTxHash, settled.txHash);
    assert.notEqual(settled.txHash, stale.txHash);
  });

  test('one the sender cannot pay for stops its sends with a clear error until it is funded, then all go through', async () => {
    const account = await fundedAccount();
    const to = freshAddress();
    await recordUnsent(account, 'rt_senders_poor', 'first', { nonce: 0, to, value: 1n });
    await rpc('anvil_setBalance', [account.address, '0x0']);
    const sender = quickSender();
    await assert.rejects(sender.send({ routeId: 'rt_senders_poor', step: 'first', chainId: chainId(), account, to }), (error: Error) => {
      assert.ok(error instanceof SenderUnderfundedError, error.message);
      assert.match(error.message, /insufficient funds\. Fund it/);
      return true;
    });
    await rpc('anvil_setBalance', [account.address, toHex(10n ** 19n)]);
    await sender.send({ routeId: 'rt_senders_poor', step: 'second', chainId: chainId(), account, to, value: 2n });
    await sender.send({ routeId: 'rt_senders_poor', step: 'first', chainId: chainId(), account, to });
    assert.equal(await balance(to), 3n);
  });

  test('one that never mines (fees below a spiking base fee) is replaced at its nonce, and the send queued behind it follows', async () => {
    const account = await fundedAccount();
    const to = freshAddress();
    const sender = quickSender();
    await rpc('evm_setAutomine', [false]);
    let spiking = true;
    let spike: Promise<void> = Promise.resolve();
    try {
      const first = sender.send({ routeId: 'rt_senders_stuck', step: 'first', chainId: chainId(), account, to, value: 1n });
      first.catch(() => {});
      const recorded = await waitFor('the first send recorded', async () => {
        const [row] = await db().select().from(txIntents).where(and(eq(txIntents.routeId, 'rt_senders_stuck'), eq(txIntents.step, 'first')));
        return row;
      });
      // From now on every block's base fee is far above what the first transaction offers: it can never be included.
      const spikeFee = (await client().estimateFeesPerGas()).maxFeePerGas * 20n;
      spike = (async () => {
        while (spiking) {
          await rpc('anvil_setNextBlockBaseFeePerGas', [toHex(spikeFee)]);
          await rpc('evm_mine');
          await sleep(200);
        }
      })();
      await sleep(300);
      const second = sender.send({ routeId: 'rt_senders_stuck', step: 'second', chainId: chainId(), account, to, value: 2n });

      const [a] = await Promise.all([first, second]);
      assert.notEqual(a.txHash, recorded.txHash, 'mined as a replacement');
      const row = await intentById(recorded.id);
      assert.ok(row.attempt >= 2, `attempt ${row.attempt}`);
      assert.equal(row.earlierTxHashes[0], recorded.txHash);
      assert.equal(await client().getTransactionReceipt({ hash: recorded.txHash as `0x${string}` }).catch(() => null), null);
      assert.equal(await balance(to), 3n);
    } finally {
      spiking = false;
      await spike;
      await rpc('evm_setAutomine', [true]);
    }
  });
});

describe('a gas top-up whose nonce another transaction used', { timeout: 120_000 }, () => {
  test('another intent of ours: the top-up is voided and sent again', async () => {
    const funder = await fundedAccount();
    const target = freshAddress();
    const topUp = await recordUnsent(funder, 'rt_senders_gas', 'shield:gas:0', { nonce: 0, to: target, value: 5n });
    const other = await recordUnsent(funder, 'rt_senders_other', 'payment', { nonce: 0, to: freshAddress(), value: 1n });
    await client().sendRawTransaction({ serializedTransaction: other.rawTx as `0x${string}` });

    const deps = { ...stack.service.activityDeps, sender: quickSender() };
    await ensureGas(deps, 'rt_senders_gas', 'shield', chainId(), target, funder);
    assert.ok((await balance(target)) > 5n, 'topped up anew');
    const voided = await intentById(topUp.id);
    assert.equal(voided.status, 'voided');
    assert.match(voided.voidReason ?? '', new RegExp(`intent #${other.id} \\(payment\\)`));
    assert.equal((await intentById(other.id)).status, 'mined');
  });

  test("a stranger's: the top-up is voided and sent again, while any other step still stops for an operator", async () => {
    const funder = await fundedAccount();
    const target = freshAddress();
    const topUp = await recordUnsent(funder, 'rt_senders_gas2', 'shield:gas:0', { nonce: 0, to: target, value: 5n });
    // Someone else holding the key used nonce 0, outside the service.
    const fees = await client().estimateFeesPerGas();
    const foreign = await funder.signTransaction({ chainId: chainId(), type: 'eip1559', nonce: 0, to: funder.address, value: 0n, gas: 21_000n, ...fees });
    await client().sendRawTransaction({ serializedTransaction: foreign });

    const sender = quickSender();
    const step = await recordUnsent(funder, 'rt_senders_gas2', 'bridge-in', { nonce: 0, to: freshAddress(), value: 1n });
    await assert.rejects(sender.send({ routeId: 'rt_senders_gas2', step: 'bridge-in', chainId: chainId(), account: funder, to: target }), NonceConsumedError);
    assert.equal((await intentById(step.id)).status, 'pending', 'not a top-up: an operator looks');

    await ensureGas({ ...stack.service.activityDeps, sender }, 'rt_senders_gas2', 'shield', chainId(), target, funder);
    assert.ok((await balance(target)) > 5n);
    assert.equal((await intentById(topUp.id)).status, 'voided');
  });
});

describe('routectl senders and void', { timeout: 180_000 }, () => {
  test('the queue lists a pending send; void refuses while it may mine; --cancel replaces it and voids it', async () => {
    const { body } = await stack.api<{ routeId: string }>('POST', '/api/private-route', {
      sourceChainId: chainId(),
      destChainId: stack.manifest.chains.find((c) => c.role === 'destination')!.chainId,
      amount: '5',
      userDestinationAddress: freshAddress(),
    });
    const routeId = body.data!.routeId;
    const [route] = await db().select().from(transfers).where(eq(transfers.routeId, routeId));
    const { deposit } = stack.service.keyring.routeAccounts(route!.accountIndex);
    await rpc('anvil_setBalance', [deposit.address, toHex(10n ** 18n)]);
    const payee = freshAddress();
    const stuck = await recordUnsent(deposit, routeId, 'probe', { nonce: 0, to: payee, value: 7n });

    const listed = await stack.routectl('senders', '--json');
    assert.equal(listed.code, 0, listed.stderr);
    const row = (JSON.parse(listed.stdout) as Array<Record<string, unknown>>).find((r) => r.id === stuck.id);
    assert.deepEqual(
      row && { routeId: row.routeId, step: row.step, nonce: row.nonce, attempts: row.attempts, head: row.head, atNode: row.atNode, senderRole: row.senderRole },
      { routeId, step: 'probe', nonce: 0, attempts: 1, head: true, atNode: false, senderRole: 'deposit' },
    );
    assert.match((await stack.routectl('senders')).stdout, new RegExp(`nonce 0  #${stuck.id}  ${routeId}  probe  attempt 1`));

    const refused = await stack.routectl('void', String(stuck.id), '--reason', 'test');
    assert.equal(refused.code, 4, refused.stdout);
    assert.match(refused.stderr, /may still mine/);
    assert.equal((await intentById(stuck.id)).status, 'pending');

    const cancelled = await stack.routectl('void', String(stuck.id), '--cancel', '--reason', 'sent by mistake');
    assert.equal(cancelled.code, 0, cancelled.stderr);
    assert.match(cancelled.stdout, new RegExp(`intent #${stuck.id} \\(${routeId} probe\\): voided after its replacement`));
    const voided = await intentById(stuck.id);
    assert.equal(voided.status, 'voided');
    assert.equal(await client().getTransactionCount({ address: deposit.address }), 1, 'the replacement used the nonce');
    assert.equal(await balance(payee), 0n, 'the voided payment never happened');
    const after = JSON.parse((await stack.routectl('senders', '--json')).stdout) as Array<{ id: number }>;
    assert.ok(!after.some((r) => r.id === stuck.id));
  });
});
