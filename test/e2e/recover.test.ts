import assert from 'node:assert/strict';
import { after, afterEach, before, describe, test } from 'node:test';
import { ApplicationFailure } from '@temporalio/common';
import { NativeConnection, Worker } from '@temporalio/worker';
import { and, eq } from 'drizzle-orm';
import { encodeFunctionData, erc20Abi, getAddress, keccak256, toHex, type Address, type Hex, type LocalAccount } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { fundsActivities } from '../../activities/funds.ts';
import { ledgerEntries, operatorActions, transfers, txIntents } from '../../src/db/schema.ts';
import { createLogger } from '../../src/logger.ts';
import { requestAction } from '../../src/operators/audit.ts';
import { activityKeepalive } from '../../src/temporal/activityKeepalive.ts';
import { payloadCodecOf, temporalDataConverter } from '../../src/temporal/codec.ts';
import { temporalConnectionOptions } from '../../src/temporal/connection.ts';
import { bundleWorkflows } from '../../src/temporal/worker.ts';
import { workflowSpanSinks } from '../../src/observability/tracing.ts';
import { depositObservedSignal, failUpdate, stateQuery } from '../../workflows/definitions.ts';
import type { RoutePlan } from '../../src/domain/plan.ts';
import { startTestStack, waitFor, type TestStack, type TransferView } from '../support/testStack.ts';

/**
 * What an operator can do with a route that ended holding money: `fail` no longer leaves stale sends behind,
 * refunds are bounded and refuse dust, `routectl recover` moves what a FAILED route holds on the hub, and a
 * `fail` accepted while the deposit arrives is acted on.
 */
let stack: TestStack;
/** Fresh addresses operators may send a route's funds to here (OPERATOR_ALLOWED_DESTINATIONS); each test takes its own. */
const allowedDestinations = Array.from({ length: 10 }, () => privateKeyToAccount(generatePrivateKey()).address);
const allowedAddress = () => allowedDestinations.pop()!;

before(
  async () => {
    process.env.ROUTECTL_OPERATOR ??= 'oncall@ops';
    stack = await startTestStack({
      env: {
        STEP_MAX_ATTEMPTS: '2',
        STEP_TIME_BUDGET_SECONDS: '60',
        DEPOSIT_TIMEOUT_SECONDS: '30',
        STRAY_SCAN_INTERVAL_SECONDS: '2',
        REFUND_MIN_AMOUNT: '{"USDC":"1"}',
        OPERATOR_ALLOWED_DESTINATIONS: allowedDestinations.join(','),
      },
    });
  },
  { timeout: 300_000 },
);
after(async () => stack?.close(), { timeout: 60_000 });
afterEach(() => stack.relay.faults.clear());

type Transfer = TransferView;

const chain = (role: 'source' | 'hub' | 'destination') => stack.manifest.chains.find((c) => c.role === role)!;
const freshAddress = () => privateKeyToAccount(generatePrivateKey()).address;
const routectl = (...args: string[]) => stack.routectl(...args);
const db = () => stack.service.db;

async function create(amount: string): Promise<Transfer> {
  const { status, body } = await stack.api<Transfer>('POST', '/api/private-route', {
    sourceChainId: chain('source').chainId,
    destChainId: chain('destination').chainId,
    amount,
    userDestinationAddress: freshAddress(),
  });
  assert.equal(status, 200, JSON.stringify(body));
  return body.data!;
}

const get = async (routeId: string) => (await stack.api<Transfer>('GET', `/api/private-route/${routeId}`)).body.data!;
const until = (routeId: string, what: string, ok: (t: Transfer) => boolean, timeoutMs = 90_000) =>
  waitFor(
    `${routeId}: ${what}`,
    async () => {
      const t = await get(routeId);
      return ok(t) ? t : undefined;
    },
    timeoutMs,
  );
const projection = async (routeId: string) => (await db().select().from(transfers).where(eq(transfers.routeId, routeId)))[0]!;

describe('a fail that lands with the deposit', { timeout: 120_000 }, () => {
  test('is acted on at once: the route ends FAILED and never starts its bridge-in', async () => {
    const statuses: string[] = [];
    const bridged: string[] = [];
    let depositStarted!: () => void;
    const started = new Promise<void>((resolve) => {
      depositStarted = resolve;
    });
    let releaseDeposit!: (outcome: { funded: boolean; balance: string }) => void;
    const deposited = new Promise<{ funded: boolean; balance: string }>((resolve) => {
      releaseDeposit = resolve;
    });
    const workers = await standInWorkers('fail-race', {
      projectStatus: async (p: { status: string; error?: string }) => {
        statuses.push(p.error ? `${p.status}: ${p.error}` : p.status);
      },
      projectAttention: async () => {},
      awaitDeposit: async () => {
        depositStarted();
        return deposited;
      },
      bridgeIn: async () => {
        bridged.push('bridgeIn');
        throw ApplicationFailure.nonRetryable('stand-in bridge', 'BridgeFailed');
      },
      locateFunds: async () => [],
      voidUnsentIntents: async () => 0,
      ragequit: async () => null,
    });
    try {
      await workers.startWorkflows();
      const handle = await stack.temporal.client.workflow.start('transferWorkflow', {
        taskQueue: workers.taskQueue,
        workflowId: `rt_race_${Date.now()}`,
        args: [racePlan()],
      });
      await started;
      await workers.stopWorkflows();

      const failing = handle.executeUpdate(failUpdate, { args: [{ reason: 'sender asked to stop' }] });
      failing.catch(() => {});
      await new Promise((r) => setTimeout(r, 1000));
      releaseDeposit({ funded: true, balance: '1000000' });
      await new Promise((r) => setTimeout(r, 1000));
      await workers.startWorkflows();

      assert.equal(await failing, 'failing');
      assert.equal(await handle.result(), 'FAILED');
      assert.deepEqual(bridged, [], 'an accepted fail must not be followed by a bridge-in');
      assert.equal(statuses.at(-1), 'FAILED: failed by operator: sender asked to stop');
      assert.ok(!statuses.includes('BRIDGING_IN'), statuses.join(' → '));
    } finally {
      await workers.close();
    }
  });

  test('version 2: a deposit report and a fail in one activation end the route FAILED without a bridge-in', async () => {
    const statuses: string[] = [];
    const bridged: string[] = [];
    const workers = await standInWorkers('fail-race-v2', {
      projectStatus: async (p: { status: string; error?: string }) => {
        statuses.push(p.error ? `${p.status}: ${p.error}` : p.status);
      },
      projectAttention: async () => {},
      depositBalance: async () => ({ balance: '0' }),
      bridgeIn: async () => {
        bridged.push('bridgeIn');
        throw ApplicationFailure.nonRetryable('stand-in bridge', 'BridgeFailed');
      },
      locateFunds: async () => [],
      voidUnsentIntents: async () => 0,
      ragequit: async () => null,
    });
    try {
      await workers.startWorkflows();
      const handle = await stack.temporal.client.workflow.start('transferWorkflowV2', {
        taskQueue: workers.taskQueue,
        workflowId: `rt_race_v2_${Date.now()}`,
        args: [racePlan()],
      });
      await waitFor('the workflow waits for its deposit', async () => ((await handle.query(stateQuery)).step === 'await-deposit' ? true : undefined), 30_000);
      await workers.stopWorkflows();

      const failing = handle.executeUpdate(failUpdate, { args: [{ reason: 'sender asked to stop' }] });
      failing.catch(() => {});
      await new Promise((r) => setTimeout(r, 1000));
      await handle.signal(depositObservedSignal, { balance: '1000000', blockNumber: 7 });
      await workers.startWorkflows();

      assert.equal(await failing, 'failing');
      assert.equal(await handle.result(), 'FAILED');
      assert.deepEqual(bridged, [], 'an accepted fail must not be followed by a bridge-in');
      assert.deepEqual(statuses, ['FAILED: failed by operator: sender asked to stop']);
    } finally {
      await workers.close();
    }
  });
});

/**
 * Our own workers on a task queue of their own, with stand-in activities: the workflow worker can be stopped
 * while several things happen, so that they reach the workflow in one activation when it starts again.
 */
async function standInWorkers(name: string, activities: Record<string, (...args: never[]) => unknown>) {
  const connection = await NativeConnection.connect(temporalConnectionOptions(stack.config));
  const dataConverter = temporalDataConverter(payloadCodecOf(stack.config));
  const taskQueue = `${name}-${Date.now()}`;
  const namespace = stack.temporal.namespace;
  const activityWorker = await Worker.create({ connection, namespace, taskQueue, dataConverter, activities, interceptors: { activity: [activityKeepalive] } });
  const runningActivities = activityWorker.run();
  const workflowBundle = await bundleWorkflows({ logger: createLogger({ level: 'warn' }) });
  let workflows: { worker: Worker; running: Promise<void> } | null = null;
  const stopWorkflows = async () => {
    if (!workflows) return;
    workflows.worker.shutdown();
    await workflows.running;
    workflows = null;
  };
  return {
    taskQueue,
    async startWorkflows() {
      const worker = await Worker.create({
        connection,
        namespace,
        taskQueue,
        dataConverter,
        workflowBundle,
        maxCachedWorkflows: 0,
        sinks: workflowSpanSinks(undefined),
      });
      workflows = { worker, running: worker.run() };
    },
    stopWorkflows,
    async close() {
      await stopWorkflows();
      activityWorker.shutdown();
      await runningActivities;
      await connection.close();
    },
  };
}

describe('ending a route that holds money', { timeout: 900_000 }, () => {
  test('fail voids a bridge-in that was signed but never broadcast; the refund returns the whole deposit; dust is refused', async () => {
    const created = await parkAtBridgeIn('3');
    const route = await projection(created.routeId);
    const { deposit } = stack.routeKeys(route.accountIndex);
    const bridge = freshAddress();
    // A worker killed between recording the bridge-in's send and broadcasting it.
    const transfer = encodeFunctionData({ abi: erc20Abi, functionName: 'transfer', args: [bridge, BigInt(created.amount)] });
    const stale = await recordUnsent(deposit, created.routeId, 'bridge-in:deposit', chain('source').chainId, {
      to: stack.token('source', 'USDC'),
      data: transfer,
      gas: 100_000n,
    });

    const failed = await routectl('fail', created.routeId, '--reason', 'bridge down for the day');
    assert.equal(failed.code, 0, failed.stderr);
    const [voided] = await db().select().from(txIntents).where(eq(txIntents.id, stale.id));
    assert.equal(voided?.status, 'voided');
    assert.match(voided?.voidReason ?? '', /before this transaction reached a node/);

    const to = allowedAddress();
    const refunded = await routectl('refund', created.routeId, '--to', to, '--reason', 'test', '--now');
    assert.equal(refunded.code, 0, refunded.stderr);
    assert.equal(await stack.balanceOf('source', 'USDC', to), BigInt(created.amount));
    assert.equal(await stack.balanceOf('source', 'USDC', bridge), 0n, 'the stale bridge-in never went out');

    // A late deposit below REFUND_MIN_AMOUNT (1 USDC in this stack) is listed but not refunded: its gas would cost more.
    await stack.fund(created.depositAddress, 'USDC', 400_000n);
    await until(created.routeId, 'the late deposit listed', (t) => t.needsAttention, 30_000);
    const dust = await routectl('refund', created.routeId, '--to', to, '--reason', 'test', '--now');
    assert.equal(dust.code, 4, dust.stdout);
    assert.match(dust.stderr, /holds 0\.4 USDC, below REFUND_MIN_AMOUNT \(1 USDC\)/);
    assert.equal(await stack.balanceOf('source', 'USDC', created.depositAddress), 400_000n);
  });

  test('a refund that keeps failing stops after its attempts and flags the route; once the cause is fixed it refunds', async () => {
    const created = await parkAtBridgeIn('2');
    assert.equal((await routectl('fail', created.routeId, '--reason', 'refund it')).code, 0);
    // The gas account is empty: the deposit account cannot get the gas its refund needs.
    const source = stack.chainClient('source');
    const gas = stack.service.activityDeps.gasAccount.address;
    const gasBalance = await source.getBalance({ address: gas });
    await source.request({ method: 'anvil_setBalance' as never, params: [gas, '0x0'] as never });
    const to = allowedAddress();
    try {
      const started = Date.now();
      const refused = await routectl('refund', created.routeId, '--to', to, '--reason', 'test', '--now');
      assert.equal(refused.code, 1, refused.stdout);
      assert.match(refused.stderr, /insufficient funds|exceeds the balance/i);
      assert.ok(Date.now() - started < 120_000, 'bounded: a few attempts, not forever');
      const flagged = await projection(created.routeId);
      assert.equal(flagged.needsAttention, true);
      assert.match(flagged.lastError ?? '', /^refund to 0x[0-9a-fA-F]{40} failed: .*run routectl refund again$/s);
      assert.equal(await stack.balanceOf('source', 'USDC', to), 0n);
    } finally {
      await source.request({ method: 'anvil_setBalance' as never, params: [gas, toHex(gasBalance)] as never });
    }
    // While it is flagged, the stray scanner (every 2 s here) refunds nothing of it, even to a refundAddress.
    const automatic = freshAddress();
    await db().update(transfers).set({ refundAddress: automatic }).where(eq(transfers.routeId, created.routeId));
    await new Promise((r) => setTimeout(r, 6_000));
    assert.equal(await stack.balanceOf('source', 'USDC', automatic), 0n, 'no automatic refund of a flagged route');
    assert.match((await projection(created.routeId)).lastError ?? '', /^refund to 0x[0-9a-fA-F]{40} failed: /);
    const refunded = await routectl('refund', created.routeId, '--to', to, '--reason', 'test', '--now');
    assert.equal(refunded.code, 0, refunded.stderr);
    assert.equal(await stack.balanceOf('source', 'USDC', to), BigInt(created.amount));
    assert.equal((await projection(created.routeId)).needsAttention, false);
  });

  test('routectl recover sends what a failed route holds at its hub account to an address, once', async () => {
    const created = await create('4');
    // The hub RPC rejects the pool deposit: the route parks RECEIVED_ON_HUB with its funds at the hub account.
    assert.equal((await routectl('devnet', 'fault', 'set', 'shield', '--count', '5')).code, 0);
    await stack.fund(created.depositAddress, 'USDC', BigInt(created.amount));
    assert.equal((await until(created.routeId, 'parked', (t) => t.needsAttention)).status, 'RECEIVED_ON_HUB');
    await routectl('devnet', 'fault', 'clear');
    assert.equal((await routectl('fail', created.routeId, '--reason', 'give it back')).code, 0);
    const held = (await projection(created.routeId)).heldFunds?.find((h) => h.place === 'hub');
    assert.ok(held, 'the hub account holds the funds');

    const notFailed = await routectl('recover', (await create('2')).routeId, '--side', 'deposit', '--to', freshAddress(), '--reason', 'test');
    assert.equal(notFailed.code, 4);
    assert.match(notFailed.stderr, /recover is for FAILED routes/);
    const noSide = await routectl('recover', created.routeId, '--to', allowedAddress(), '--reason', 'test');
    assert.equal(noSide.code, 2);
    assert.match(noSide.stderr, /recover needs --side deposit .* or --side exit/);
    // The deposit side (the hub account) never goes to the recipient: that would link both ends of the route.
    const recipient = (await projection(created.routeId)).userDestinationAddress;
    const crossed = await routectl('recover', created.routeId, '--side', 'deposit', '--to', recipient, '--reason', 'test');
    assert.equal(crossed.code, 4, crossed.stderr);
    assert.match(
      crossed.stderr,
      /the deposit side of route .* goes only to its refundAddress \(none\) or an address in OPERATOR_ALLOWED_DESTINATIONS.*--override/,
    );
    assert.equal(await stack.balanceOf('hub', 'USDC', created.hubAccount), BigInt(held.amount), 'nothing moved');

    const to = allowedAddress();
    const first = await routectl('recover', created.routeId, '--side', 'deposit', '--to', to, '--reason', 'test');
    assert.equal(first.code, 0, first.stderr);
    assert.match(first.stdout, new RegExp(`${held.amount} sent from the hub account \\(ledger recovered:hub:0`));
    assert.equal(await stack.balanceOf('hub', 'USDC', to), BigInt(held.amount));
    assert.equal(await stack.balanceOf('hub', 'USDC', created.hubAccount), 0n);

    // Rerun, even to another address: the recorded send is the outcome; nothing moves twice.
    const again = await routectl('recover', created.routeId, '--side', 'deposit', '--to', allowedAddress(), '--reason', 'test');
    assert.equal(again.code, 0, again.stderr);
    assert.equal(await stack.balanceOf('hub', 'USDC', to), BigInt(held.amount));
    const booked = await db()
      .select()
      .from(ledgerEntries)
      .where(and(eq(ledgerEntries.routeId, created.routeId), eq(ledgerEntries.kind, 'recovered')));
    assert.deepEqual(
      booked.map((e) => [e.entryKey, e.amount]),
      [['recovered:hub:0', held.amount]],
    );
    const audit = await db().select().from(operatorActions).where(eq(operatorActions.routeId, created.routeId)).orderBy(operatorActions.id);
    assert.deepEqual(
      audit.map((a) => [a.action, a.operator, a.outcome]),
      [
        ['fail', 'oncall@ops', 'done'],
        ['recover', 'oncall@ops', 'refused'],
        ['recover', 'oncall@ops', 'done'],
        ['recover', 'oncall@ops', 'done'],
      ],
    );
    assert.match(audit[2]!.detail ?? '', new RegExp(`^recovered:hub:0 ${held.amount} \\(tx 0x`));
    // The exit side right after the deposit side: refused (back to back, the two sends would be linked by their time).
    const soon = await routectl('recover', created.routeId, '--side', 'exit', '--reason', 'test');
    assert.equal(soon.code, 4, soon.stderr);
    assert.match(soon.stderr, /the deposit side of .* was recovered at .*; recover the exit side at least an hour later/);
    const after = await projection(created.routeId);
    assert.equal(after.heldFunds, null);
    assert.equal(after.needsAttention, false);
  });

  test("a new refund run books an earlier run's refund that mined, and signs none", async () => {
    const created = await parkAtBridgeIn('2');
    assert.equal((await routectl('fail', created.routeId, '--reason', 'refund it')).code, 0);
    const route = await projection(created.routeId);
    const { deposit } = stack.routeKeys(route.accountIndex);
    const source = chain('source').chainId;
    await stack.chainClient('source').request({ method: 'anvil_setBalance' as never, params: [deposit.address, toHex(10n ** 18n)] as never });
    // An earlier refund run gave up while its refund was pending; the refund mined afterwards, unbooked.
    const earlierTo = freshAddress();
    const transfer = encodeFunctionData({ abi: erc20Abi, functionName: 'transfer', args: [earlierTo, BigInt(created.amount)] });
    const earlier = await recordUnsent(deposit, created.routeId, 'refund:earlier-run', source, {
      to: stack.token('source', 'USDC'),
      data: transfer,
      gas: 100_000n,
    });
    await stack.chainClient('source').sendRawTransaction({ serializedTransaction: earlier.rawTx as Hex });
    await stack.chainClient('source').waitForTransactionReceipt({ hash: earlier.txHash as Hex });

    const to = allowedAddress();
    const actionId = await requestAction(db(), {
      routeId: created.routeId,
      action: 'refund',
      operator: 'oncall@ops',
      reason: 'test',
      params: { to, now: true },
    });
    const refund = await fundsActivities(stack.service.activityDeps).refundDeposit({ routeId: created.routeId, to, key: 'new-run', actionId });
    assert.deepEqual(refund, { amount: created.amount, txHash: earlier.txHash, to: getAddress(earlierTo), earlier: 'earlier-run' });
    const booked = await db()
      .select()
      .from(ledgerEntries)
      .where(and(eq(ledgerEntries.routeId, created.routeId), eq(ledgerEntries.kind, 'refunded')));
    assert.deepEqual(
      booked.map((e) => [e.entryKey, e.amount, e.txHash]),
      [['refunded:earlier-run', created.amount, earlier.txHash]],
    );
    assert.equal(
      (
        await db()
          .select()
          .from(txIntents)
          .where(and(eq(txIntents.routeId, created.routeId), eq(txIntents.step, 'refund:new-run')))
      ).length,
      0,
      'no second refund signed',
    );
    const [action] = await db().select().from(operatorActions).where(eq(operatorActions.id, actionId));
    assert.equal(action?.outcome, 'done');
    assert.match(action?.detail ?? '', /by the earlier run refund:earlier-run/);
  });

  test("routectl recover voids the failed route's stale sends first and passes over a recovery send that reverted", async () => {
    const created = await create('3');
    assert.equal((await routectl('devnet', 'fault', 'set', 'shield', '--count', '5')).code, 0);
    await stack.fund(created.depositAddress, 'USDC', BigInt(created.amount));
    assert.equal((await until(created.routeId, 'parked', (t) => t.needsAttention)).status, 'RECEIVED_ON_HUB');
    await routectl('devnet', 'fault', 'clear');
    assert.equal((await routectl('fail', created.routeId, '--reason', 'give it back')).code, 0);
    const route = await projection(created.routeId);
    const held = BigInt(route.heldFunds?.find((h) => h.place === 'hub')?.amount ?? '0');
    assert.ok(held > 0n, 'the hub account holds the funds');
    const { hub } = stack.routeKeys(route.accountIndex);
    const hubChain = chain('hub').chainId;
    const hubClient = stack.chainClient('hub');
    await hubClient.request({ method: 'anvil_setBalance' as never, params: [hub.address, toHex(10n ** 18n)] as never });
    const token = route.hubToken as Address;
    const transfer = (to: Address, amount: bigint) => encodeFunctionData({ abi: erc20Abi, functionName: 'transfer', args: [to, amount] });
    // An earlier recovery whose send reverted (it moved nothing): recorded, mined, final.
    const reverted = await recordUnsent(hub, created.routeId, 'recover:hub:0', hubChain, {
      to: token,
      data: transfer(freshAddress(), held * 1000n),
      gas: 100_000n,
    });
    await hubClient.sendRawTransaction({ serializedTransaction: reverted.rawTx as Hex });
    assert.equal((await hubClient.waitForTransactionReceipt({ hash: reverted.txHash as Hex })).status, 'reverted');
    // A send of the failed route recorded after it ended and never broadcast: it would move the funds first.
    const thief = freshAddress();
    const stale = await recordUnsent(hub, created.routeId, 'stale', hubChain, { to: token, data: transfer(thief, held), gas: 100_000n });

    const to = allowedAddress();
    const recovered = await routectl('recover', created.routeId, '--side', 'deposit', '--to', to, '--reason', 'test');
    assert.equal(recovered.code, 0, recovered.stderr);
    assert.match(recovered.stdout, new RegExp(`${held} sent from the hub account \\(ledger recovered:hub:1`));
    assert.equal(await stack.balanceOf('hub', 'USDC', to), held);
    assert.equal(await stack.balanceOf('hub', 'USDC', thief), 0n, 'the stale send never went out');
    assert.equal((await db().select().from(txIntents).where(eq(txIntents.id, stale.id)))[0]?.status, 'voided');
    const booked = await db()
      .select()
      .from(ledgerEntries)
      .where(and(eq(ledgerEntries.routeId, created.routeId), eq(ledgerEntries.kind, 'recovered')));
    assert.deepEqual(
      booked.map((e) => [e.entryKey, e.amount]),
      [['recovered:hub:1', held.toString()]],
    );
  });

  test("routectl recover takes a failed route's note out of the pool (ragequit) and sends it on", async () => {
    const created = await create('5');
    assert.equal((await routectl('devnet', 'fault', 'set', 'asp-review', '--count', '1')).code, 0);
    await stack.fund(created.depositAddress, 'USDC', BigInt(created.amount));
    assert.equal((await until(created.routeId, 'parked', (t) => t.needsAttention)).status, 'SHIELDED');
    // A route that ended while its note was in the pool and whose own ragequit gave up (terminated here).
    await stack.temporal.client.workflow.getHandle(created.routeId).terminate('test: the route ended with its note in the pool');
    await db().update(transfers).set({ status: 'FAILED', error: 'failed by operator: test' }).where(eq(transfers.routeId, created.routeId));
    // An earlier ragequit that reverted (it moved nothing): the recovery looks at the note again and ragequits anew.
    const route = await projection(created.routeId);
    const { hub } = stack.routeKeys(route.accountIndex);
    const hubClient = stack.chainClient('hub');
    await hubClient.request({ method: 'anvil_setBalance' as never, params: [hub.address, toHex(10n ** 18n)] as never });
    const failing = encodeFunctionData({ abi: erc20Abi, functionName: 'transfer', args: [freshAddress(), 10n ** 30n] });
    const reverted = await recordUnsent(hub, created.routeId, 'ragequit', chain('hub').chainId, {
      to: route.hubToken as Address,
      data: failing,
      gas: 100_000n,
    });
    await hubClient.sendRawTransaction({ serializedTransaction: reverted.rawTx as Hex });
    assert.equal((await hubClient.waitForTransactionReceipt({ hash: reverted.txHash as Hex })).status, 'reverted');

    const to = allowedAddress();
    const recovered = await routectl('recover', created.routeId, '--side', 'deposit', '--to', to, '--reason', 'test');
    assert.equal(recovered.code, 0, recovered.stderr);
    assert.match(recovered.stdout, /pool note of \d+ back to the hub account \(ragequit/);
    const ledger = await db().select().from(ledgerEntries).where(eq(ledgerEntries.routeId, created.routeId));
    const ragequit = ledger.find((e) => e.kind === 'ragequit');
    const sent = ledger.find((e) => e.entryKey === 'recovered:hub:0');
    assert.ok(ragequit && sent, JSON.stringify(ledger));
    assert.ok(BigInt(sent.amount) >= BigInt(ragequit.amount));
    assert.equal(await stack.balanceOf('hub', 'USDC', to), BigInt(sent.amount));
    assert.equal((await projection(created.routeId)).heldFunds, null);
  });
});

/** A funded route parked at bridge-in (the bridge's quotes fail), its deposit still at the deposit address. */
async function parkAtBridgeIn(amount: string): Promise<Transfer> {
  const created = await create(amount);
  assert.equal((await routectl('devnet', 'fault', 'set', 'bridge-in')).code, 0);
  await stack.fund(created.depositAddress, 'USDC', BigInt(created.amount));
  assert.equal((await until(created.routeId, 'parked', (t) => t.needsAttention)).status, 'BRIDGING_IN');
  assert.equal((await routectl('devnet', 'fault', 'clear')).code, 0);
  return created;
}

/** A send signed and recorded as the sender does it, and never broadcast (its worker died in between). */
async function recordUnsent(
  account: LocalAccount,
  routeId: string,
  step: string,
  chainId: number,
  tx: { to: Address; data?: Hex; value?: bigint; gas: bigint },
) {
  const client = stack.service.activityDeps.chains.publicClient(chainId);
  const [nonce, fees] = await Promise.all([client.getTransactionCount({ address: account.address, blockTag: 'pending' }), client.estimateFeesPerGas()]);
  const rawTx = await account.signTransaction({
    chainId,
    type: 'eip1559',
    nonce,
    ...tx,
    maxFeePerGas: fees.maxFeePerGas,
    maxPriorityFeePerGas: fees.maxPriorityFeePerGas,
  });
  const [row] = await db()
    .insert(txIntents)
    .values({ routeId, step, chainId, fromAddress: account.address, nonce, txHash: keccak256(rawTx), rawTx })
    .returning();
  return row!;
}

function racePlan(): RoutePlan {
  const address = () => freshAddress();
  return {
    routeId: `rt_race_${Date.now()}`,
    accountIndex: 999_999,
    sourceChainId: chain('source').chainId,
    hubChainId: chain('hub').chainId,
    destChainId: chain('destination').chainId,
    sourceToken: address(),
    hubToken: address(),
    destToken: address(),
    amount: '1000000',
    quotedOutputAmount: '900000',
    depositAddress: address(),
    hubAccount: address(),
    exitAccount: address(),
    recipient: address(),
    depositDeadline: new Date(Date.now() + 600_000).toISOString(),
    refundAddress: null,
    settings: { stepMaxAttempts: 1, stepTimeBudgetSeconds: 30, depositTimeoutSeconds: 60 },
    privacy: { delaySeconds: 1, minAnonymitySet: 1, maxWaitSeconds: 10, pollSeconds: 1, reviewTimeoutSeconds: 60 },
  };
}
