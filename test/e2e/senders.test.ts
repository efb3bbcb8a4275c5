import assert from 'node:assert/strict';
import { DEVNET_BASE_FEE_WEI } from '../../devnet/chains.ts';
import { after, before, describe, test } from 'node:test';
import { and, eq } from 'drizzle-orm';
import {
  createWalletClient,
  erc20Abi,
  http,
  keccak256,
  toHex,
  TransactionReceiptNotFoundError,
  type Address,
  type Hex,
  type LocalAccount,
  type PublicClient,
} from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { bridgeActivities } from '../../activities/bridge.ts';
import { ensureGas } from '../../activities/gas.ts';
import type { ChainClients } from '../../src/chain/clients.ts';
import {
  createTxSender,
  IntentConflictError,
  IntentVoidedError,
  NonceConsumedError,
  SenderUnderfundedError,
  VoidRefusedError,
} from '../../src/chain/txSender.ts';
import { ledgerEntries, operatorActions, transfers, txIntents } from '../../src/db/schema.ts';
import { startTestStack, waitFor, type TestStack } from '../support/testStack.ts';

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

const quick = { replaceAfterMs: 1000, receiptTimeoutMs: 30_000, pollIntervalMs: 100 };
/** A sender that replaces a stuck transaction after one second (the service waits a minute). */
const quickSender = () => createTxSender(db(), stack.service.activityDeps.chains, quick);

type Args<M extends 'getTransactionCount' | 'getTransactionReceipt'> = Parameters<PublicClient[M]>[0];
/**
 * The stack's chain clients with a hook before the RPC calls that decide what the sender does: to play another
 * process acting in between, or a node that fails or lags. A hook calls `real()` for the node's own answer.
 */
function hookedChains(hooks: {
  count?: (args: Args<'getTransactionCount'>, real: () => Promise<number>) => Promise<number>;
  receipt?: (
    args: Args<'getTransactionReceipt'>,
    real: () => ReturnType<PublicClient['getTransactionReceipt']>,
  ) => ReturnType<PublicClient['getTransactionReceipt']>;
}): ChainClients {
  const base = stack.service.activityDeps.chains;
  return {
    chain: (id) => base.chain(id),
    publicClient(id) {
      const real = base.publicClient(id);
      return new Proxy(real, {
        get(target, prop, receiver) {
          if (prop === 'getTransactionCount' && hooks.count)
            return (args: Args<'getTransactionCount'>) => hooks.count!(args, () => target.getTransactionCount(args));
          if (prop === 'getTransactionReceipt' && hooks.receipt)
            return (args: Args<'getTransactionReceipt'>) => hooks.receipt!(args, () => target.getTransactionReceipt(args));
          return Reflect.get(target, prop, receiver);
        },
      });
    },
  };
}

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
  const [row] = await db()
    .insert(txIntents)
    .values({ routeId, step, chainId: chainId(), fromAddress: account.address, nonce: tx.nonce, txHash: keccak256(rawTx), rawTx })
    .returning();
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
        const [row] = await db()
          .select()
          .from(txIntents)
          .where(and(eq(txIntents.routeId, 'rt_senders_stuck'), eq(txIntents.step, 'first')));
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
      assert.equal(
        await client()
          .getTransactionReceipt({ hash: recorded.txHash as `0x${string}` })
          .catch(() => null),
        null,
      );
      assert.equal(await balance(to), 3n);
    } finally {
      spiking = false;
      await spike;
      await rpc('evm_setAutomine', [true]);
    }
  });
});

describe("several accounts taking turns (the relayer's sending accounts)", { timeout: 120_000 }, () => {
  test('a new send goes to the account with the shortest queue: one stuck at its head holds up only its own', async () => {
    const [a, b, c] = [await fundedAccount(), await fundedAccount(), await fundedAccount()];
    const to = freshAddress();
    // a's head can never mine: a transaction recorded past a gap in its nonces (the node holds it, unmineable).
    const stuck = await recordUnsent(a, 'rt_senders_turns', 'stuck', { nonce: 2, to, value: 1n });
    const sender = quickSender();
    const fromOf = async (step: string) => {
      const [row] = await db()
        .select()
        .from(txIntents)
        .where(and(eq(txIntents.routeId, 'rt_senders_turns'), eq(txIntents.step, step)));
      return row?.fromAddress.toLowerCase();
    };
    const sent: Hex[] = [];
    for (const step of ['w1', 'w2', 'w3', 'w4']) {
      sent.push((await sender.send({ routeId: 'rt_senders_turns', step, chainId: chainId(), account: [a, b, c], to, value: 10n })).txHash);
    }
    const froms = await Promise.all(['w1', 'w2', 'w3', 'w4'].map(fromOf));
    const [bb, cc] = [b.address.toLowerCase(), c.address.toLowerCase()];
    assert.deepEqual(froms, [bb, cc, bb, cc], 'b and c in turn, never the stuck a');
    assert.equal(await balance(to), 40n);
    assert.equal((await intentById(stuck.id)).status, 'pending', "a's stuck transaction is still its own");
    // A recorded intent keeps the account that signed it, whatever order a retry names them in.
    const again = await sender.send({ routeId: 'rt_senders_turns', step: 'w1', chainId: chainId(), account: [c, a, b], to, value: 10n });
    assert.equal(again.txHash, sent[0]);
    assert.equal(await balance(to), 40n, 'paid once');
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
    // The fee spike above left the chain's base fee high, and a quote charges the route's gas at it: back to the
    // devnet's own before creating a route.
    await rpc('anvil_setNextBlockBaseFeePerGas', [toHex(DEVNET_BASE_FEE_WEI)]);
    await rpc('evm_mine');
    const { status, body } = await stack.api<{ routeId: string }>('POST', '/api/private-route', {
      sourceChainId: chainId(),
      destChainId: stack.manifest.chains.find((c) => c.role === 'destination')!.chainId,
      amount: '5',
      userDestinationAddress: freshAddress(),
    });
    assert.equal(status, 200, JSON.stringify(body));
    const routeId = body.data!.routeId;
    const [route] = await db().select().from(transfers).where(eq(transfers.routeId, routeId));
    const { deposit } = stack.routeKeys(route!.accountIndex);
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
    // Both voids are in the audit log with the intent, the reason and how they ended (checked by the activities).
    const audit = await db().select().from(operatorActions).where(eq(operatorActions.routeId, routeId)).orderBy(operatorActions.id);
    assert.deepEqual(
      audit.map((a) => [a.action, a.params.intentId, a.params.cancel, a.reason, a.outcome]),
      [
        ['void', stuck.id, false, 'test', 'refused'],
        ['void', stuck.id, true, 'sent by mistake', 'done'],
      ],
    );
    assert.match(audit[0]!.detail ?? '', /may still mine/);
  });
});

describe('a voided intent', { timeout: 120_000 }, () => {
  test('is never broadcast, even by a send that read it before the void (its route ended meanwhile)', async () => {
    const account = await fundedAccount();
    const payee = freshAddress();
    const routeId = 'rt_senders_void_race';
    const stale = await recordUnsent(account, routeId, 'bridge-in', { nonce: 0, to: payee, value: 7n });
    let raced = false;
    // The route ends (fail voids its unsent sends) right after this send has read its intent as pending.
    const sender = createTxSender(
      db(),
      hookedChains({
        async count(_args, real) {
          if (!raced) {
            raced = true;
            assert.equal((await sender.voidUnsent(routeId, 'test: the route ended')).length, 1);
          }
          return real();
        },
      }),
      quick,
    );
    await assert.rejects(sender.send({ routeId, step: 'bridge-in', chainId: chainId(), account, to: payee }), IntentVoidedError);
    assert.equal((await intentById(stale.id)).status, 'voided');
    assert.equal(await client().getTransactionCount({ address: account.address, blockTag: 'pending' }), 0, 'never broadcast');
    assert.equal(await balance(payee), 0n);
  });

  test("that mined after all is the step's transaction (recorded as mined), never signed a second time", async () => {
    const account = await fundedAccount();
    const payee = freshAddress();
    const routeId = 'rt_senders_void_mined';
    const row = await recordUnsent(account, routeId, 'payout', { nonce: 0, to: payee, value: 7n });
    // Voided as "never reached a node" by an RPC node that had not seen it, while another node had it: it mined.
    await db().update(txIntents).set({ status: 'voided', voidReason: 'test: looked unsent' }).where(eq(txIntents.id, row.id));
    await client().sendRawTransaction({ serializedTransaction: row.rawTx as Hex });
    await client().waitForTransactionReceipt({ hash: row.txHash as Hex });

    const sender = quickSender();
    assert.deepEqual(await sender.intent(routeId, 'payout'), { txHash: row.txHash });
    const sent = await sender.send({ routeId, step: 'payout', chainId: chainId(), account, to: payee, value: 7n });
    assert.equal(sent.txHash, row.txHash);
    assert.equal(await balance(payee), 7n, 'paid once');
    const after = await intentById(row.id);
    assert.deepEqual([after.status, after.minedTxHash], ['mined', row.txHash]);
    assert.equal(
      (
        await db()
          .select()
          .from(txIntents)
          .where(and(eq(txIntents.routeId, routeId), eq(txIntents.step, 'payout')))
      ).length,
      1,
    );
  });
});

describe('a receipt the RPC does not give', { timeout: 120_000 }, () => {
  test('is never read as "not mined": void fails on an RPC error and looks again past a lagging node', async () => {
    const account = await fundedAccount();
    const payee = freshAddress();
    // Broadcast and mined; its worker died before it looked, so the record still says pending.
    const row = await recordUnsent(account, 'rt_senders_flaky', 'payout', { nonce: 0, to: payee, value: 7n });
    await client().sendRawTransaction({ serializedTransaction: row.rawTx as Hex });
    await client().waitForTransactionReceipt({ hash: row.txHash as Hex });

    const failing = createTxSender(
      db(),
      hookedChains({
        async receipt() {
          throw new Error('HTTP request failed. Status: 502');
        },
      }),
      quick,
    );
    await assert.rejects(failing.void(row.id, 'test'), /Status: 502/);
    assert.equal((await intentById(row.id)).status, 'pending', 'not voided on an RPC error');

    let lagging = 1;
    const lagged = createTxSender(
      db(),
      hookedChains({
        async receipt(args, real) {
          if (lagging-- > 0) throw new TransactionReceiptNotFoundError({ hash: args.hash });
          return real();
        },
      }),
      quick,
    );
    await assert.rejects(lagged.void(row.id, 'test'), (error: Error) => error instanceof VoidRefusedError && /mined \(successfully/.test(error.message));
    const after = await intentById(row.id);
    assert.deepEqual([after.status, after.minedTxHash], ['mined', row.txHash]);
  });

  test('recording it mined never revives an intent voided meanwhile whose step signed anew', async () => {
    const account = await fundedAccount();
    const payee = freshAddress();
    const routeId = 'rt_senders_revive';
    const first = await recordUnsent(account, routeId, 'payout', { nonce: 0, to: payee, value: 7n });
    await client().sendRawTransaction({ serializedTransaction: first.rawTx as Hex });
    await client().waitForTransactionReceipt({ hash: first.txHash as Hex });
    let next: typeof first | undefined;
    // While the operator's void looks, another process voids the intent and the step signs anew at the next nonce.
    const sender = createTxSender(
      db(),
      hookedChains({
        async count(_args, real) {
          if (!next) {
            await db().update(txIntents).set({ status: 'voided', voidReason: 'test: voided meanwhile' }).where(eq(txIntents.id, first.id));
            next = await recordUnsent(account, routeId, 'payout', { nonce: 1, to: payee, value: 7n });
          }
          return real();
        },
      }),
      quick,
    );
    await assert.rejects(sender.void(first.id, 'test'), VoidRefusedError);
    const after = await intentById(first.id);
    assert.deepEqual([after.status, after.minedTxHash], ['voided', first.txHash], 'the truth recorded, the live step left alone');
    assert.equal((await intentById(next!.id)).status, 'pending');
    // The step now holds a mined payment and a pending one that could pay again: it stops for an operator.
    await assert.rejects(quickSender().send({ routeId, step: 'payout', chainId: chainId(), account, to: payee }), IntentConflictError);
    assert.equal(await balance(payee), 7n, 'paid once');
  });
});

describe('booking a bridge fill', { timeout: 60_000 }, () => {
  test("confirms a fill only when the route's booked entry is that fill", async () => {
    const token = stack.token('source', 'USDC');
    const faucet = createWalletClient({
      account: privateKeyToAccount(stack.manifest.faucetPrivateKey),
      transport: http(stack.manifest.chains.find((c) => c.role === 'source')!.rpcUrl),
    });
    const recipient = freshAddress();
    const pay = async () => {
      const hash = await faucet.writeContract({ chain: null, address: token, abi: erc20Abi, functionName: 'transfer', args: [recipient, 5n] });
      await client().waitForTransactionReceipt({ hash });
      return hash;
    };
    const [one, two] = [await pay(), await pay()];
    const routeId = `rt_fill_${Date.now()}`;
    const check = { routeId, leg: 'in' as const, chainId: chainId(), token, recipient, amount: '5' };
    const bridge = bridgeActivities(stack.service.activityDeps);
    assert.deepEqual(await bridge.confirmDelivery({ ...check, txHashes: [one] }), { txHash: one, amount: '5' });
    assert.deepEqual(await bridge.confirmDelivery({ ...check, txHashes: [one] }), { txHash: one, amount: '5' }, 'a retry finds its own booking');
    await assert.rejects(bridge.confirmDelivery({ ...check, txHashes: [two] }), /the route already booked another fill as arrived_on_hub/);
    const booked = await db().select().from(ledgerEntries).where(eq(ledgerEntries.routeId, routeId));
    assert.deepEqual(
      booked.map((e) => e.txHash),
      [one],
    );
  });
});
