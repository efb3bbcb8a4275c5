import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { eq } from 'drizzle-orm';
import type { Address } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { depositWatchCursors, ledgerEntries } from '../../src/db/schema.ts';
import { ensureBackgroundWorkflows } from '../../src/temporal/backgroundWorkflows.ts';
import { PRIVACY_WATCHER_WORKFLOW_ID, depositWatcherWorkflowId } from '../../workflows/types.ts';
import { startTestStack, waitFor, type TestStack, type TransferView } from '../support/testStack.ts';

let stack: TestStack;
const chainId = (role: 'source' | 'hub' | 'destination') => stack.manifest.chains.find((c) => c.role === role)!.chainId;

before(
  async () => {
    // A short review timeout: with the privacy watcher stopped, a route asks the pool itself then.
    stack = await startTestStack({ env: { DEPOSIT_TIMEOUT_SECONDS: '25', PRIVACY_REVIEW_TIMEOUT_SECONDS: '12' } });
  },
  { timeout: 240_000 },
);
after(async () => stack?.close(), { timeout: 60_000 });

async function create(amount: string) {
  const { status, body } = await stack.api<{ routeId: string; depositAddress: Address; amount: string }>('POST', '/api/private-route', {
    sourceChainId: chainId('source'),
    destChainId: chainId('destination'),
    amount,
    userDestinationAddress: privateKeyToAccount(generatePrivateKey()).address,
  });
  assert.equal(status, 200, JSON.stringify(body));
  return body.data!;
}

const view = async (routeId: string) => (await stack.api<TransferView>('GET', `/api/private-route/${routeId}`)).body.data!;
const leftAwaiting = (routeId: string, timeoutMs: number) =>
  waitFor(
    `${routeId} leaves AWAITING_DEPOSIT`,
    async () => {
      const t = await view(routeId);
      return t.status === 'AWAITING_DEPOSIT' ? undefined : t;
    },
    timeoutMs,
  );

describe('the deposit and privacy watchers', { timeout: 300_000 }, () => {
  test('a burst of unfunded transfers holds no activity slot and never delays a funded one', async () => {
    const unfunded = [];
    for (let i = 0; i < 120; i++) unfunded.push(await create('3'));
    const funded = await create('25');
    await stack.fund(funded.depositAddress, 'USDC', BigInt(funded.amount));
    const fundedAt = Date.now();
    const moved = await leftAwaiting(funded.routeId, 15_000);
    assert.notEqual(moved.status, 'FAILED', moved.error ?? '');
    assert.ok(Date.now() - fundedAt < 15_000);

    // A waiting transfer is a durable timer, not a polling activity.
    const waiting = await stack.temporal.client.workflow.getHandle(unfunded[0]!.routeId).describe();
    assert.equal(waiting.raw.pendingActivities?.length ?? 0, 0, 'an unfunded transfer runs no activity while it waits');
    assert.equal((await view(unfunded[0]!.routeId)).status, 'AWAITING_DEPOSIT');

    // The watcher's cursor is durable and past the deposit's block.
    const [cursor] = await stack.service.db
      .select()
      .from(depositWatchCursors)
      .where(eq(depositWatchCursors.chainId, chainId('source')));
    assert.ok(cursor && cursor.nextBlock > 0, 'the cursor is stored in Postgres');
  });

  test('an underpayment waits; the top-up funds the route, and the bridge-in books what the address held', async () => {
    const created = await create('20');
    const half = BigInt(created.amount) / 2n;
    await stack.fund(created.depositAddress, 'USDC', half);
    await new Promise((r) => setTimeout(r, 3_000));
    assert.equal((await view(created.routeId)).status, 'AWAITING_DEPOSIT', 'half the deposit does not start the route');
    await stack.fund(created.depositAddress, 'USDC', BigInt(created.amount) - half + 5n);
    const moved = await leftAwaiting(created.routeId, 15_000);
    assert.notEqual(moved.status, 'FAILED', moved.error ?? '');
    // The bridge-in books what the deposit address held when the route took it: both deposits.
    const received = await waitFor(
      `${created.routeId}: the received entry`,
      async () => {
        const ledger = await stack.service.db.select().from(ledgerEntries).where(eq(ledgerEntries.routeId, created.routeId));
        return ledger.find((e) => e.kind === 'received');
      },
      15_000,
    );
    assert.equal(received.amount, (BigInt(created.amount) + 5n).toString());
  });

  test('with the watcher stopped, the deadline reads the chain itself: a funded route still starts', async () => {
    const cursor = async () =>
      (
        await stack.service.db
          .select()
          .from(depositWatchCursors)
          .where(eq(depositWatchCursors.chainId, chainId('source')))
      )[0]?.nextBlock;
    await waitFor('the watcher has read the chain once', async () => ((await cursor()) === undefined ? undefined : true), 30_000);
    const watcher = stack.temporal.client.workflow.getHandle(depositWatcherWorkflowId(chainId('source')));
    await watcher.terminate('test: the watcher is down');
    // Its running activity stops once a heartbeat tells it the workflow is gone: until the cursor no longer follows new blocks.
    await waitFor(
      'the watcher stops reading',
      async () => {
        await stack.fund(privateKeyToAccount(generatePrivateKey()).address, 'USDC', 1n);
        const head = Number(await stack.chainClient('source').getBlockNumber());
        await new Promise((r) => setTimeout(r, 1_500));
        return (await cursor())! <= head ? true : undefined;
      },
      30_000,
    );
    try {
      const created = await create('15');
      await stack.fund(created.depositAddress, 'USDC', BigInt(created.amount));
      await new Promise((r) => setTimeout(r, 3_000));
      assert.equal((await view(created.routeId)).status, 'AWAITING_DEPOSIT', 'nothing reports the deposit before the deadline');
      const moved = await leftAwaiting(created.routeId, 60_000);
      assert.notEqual(moved.status, 'FAILED', moved.error ?? '');
    } finally {
      await ensureBackgroundWorkflows(stack.temporal.client, stack.config);
    }
  });

  test('with the privacy watcher stopped, a shielded route asks the pool itself before giving up on the review, and completes', async () => {
    const watcher = stack.temporal.client.workflow.getHandle(PRIVACY_WATCHER_WORKFLOW_ID);
    await watcher.terminate('test: the privacy watcher is down');
    try {
      const created = await create('12');
      await stack.fund(created.depositAddress, 'USDC', BigInt(created.amount));
      const shielded = await waitFor(
        `${created.routeId} is shielded`,
        async () => {
          const t = await view(created.routeId);
          return ['SHIELDED', 'UNSHIELD_SENT', 'BRIDGING_OUT', 'COMPLETED', 'FAILED'].includes(t.status) ? t : undefined;
        },
        60_000,
      );
      assert.equal(shielded.status, 'SHIELDED', 'nothing tells it the review passed');
      const done = await waitFor(
        `${created.routeId} finishes`,
        async () => {
          const t = await view(created.routeId);
          return t.status === 'COMPLETED' || t.status === 'FAILED' ? t : undefined;
        },
        120_000,
      );
      assert.equal(done.status, 'COMPLETED', done.error ?? '');
      assert.ok(
        done.privacy && done.privacy.waitedSeconds >= 11,
        `it left the pool once it asked, at its review timeout (waited ${done.privacy?.waitedSeconds} s)`,
      );
    } finally {
      await ensureBackgroundWorkflows(stack.temporal.client, stack.config);
    }
  });
});
