import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { after, afterEach, before, describe, test } from 'node:test';
import proto from '@temporalio/proto';
import { WorkflowFailedError } from '@temporalio/client';
import { and, eq } from 'drizzle-orm';
import type { Address, Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { operatorOf } from '../../src/cli/operator.ts';
import { ledgerEntries, operatorActions, transfers } from '../../src/db/schema.ts';
import { listActions, requestAction } from '../../src/operators/audit.ts';
import { refundWorkflowId } from '../../workflows/refunds.ts';
import { startTestStack, waitFor, type TestStack, type TransferView } from '../support/testStack.ts';
import type { FailureCode, Refund } from '../../src/client/types.ts';
import { assertRefundOnChain } from '../support/refunds.ts';

let stack: TestStack;
/** The one address besides a route's own that operators may send its funds to here (OPERATOR_ALLOWED_DESTINATIONS). */
const TREASURY = privateKeyToAccount(generatePrivateKey()).address;

before(async () => {
  // Who runs routectl in these tests (a test that names someone else passes --operator).
  process.env.ROUTECTL_OPERATOR = 'oncall@ops';
  stack = await startTestStack({
    env: {
      STEP_MAX_ATTEMPTS: '2',
      STEP_TIME_BUDGET_SECONDS: '60',
      DEPOSIT_TIMEOUT_SECONDS: '6',
      STRAY_SCAN_INTERVAL_SECONDS: '1',
      OPERATOR_ALLOWED_DESTINATIONS: TREASURY,
      // A history recorded for the replay test is read without the codec's key.
      ...(process.env.RECORD_REFUND_HISTORY && { PAYLOAD_CODEC: 'off' }),
    },
  });
});
after(async () => stack?.close());
afterEach(() => stack.relay.faults.clear());

/** With the outcomes (docs/api.md, "Outcomes"), as the typed client has them. */
type Transfer = TransferView & { failureCode: FailureCode | null; depositedAmount: string; refund: Refund | null; refunds: Refund[] };

const chainId = (role: string) => stack.manifest.chains.find((c) => c.role === role)!.chainId;
const freshAddress = () => privateKeyToAccount(generatePrivateKey()).address;

const routectl = (...args: string[]) => stack.routectl(...args);

async function create(amount: string, extra: Record<string, string> = {}): Promise<Transfer> {
  const { status, body } = await stack.api<Transfer>('POST', '/api/private-route', {
    sourceChainId: chainId('source'),
    destChainId: chainId('destination'),
    amount,
    userDestinationAddress: freshAddress(),
    ...extra,
  });
  assert.equal(status, 200, JSON.stringify(body));
  return body.data!;
}

const actionsOf = async (routeId: string) => (await listActions(stack.service.db, { routeId })).reverse();
const recipientOf = async (routeId: string) =>
  (await stack.service.db.select().from(transfers).where(eq(transfers.routeId, routeId)))[0]!.userDestinationAddress as Address;

/** A refund workflow started straight through the Temporal client, as anyone who reaches Temporal could: its failure message. */
async function refundBypassingRoutectl(input: { routeId: string; to: Address; actionId?: number }): Promise<string> {
  const handle = await stack.temporal.client.workflow.start('refundWorkflow', {
    taskQueue: stack.config.TEMPORAL_TASK_QUEUE,
    workflowId: refundWorkflowId(input.routeId),
    workflowIdReusePolicy: 'ALLOW_DUPLICATE',
    args: [{ ...input, reason: 'not through routectl' }],
  });
  const failure = await handle.result().then(
    () => assert.fail('the refund went through'),
    (error: unknown) => error,
  );
  assert.ok(failure instanceof WorkflowFailedError, String(failure));
  return failure.cause?.message ?? '';
}

const get = async (routeId: string) => (await stack.api<Transfer & { userDestinationAddress: Address }>('GET', `/api/private-route/${routeId}`)).body.data!;
const until = (routeId: string, what: string, ok: (t: Transfer) => boolean, timeoutMs = 60_000) =>
  waitFor(
    `${routeId}: ${what}`,
    async () => {
      const t = await get(routeId);
      return ok(t) ? t : undefined;
    },
    timeoutMs,
  );

describe('stuck transfers', () => {
  test('a failing bridge-out parks the transfers; clearing the fault and `routectl retry --all-parked` completes them', async () => {
    const created = await create('40');
    const other = await create('41');
    // mode fail: the bridge's quote endpoint answers 500 for bridge-out orders until cleared. In deposit-address
    // mode the order is opened by the unshield step, whose pool withdrawal pays it: the transfer parks there.
    // Set in-process (what `routectl devnet fault set` asks the emulator over HTTP): the deposits must follow the creates
    // well within this file's 6 s deposit timeout, even on a busy machine.
    stack.relay.faults.set({ operation: 'bridge-out', mode: 'fail' });
    await stack.fund(created.depositAddress, 'USDC', BigInt(created.amount));
    await stack.fund(other.depositAddress, 'USDC', BigInt(other.amount));
    const parked = await until(created.routeId, 'parked', (t) => t.needsAttention);
    await until(other.routeId, 'parked', (t) => t.needsAttention);
    assert.equal(parked.status, 'SHIELDED', 'a parked transfer keeps its status');
    assert.equal(parked.error, null);

    const stuck = await routectl('list', '--stuck', '--json');
    assert.equal(stuck.code, 0, stuck.stderr);
    const listed = (JSON.parse(stuck.stdout) as Array<{ routeId: string; parkedStep: string; lastError: string }>).find((r) => r.routeId === created.routeId);
    assert.equal(listed?.parkedStep, 'unshield');
    assert.match(listed?.lastError ?? '', /injected fault|unavailable|500/);

    const visible = await waitFor('the visibility query to list it', async () => {
      const ids: string[] = [];
      for await (const wf of stack.temporal.client.workflow.list({ query: 'NeedsAttention = true AND TransferStatus = "SHIELDED"' })) ids.push(wf.workflowId);
      return ids.includes(created.routeId) ? ids : undefined;
    });
    assert.ok(visible.includes(created.routeId));

    const shown = await routectl('show', created.routeId);
    assert.match(shown.stdout, /parked at unshield/);

    assert.equal((await routectl('devnet', 'fault', 'clear')).code, 0);
    const dryRun = await routectl('retry', '--all-parked', '--step', 'unshield', '--dry-run');
    assert.equal(dryRun.code, 0, dryRun.stderr);
    for (const t of [created, other]) assert.match(dryRun.stdout, new RegExp(`${t.routeId}: would retry unshield`));
    assert.equal((await get(created.routeId)).needsAttention, true, 'a dry run retries nothing');
    const none = await routectl('retry', '--all-parked', '--step', 'bridge-in', '--reason', 'bridge outage over');
    assert.match(none.stdout, /no parked transfers match/);

    const noReason = await routectl('retry', '--all-parked', '--step', 'unshield');
    assert.equal(noReason.code, 2);
    assert.match(noReason.stderr, /retry needs --reason/);
    const retried = await routectl('retry', '--all-parked', '--step', 'unshield', '--reason', 'bridge outage over');
    assert.equal(retried.code, 0, retried.stderr);
    assert.match(retried.stdout, /retried 2 of 2 parked transfers/);
    for (const t of [created, other]) {
      const [row, ...more] = await actionsOf(t.routeId);
      assert.equal(more.length, 0, 'one audit row per route');
      assert.deepEqual(
        [row?.action, row?.operator, row?.reason, row?.outcome, row?.params.step, row?.params.identity],
        ['retry', 'oncall@ops', 'bridge outage over', 'done', 'unshield', 'env'],
      );
      assert.match(row?.detail ?? '', /retrying unshield/);
      assert.ok(row?.finishedAt);
    }
    for (const t of [created, other]) {
      const done = await until(t.routeId, 'completed', (x) => x.status === 'COMPLETED');
      assert.equal(done.needsAttention, false);
      const recipient = (await get(t.routeId)).userDestinationAddress;
      assert.equal(await stack.balanceOf('destination', 'USDC', recipient), BigInt(t.quotedOutputAmount));
    }

    const again = await routectl('retry', created.routeId, '--reason', 'once more');
    assert.equal(again.code, 4);
    assert.match(again.stderr, /is COMPLETED; nothing to retry/);
    assert.deepEqual(
      (await actionsOf(created.routeId)).map((a) => [a.action, a.outcome]),
      [
        ['retry', 'done'],
        ['retry', 'refused'],
      ],
    );
  });

  test('`routectl fail` ends a parked transfer as FAILED with the reason and records where the funds are', async () => {
    const created = await create('30');
    // the hub RPC rejects the next 5 shield transactions
    stack.relay.faults.set({ operation: 'shield', mode: 'fail', count: 5 });
    await stack.fund(created.depositAddress, 'USDC', BigInt(created.amount));
    const parked = await until(created.routeId, 'parked', (t) => t.needsAttention);
    assert.equal(parked.status, 'RECEIVED_ON_HUB');
    await routectl('devnet', 'fault', 'clear');

    const failed = await routectl('fail', created.routeId, '--reason', 'compliance hold: refund manually', '--operator', 'alice@example.com');
    assert.equal(failed.code, 0, failed.stderr);
    const t = await until(created.routeId, 'failed', (x) => x.status === 'FAILED');
    assert.equal(t.error, 'failed by operator: compliance hold: refund manually');
    // The operator ended it, but on a shield that kept failing: the code names the step, not only the operator.
    assert.equal(t.failureCode, 'PRIVACY_POOL_FAILED');
    assert.equal(t.depositedAmount, created.amount);
    assert.equal(t.refund, null);
    const [action] = await actionsOf(created.routeId);
    assert.deepEqual(
      [action?.action, action?.operator, action?.reason, action?.outcome, action?.params.identity],
      ['fail', 'alice@example.com', 'compliance hold: refund manually', 'done', 'flag'],
    );
    assert.match(action?.detail ?? '', /^FAILED \(failed by operator: compliance hold/);
    const listed = await routectl('show', created.routeId);
    assert.match(
      listed.stdout,
      /operator actions \(newest first\):\n {2}#\d+ {2}\S+ {2}alice@example\.com {2}fail {2}"compliance hold: refund manually" {2}done/,
    );
    const shown = JSON.parse((await routectl('show', created.routeId, '--json')).stdout) as {
      transfer: { heldFunds: Array<{ place: string; address: string; amount: string }> };
    };
    const hub = shown.transfer.heldFunds.find((h) => h.place === 'hub');
    assert.ok(hub, 'the hub account is recorded as holding the funds');
    assert.equal(BigInt(hub.amount), await stack.balanceOf('hub', 'USDC', created.hubAccount));
    assert.ok(BigInt(hub.amount) > 0n);
  });

  test('operator commands refuse unknown routes, routes that are not parked, and missing reasons', async () => {
    const unknown = await routectl('retry', 'rt_00000000000000000000000000000000', '--reason', 'test');
    assert.equal(unknown.code, 3);
    assert.match(unknown.stderr, /unknown route/);
    const waiting = await create('10');
    const notParked = await routectl('retry', waiting.routeId, '--reason', 'test');
    assert.equal(notParked.code, 4);
    assert.match(notParked.stderr, /not parked/);
    for (const args of [
      ['fail', waiting.routeId],
      ['retry', waiting.routeId],
      ['refund', waiting.routeId, '--to', TREASURY],
      ['recover', waiting.routeId, '--to', TREASURY],
      ['void', '1'],
      ['fail', waiting.routeId, '--reason', ' '],
    ]) {
      const noReason = await routectl(...args);
      assert.equal(noReason.code, 2, args.join(' '));
      assert.match(noReason.stderr, new RegExp(`${args[0]} needs --reason "…": why you do it, recorded in the audit log`));
    }
    assert.deepEqual(
      (await actionsOf(waiting.routeId)).map((a) => [a.action, a.outcome]),
      [['retry', 'refused']],
      'a usage error writes nothing',
    );
  });

  test('the operator identity: --operator, else ROUTECTL_OPERATOR, else the login as user@host', () => {
    assert.deepEqual(operatorOf('fail', { operator: 'bob', reason: ' why ' }, { ROUTECTL_OPERATOR: 'carol' }), {
      operator: 'bob',
      reason: 'why',
      identity: 'flag',
    });
    assert.deepEqual(operatorOf('fail', { reason: 'why' }, { ROUTECTL_OPERATOR: 'carol' }), { operator: 'carol', reason: 'why', identity: 'env' });
    const login = operatorOf('fail', { reason: 'why' }, {});
    assert.equal(login.identity, 'os');
    assert.match(login.operator, /^.+@.+$/);
    assert.throws(() => operatorOf('fail', { operator: ' ', reason: 'why' }, {}), /--operator must be a name/);
  });
});

describe('deposits that go wrong', () => {
  test('no deposit by the deadline: FAILED with the cause', async () => {
    const created = await create('10');
    const t = await until(created.routeId, 'failed', (x) => x.status === 'FAILED', 30_000);
    assert.match(t.error ?? '', /no deposit received by the deadline/);
    assert.equal(t.failureCode, 'DEPOSIT_EXPIRED');
    assert.equal(t.depositedAmount, '0');
    assert.deepEqual([t.refund, t.refunds], [null, []]);
  });

  test('underpayment with a refundAddress: refunded in full at the deadline, then FAILED', async () => {
    const refundTo = freshAddress();
    const created = await create('20', { refundAddress: refundTo });
    await stack.fund(created.depositAddress, 'USDC', 12_345_678n);
    const t = await until(created.routeId, 'failed', (x) => x.status === 'FAILED', 30_000);
    assert.match(t.error ?? '', /underpaid: received 12345678 of 20000000.*refunded 12345678/);
    assert.equal(await stack.balanceOf('source', 'USDC', refundTo), 12_345_678n);
    assert.equal(await stack.balanceOf('source', 'USDC', created.depositAddress), 0n);
    // What a program reads: why, what arrived, and what went back in which transaction.
    assert.equal(t.failureCode, 'DEPOSIT_TOO_SMALL');
    assert.equal(t.depositedAmount, '12345678');
    assert.equal(t.refunds.length, 1);
    assert.deepEqual(t.refund, t.refunds[0]);
    assert.equal(t.refund?.amount, '12345678');
    assert.deepEqual([t.refund?.symbol, t.refund?.chainId], ['USDC', chainId('source')]);
    await assertRefundOnChain(stack, t.refund, { from: created.depositAddress, to: refundTo, token: stack.token('source', 'USDC') });
  });

  test('underpayment without a refundAddress: held and parked for an operator', async () => {
    const created = await create('20');
    await stack.fund(created.depositAddress, 'USDC', 5_000_000n);
    const parked = await until(created.routeId, 'parked', (t) => t.needsAttention, 30_000);
    assert.equal(parked.status, 'AWAITING_DEPOSIT');
    // A refund of a route that has not ended, to its own recipient, asked for in the audit log but started in
    // Temporal directly: the activity refuses it, and nothing moves.
    const recipient = await recipientOf(created.routeId);
    const actionId = await requestAction(stack.service.db, {
      routeId: created.routeId,
      action: 'refund',
      operator: 'mallory',
      reason: 'early',
      params: { to: recipient },
    });
    assert.match(
      await refundBypassingRoutectl({ routeId: created.routeId, to: recipient, actionId }),
      /route .* is AWAITING_DEPOSIT; only a finished route \(COMPLETED or FAILED\) is refunded/,
    );
    const [refused] = await stack.service.db.select().from(operatorActions).where(eq(operatorActions.id, actionId));
    assert.equal(refused?.outcome, 'refused');
    // A recovery started in Temporal without an audit row is refused before anything is looked at.
    const recovery = await stack.temporal.client.workflow.start('recoverWorkflow', {
      taskQueue: stack.config.TEMPORAL_TASK_QUEUE,
      workflowId: `${created.routeId}:recover`,
      args: [{ routeId: created.routeId, to: recipient }],
    });
    const recoveryFailure = await recovery.result().then(
      () => assert.fail('the recovery ran'),
      (error: unknown) => error as WorkflowFailedError,
    );
    assert.match(recoveryFailure.cause?.message ?? '', /refused: the recover of .* carries no operator action id; request it with routectl recover/);
    assert.equal((await get(created.routeId)).status, 'AWAITING_DEPOSIT', 'a refused request flags nothing and changes nothing');
    assert.equal(await stack.balanceOf('source', 'USDC', created.depositAddress), 5_000_000n);
    const failed = await routectl('fail', created.routeId, '--reason', 'sender gave up');
    assert.equal(failed.code, 0, failed.stderr);
    assert.match(failed.stdout, /holds 5000000 .* at deposit/);
    assert.equal(await stack.balanceOf('source', 'USDC', created.depositAddress), 5_000_000n, 'nothing moved without a decision');
    // Ended by the operator while it waited on its short deposit: the code says the deposit was too small.
    const ended = await until(created.routeId, 'failed', (x) => x.status === 'FAILED', 30_000);
    assert.deepEqual([ended.failureCode, ended.depositedAmount, ended.refund], ['DEPOSIT_TOO_SMALL', '5000000', null]);
  });

  test('overpayment: the transfer pays exactly the quote and the surplus goes back to the refundAddress', async () => {
    const refundTo = freshAddress();
    const created = await create('25', { refundAddress: refundTo });
    await stack.fund(created.depositAddress, 'USDC', BigInt(created.amount) + 7_000_000n);
    await until(created.routeId, 'completed', (t) => t.status === 'COMPLETED');
    const recipient = (await get(created.routeId)).userDestinationAddress;
    assert.equal(await stack.balanceOf('destination', 'USDC', recipient), BigInt(created.quotedOutputAmount));
    await waitFor('the surplus refund', async () => ((await stack.balanceOf('source', 'USDC', refundTo)) === 7_000_000n ? true : undefined), 30_000);
    assert.equal(await stack.balanceOf('source', 'USDC', created.depositAddress), 0n);
    // The refund waited a time of its own (REFUND_DELAY_MIN/MAX_SECONDS, 1–5 s here) before it was sent, so it does
    // not follow the route's completion (docs/privacy.md, "Strays and refunds").
    const history = await stack.temporal.client.workflow.getHandle(refundWorkflowId(created.routeId)).fetchHistory();
    // RECORD_REFUND_HISTORY=<file>: keeps this history for test/workflow/replay.test.ts (a refund that waits its delay).
    if (process.env.RECORD_REFUND_HISTORY) writeFileSync(process.env.RECORD_REFUND_HISTORY, proto.temporal.api.history.v1.History.encode(history).finish());
    const timers = (history.events ?? []).flatMap((e) => (e.timerStartedEventAttributes ? [e.timerStartedEventAttributes.startToFireTimeout!] : []));
    assert.equal(timers.length, 1, 'one wait before the refund');
    const waited = Number(timers[0]!.seconds ?? 0);
    assert.ok(waited >= 1 && waited <= 5, `the refund waited ${waited} s`);
  });

  test('a deposit after the deadline without a refundAddress is held, listed, and refunded by an operator', async () => {
    const created = await create('15');
    await until(created.routeId, 'failed', (x) => x.status === 'FAILED', 30_000);
    await stack.fund(created.depositAddress, 'USDC', BigInt(created.amount));
    const held = await until(created.routeId, 'listed as holding funds', (t) => t.needsAttention, 30_000);
    assert.equal(held.status, 'FAILED');
    const stuck = JSON.parse((await routectl('list', '--stuck', '--json')).stdout) as Array<{
      routeId: string;
      heldFunds: Array<{ place: string; amount: string }>;
    }>;
    assert.deepEqual(
      stuck.find((r) => r.routeId === created.routeId)?.heldFunds.map((h) => [h.place, h.amount]),
      [['deposit', created.amount]],
    );

    // Started in Temporal directly: without an audit row a refund goes only to the refundAddress (this route has none);
    // with one, only to an allowed destination. Nothing moves.
    const stranger = freshAddress();
    assert.match(
      await refundBypassingRoutectl({ routeId: created.routeId, to: stranger }),
      /a refund without an operator action goes only to route .*'s refundAddress \(none\)/,
    );
    const actionId = await requestAction(stack.service.db, {
      routeId: created.routeId,
      action: 'refund',
      operator: 'mallory',
      reason: 'mine now',
      params: { to: stranger },
    });
    assert.match(
      await refundBypassingRoutectl({ routeId: created.routeId, to: stranger, actionId }),
      new RegExp(`${stranger} is not an allowed destination .*OPERATOR_ALLOWED_DESTINATIONS`),
    );
    assert.match(
      await refundBypassingRoutectl({ routeId: created.routeId, to: TREASURY, actionId }),
      /operator action #\d+ (does not match|has ended already)/,
    );
    assert.equal(await stack.balanceOf('source', 'USDC', stranger), 0n);
    assert.equal(await stack.balanceOf('source', 'USDC', created.depositAddress), BigInt(created.amount));

    const notAllowed = await routectl('refund', created.routeId, '--to', stranger, '--reason', 'sender asked for it');
    assert.equal(notAllowed.code, 4, notAllowed.stdout);
    assert.match(notAllowed.stderr, /is not an allowed destination/);
    // Its recipient: a transfer from the deposit address to the payout's address links the two ends; only with --override.
    const [{ recipient }] = (await stack.service.db
      .select({ recipient: transfers.userDestinationAddress })
      .from(transfers)
      .where(eq(transfers.routeId, created.routeId))) as [{ recipient: string }];
    const toRecipient = await routectl('refund', created.routeId, '--to', recipient, '--reason', 'user asked', '--now');
    assert.equal(toRecipient.code, 4, toRecipient.stderr);
    assert.match(
      toRecipient.stderr,
      /is route .*'s recipient; a refund of its deposit side to the address it paid links the deposit to the payout.*--override/,
    );
    // By default the refund is checked at once and sent after a random delay (REFUND_DELAY_MIN..MAX_SECONDS, 1–5 s here).
    const refunded = await routectl('refund', created.routeId, '--to', TREASURY, '--reason', 'sender asked for it');
    assert.equal(refunded.code, 0, refunded.stderr);
    assert.match(refunded.stdout, /checked and scheduled for \d{4}-\d\d-\d\dT[\d:.]+Z \(a random delay; --now sends at once\)/);
    await waitFor(
      'the scheduled refund',
      async () => ((await stack.balanceOf('source', 'USDC', TREASURY)) === BigInt(created.amount) ? true : undefined),
      30_000,
    );
    await waitFor('the held funds cleared', async () => ((await get(created.routeId)).needsAttention ? undefined : true), 30_000);
    const audit = await routectl('actions', '--route', created.routeId, '--json');
    assert.equal(audit.code, 0, audit.stderr);
    const rows = (
      JSON.parse(audit.stdout) as Array<{
        action: string;
        operator: string;
        outcome: string;
        params: { to: string; now?: boolean };
        detail: string;
        createdAt: string;
      }>
    ).reverse();
    assert.deepEqual(
      rows.map((r) => [r.action, r.operator, r.outcome, r.params.to, r.params.now ?? null]),
      [
        ['refund', 'mallory', 'refused', stranger, null],
        ['refund', 'oncall@ops', 'refused', stranger, false],
        ['refund', 'oncall@ops', 'refused', recipient, true],
        ['refund', 'oncall@ops', 'done', TREASURY, false],
      ],
    );
    const [ledger] = await stack.service.db
      .select()
      .from(ledgerEntries)
      .where(and(eq(ledgerEntries.routeId, created.routeId), eq(ledgerEntries.kind, 'refunded')));
    const mined = await stack
      .chainClient('source')
      .getBlock({ blockHash: (await stack.chainClient('source').getTransactionReceipt({ hash: ledger!.txHash as Hex })).blockHash });
    const askedAt = Math.floor(Date.parse(rows[3]!.createdAt) / 1000);
    assert.ok(
      Number(mined.timestamp) >= askedAt + 1,
      `mined ${Number(mined.timestamp) - askedAt} s after it was asked for: no sooner than REFUND_DELAY_MIN_SECONDS`,
    );
    assert.match(rows[3]!.detail, new RegExp(`^refunded ${created.amount} to ${TREASURY} \\(tx 0x[0-9a-f]{64}\\)$`, 'i'));
  });
});
