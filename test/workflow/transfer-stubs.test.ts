import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import proto from '@temporalio/proto';
import { after, before, describe, test } from 'node:test';
import { ApplicationFailure, defineSearchAttributeKey } from '@temporalio/common';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { WorkflowUpdateFailedError } from '@temporalio/client';
import { DefaultLogger, Runtime, Worker } from '@temporalio/worker';
import type { TransferActivities } from '../../activities/index.ts';
import type { StatusProjection } from '../../src/domain/projection.ts';
import { createLogger } from '../../src/logger.ts';
import { BridgeRouteError } from '../../src/providers/bridge.ts';
import { activityErrors } from '../../src/temporal/activityErrors.ts';
import { bundleWorkflows } from '../../src/temporal/worker.ts';
import { workflowSpanSinks } from '../../src/observability/tracing.ts';
import { depositObservedSignal, failUpdate, privacyObservedSignal, retryUpdate, stateQuery } from '../../workflows/definitions.ts';
import { SEARCH_ATTRIBUTES, taskQueues, WORKFLOW_TYPE } from '../../workflows/types.ts';
import type { BridgeOrderRef, RoutePlan } from '../../src/domain/plan.ts';
import type { ParkedStep } from '../../src/domain/heldFunds.ts';
import type { ExitDraw } from '../../src/domain/observations.ts';
import type { TransferStatus } from '../../src/domain/status.ts';
import { startTestTemporal } from '../support/temporalTestEnvironment.ts';

/**
 * The real transferWorkflowV2 on a real Temporal dev server, against stub activities (plain functions that record
 * their calls): the orchestration alone (deposit wait, parking, operator updates, cancellation, underpayment), each
 * case in seconds. The activities themselves are tested against real chains in test/integration/legs.test.ts.
 */

const TASK_QUEUE = 'transfer-stubs';
const queues = taskQueues(TASK_QUEUE);
const AMOUNT = 1_000_000n;
const ADDRESS = (n: number) => `0x${n.toString(16).padStart(40, '0')}` as const;

/** A minimal plan: one leg each way, no privacy wait (the review timeout of 0 asks the pool at once). */
function routePlan(routeId: string, overrides: Partial<RoutePlan> = {}): RoutePlan {
  return {
    routeId,
    accountIndex: 1,
    sourceChainId: 1,
    hubChainId: 2,
    destChainId: 3,
    sourceToken: ADDRESS(0x51),
    hubToken: ADDRESS(0x52),
    destToken: ADDRESS(0x53),
    amount: AMOUNT.toString(),
    quotedOutputAmount: '990000',
    depositAddress: ADDRESS(0xd1),
    hubAccount: ADDRESS(0xd2),
    recipient: ADDRESS(0xd3),
    depositDeadline: new Date(Date.now() + 60 * 60 * 1000).toISOString(),
    refundAddress: null,
    settings: { stepMaxAttempts: 2, stepTimeBudgetSeconds: 20, depositTimeoutSeconds: 60 },
    privacy: { delaySeconds: 0, minAnonymitySet: 1, maxWaitSeconds: 60, pollSeconds: 1, reviewTimeoutSeconds: 0 },
    ...overrides,
  };
}

const order = (requestId: string): BridgeOrderRef => ({ kind: 'relay', requestId, amountIn: AMOUNT.toString(), amountOut: '999000' });

/** What one route's stub activities were asked, in order, and how a test makes a step fail. */
interface RouteScript {
  calls: string[];
  projections: StatusProjection[];
  attention: (ParkedStep | null)[];
  /** Steps that throw (a plain, retryable Error) while listed. */
  failing: Set<string>;
  /** Steps that throw a BridgeRouteError (the provider found no route) while listed. */
  noRoute: Set<string>;
  /** depositBalance's answer at the deadline. */
  depositBalance: bigint;
  /** checkFunding's answer: the recipient, when it funded the route. */
  reusedAddress: string | null;
  /** How many more unshield calls find the set below the minimum at proof time (and send nothing). */
  deferrals: number;
  /** How many more unshield calls find their exit epoch passed (and send nothing). */
  epochsPassed: number;
  /** Where each refundDeposit call sent the refund. */
  refundedTo: string[];
  /** The requireAnonymitySet of each unshield call. */
  required: Array<number | undefined>;
  /** When each privacyStatus and unshield call came (ms), and the exit epoch each unshield was given. */
  times: Array<{ call: string; at: number; exitEpoch?: { startsAt: number; seconds: number } }>;
}

const scripts = new Map<string, RouteScript>();
function script(routeId: string, init: Partial<RouteScript> = {}): RouteScript {
  const created: RouteScript = {
    calls: [],
    projections: [],
    attention: [],
    failing: new Set(),
    noRoute: new Set(),
    depositBalance: 0n,
    reusedAddress: null,
    deferrals: 0,
    epochsPassed: 0,
    required: [],
    refundedTo: [],
    times: [],
    ...init,
  };
  scripts.set(routeId, created);
  return created;
}

/** The activities transferWorkflowV2 calls, as stubs: each records its call, projects what it is handed, and fails while told to. */
function stubActivities(): Partial<TransferActivities> {
  const of = (routeId: string) => {
    const found = scripts.get(routeId);
    if (!found) throw ApplicationFailure.nonRetryable(`no script for ${routeId}`);
    return found;
  };
  const step = (routeId: string, name: string, ...projections: (StatusProjection | undefined)[]) => {
    const route = of(routeId);
    route.calls.push(name);
    if (route.failing.has(name)) throw new Error(`${name} failed (stub)`);
    if (route.noRoute.has(name)) throw new BridgeRouteError(`no route: ${name} pair not supported (stub)`);
    for (const projection of projections) if (projection) route.projections.push(projection);
    return route;
  };
  return {
    async projectStatus(input) {
      step(input.routeId, 'projectStatus', input);
    },
    async projectAttention({ routeId, parked }) {
      of(routeId).attention.push(parked);
    },
    async depositBalance(plan) {
      return { balance: step((plan as RoutePlan).routeId, 'depositBalance').depositBalance.toString() };
    },
    async checkFunding(plan) {
      return { reusedAddress: step(plan.routeId, 'checkFunding').reusedAddress, senders: 1 };
    },
    async bridgeIn({ plan, generation, projection }) {
      step(plan.routeId, 'bridgeIn', projection);
      return order(`in-${generation}`);
    },
    async awaitDelivery({ plan, leg, projection, completion }) {
      step(
        plan.routeId,
        `awaitDelivery:${leg}`,
        projection,
        completion && { routeId: plan.routeId, seq: completion.seq, status: 'COMPLETED', payoutTxHash: '0xpay' },
      );
      return { txHash: `0x${leg}`, amount: '999000' };
    },
    async shield({ plan, projection, shielded }) {
      step(plan.routeId, 'shield', projection, shielded);
      return { noteValue: '999000' };
    },
    async privacyStatus({ routeId }) {
      step(routeId, 'privacyStatus').times.push({ call: 'privacyStatus', at: Date.now() });
      return { review: 'approved', anonymitySet: 5 };
    },
    async unshield({ plan, sent, requireAnonymitySet, exitEpoch }) {
      const route = of(plan.routeId);
      route.required.push(requireAnonymitySet);
      route.times.push({ call: 'unshield', at: Date.now(), ...(exitEpoch && { exitEpoch }) });
      if (route.deferrals > 0) {
        route.deferrals -= 1;
        step(plan.routeId, 'unshield');
        return { funded: null, deferred: { reason: 'anonymity-set', anonymitySet: 3 } };
      }
      if (route.epochsPassed > 0) {
        route.epochsPassed -= 1;
        step(plan.routeId, 'unshield');
        return { funded: null, deferred: { reason: 'epoch-passed' } };
      }
      step(plan.routeId, 'unshield', sent);
      return { funded: order('out-1') };
    },
    async bridgeOut({ plan, generation, projection }) {
      step(plan.routeId, 'bridgeOut', projection);
      return order(`out-${generation}`);
    },
    async refundDeposit({ routeId, to }) {
      step(routeId, 'refundDeposit').refundedTo.push(to);
      return { amount: '400000', txHash: '0xrefund', to };
    },
    async voidUnsentIntents({ routeId }) {
      step(routeId, 'voidUnsentIntents');
      return 0;
    },
    async ragequit(plan) {
      step(plan.routeId, 'ragequit');
      return { amount: '999000' };
    },
    async locateFunds(plan) {
      step(plan.routeId, 'locateFunds');
      return [];
    },
  } as Partial<TransferActivities>;
}

let env: TestWorkflowEnvironment;
let workers: Worker[] = [];
let running: Promise<void>[] = [];

before(
  async () => {
    Runtime.install({ logger: new DefaultLogger('ERROR') });
    env = await startTestTemporal({
      searchAttributes: [defineSearchAttributeKey(SEARCH_ATTRIBUTES.status, 'KEYWORD'), defineSearchAttributeKey(SEARCH_ATTRIBUTES.needsAttention, 'BOOL')],
      log: { format: 'pretty', level: 'error' },
    });
    const workflowBundle = await bundleWorkflows({ logger: createLogger({ level: 'warn' }) });
    const activities = stubActivities();
    workers = await Promise.all(
      (['steps', 'waits', 'proofs'] as const).map((queue) =>
        Worker.create({
          connection: env.nativeConnection,
          namespace: env.namespace ?? 'default',
          taskQueue: queues[queue],
          activities,
          // The worker's error translation (src/temporal/activityErrors.ts), as in production.
          interceptors: { activity: [activityErrors] },
          // The workflow bundle sends its span through this sink; tracing off, it drops it.
          ...(queue === 'steps' && { workflowBundle, sinks: workflowSpanSinks(undefined) }),
        }),
      ),
    );
    running = workers.map((worker) => worker.run());
  },
  { timeout: 120_000 },
);

after(
  async () => {
    for (const worker of workers) if (worker.getState() === 'RUNNING') worker.shutdown();
    await Promise.allSettled(running);
    await env?.teardown();
  },
  { timeout: 60_000 },
);

function start(plan: RoutePlan) {
  return env.client.workflow.start(WORKFLOW_TYPE, { workflowId: plan.routeId, taskQueue: TASK_QUEUE, args: [plan] });
}

/** Polls the workflow's `state` query until `ready` holds (or fails after `ms`). */
async function until(
  handle: Awaited<ReturnType<typeof start>>,
  ready: (state: { status: TransferStatus; step: string | null; parked: ParkedStep | null }) => boolean,
  ms = 15_000,
) {
  const stop = Date.now() + ms;
  for (;;) {
    const state = await handle.query(stateQuery);
    if (ready(state)) return state;
    if (Date.now() > stop) assert.fail(`state never became ready: ${JSON.stringify(state)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Polls `holds` until it is true (or fails after `ms`). */
async function eventually(holds: () => boolean, what: string, ms = 15_000) {
  const stop = Date.now() + ms;
  while (!holds()) {
    if (Date.now() > stop) assert.fail(`${what}: not within ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** An update the workflow's validator refused, with its reason. */
async function refused(update: Promise<unknown>, reason: RegExp) {
  await assert.rejects(update, (error: unknown) => error instanceof WorkflowUpdateFailedError && reason.test(String(error.cause?.message)));
}

const HAPPY_STEPS = ['checkFunding', 'bridgeIn', 'awaitDelivery:in', 'shield', 'privacyStatus', 'unshield', 'awaitDelivery:out'];
const statuses = (route: RouteScript) => route.projections.map((p) => `${p.seq}:${p.status}`);
let routes = 0;
const nextRouteId = (name: string) => `stub-${name}-${Date.now()}-${++routes}`;

describe('transferWorkflowV2 against stub activities', { timeout: 180_000 }, () => {
  test('happy path: the deposit signal starts the route, every step runs once in order, COMPLETED', { timeout: 30_000 }, async () => {
    const plan = routePlan(nextRouteId('happy'));
    const route = script(plan.routeId);
    const handle = await start(plan);
    await handle.signal(depositObservedSignal, { balance: AMOUNT.toString(), blockNumber: 7 });
    assert.equal(await handle.result(), 'COMPLETED');
    assert.deepEqual(route.calls, HAPPY_STEPS);
    assert.deepEqual(statuses(route), ['1:BRIDGING_IN', '2:RECEIVED_ON_HUB', '3:SHIELDED', '4:UNSHIELD_SENT', '5:BRIDGING_OUT', '6:COMPLETED']);
    const described = await handle.describe();
    assert.deepEqual(described.searchAttributes[SEARCH_ATTRIBUTES.status], ['COMPLETED']);
  });

  test('a step that keeps failing parks the route (NeedsAttention), and the retry update resumes it', { timeout: 30_000 }, async () => {
    const plan = routePlan(nextRouteId('park'));
    const route = script(plan.routeId, { failing: new Set(['shield']) });
    const handle = await start(plan);
    await handle.signal(depositObservedSignal, { balance: AMOUNT.toString(), blockNumber: 7 });
    const parked = await until(handle, (state) => state.parked !== null);
    assert.equal(parked.parked?.step, 'shield');
    assert.match(parked.parked?.error ?? '', /shield failed \(stub\)/);
    assert.equal(parked.status, 'RECEIVED_ON_HUB');
    assert.equal(route.calls.filter((c) => c === 'shield').length, plan.settings.stepMaxAttempts, 'the step used its whole retry budget before parking');
    // The workflow marks itself parked, then projects the mark: a query can see the first before the second ran.
    await eventually(() => route.attention.at(-1)?.step === 'shield', 'the parked step is projected');
    assert.deepEqual((await handle.describe()).searchAttributes[SEARCH_ATTRIBUTES.needsAttention], [true]);

    route.failing.delete('shield');
    assert.equal(await handle.executeUpdate(retryUpdate), 'retrying shield');
    assert.equal(await handle.result(), 'COMPLETED');
    assert.equal(route.attention.at(-1), null, 'the parked mark was cleared');
    assert.deepEqual((await handle.describe()).searchAttributes[SEARCH_ATTRIBUTES.needsAttention], [false]);
    assert.deepEqual(
      route.calls.filter((c) => c !== 'shield'),
      HAPPY_STEPS.filter((c) => c !== 'shield'),
    );
  });

  test('a provider error the worker translates as final (no route) parks at once, without spending the retry budget', { timeout: 30_000 }, async () => {
    const plan = routePlan(nextRouteId('noroute'), { settings: { stepMaxAttempts: 5, stepTimeBudgetSeconds: 60, depositTimeoutSeconds: 60 } });
    const route = script(plan.routeId, { noRoute: new Set(['bridgeIn']) });
    const handle = await start(plan);
    await handle.signal(depositObservedSignal, { balance: AMOUNT.toString(), blockNumber: 7 });
    const parked = await until(handle, (state) => state.parked !== null);
    assert.equal(parked.parked?.step, 'bridge-in');
    assert.match(parked.parked?.error ?? '', /^no route: bridgeIn pair not supported \(stub\)$/);
    assert.deepEqual(route.calls, ['checkFunding', 'bridgeIn'], 'BridgeRouteRejected is never retried');
    await handle.executeUpdate(failUpdate, { args: [{ reason: 'no bridge for this pair' }] });
    assert.equal(await handle.result(), 'FAILED');
    assert.deepEqual(route.calls.slice(2), ['voidUnsentIntents', 'locateFunds', 'projectStatus'], 'nothing in the pool: no ragequit');
    // The projection is told where it parked, so its failureCode says BRIDGE_FAILED, not only that an operator ended it.
    assert.deepEqual(route.projections.at(-1)?.failedAt, { step: 'bridge-in', failureType: 'BridgeRouteRejected' });
  });

  test('the fail update ends a parked route FAILED, ragequitting its pool note', { timeout: 30_000 }, async () => {
    const plan = routePlan(nextRouteId('fail'));
    const route = script(plan.routeId, { failing: new Set(['unshield']) });
    const handle = await start(plan);
    await handle.signal(depositObservedSignal, { balance: AMOUNT.toString(), blockNumber: 7 });
    await until(handle, (state) => state.parked?.step === 'unshield');
    await refused(handle.executeUpdate(failUpdate, { args: [{ reason: '   ' }] }), /non-empty reason/);
    assert.equal(await handle.executeUpdate(failUpdate, { args: [{ reason: 'the pool is down for a week' }] }), 'failing');
    assert.equal(await handle.result(), 'FAILED');
    assert.deepEqual(route.calls.slice(-4), ['voidUnsentIntents', 'ragequit', 'locateFunds', 'projectStatus']);
    const failed = route.projections.at(-1);
    assert.equal(failed?.status, 'FAILED');
    assert.match(failed?.error ?? '', /^failed by operator: the pool is down for a week; the pool note \(999000\) went back to the hub account/);
    assert.deepEqual(failed?.failedAt, { step: 'unshield', failureType: null }, 'parked on an untyped failure: the step names the cause');
  });

  test('an operator ends a route the ASP rejected: the projection names the privacy wait and AspRejected', { timeout: 30_000 }, async () => {
    // Waits in the pool for its review (no answer of its own to ask for within the test), until the watcher reports a rejection.
    const plan = routePlan(nextRouteId('asp'), {
      privacy: { delaySeconds: 0, minAnonymitySet: 10, maxWaitSeconds: 600, pollSeconds: 1, reviewTimeoutSeconds: 600 },
    });
    const route = script(plan.routeId);
    const handle = await start(plan);
    await handle.signal(depositObservedSignal, { balance: AMOUNT.toString(), blockNumber: 7 });
    await until(handle, (state) => state.step === 'privacy-wait');
    await handle.signal(privacyObservedSignal, { review: 'rejected', anonymitySet: 1 });
    await until(handle, (state) => state.parked?.step === 'privacy-wait');
    await handle.executeUpdate(failUpdate, { args: [{ reason: 'the ASP said no' }] });
    assert.equal(await handle.result(), 'FAILED');
    assert.deepEqual(route.projections.at(-1)?.failedAt, { step: 'privacy-wait', failureType: 'AspRejected' });
  });

  test('a route cancelled in Temporal while awaiting its deposit ends FAILED with where its funds are', { timeout: 30_000 }, async () => {
    const plan = routePlan(nextRouteId('cancel'));
    const route = script(plan.routeId);
    const handle = await start(plan);
    await until(handle, (state) => state.status === 'AWAITING_DEPOSIT');
    await refused(handle.executeUpdate(retryUpdate), /route is not parked \(status AWAITING_DEPOSIT\)/);
    await handle.cancel();
    assert.equal(await handle.result(), 'FAILED');
    assert.deepEqual(route.calls, ['voidUnsentIntents', 'locateFunds', 'projectStatus'], 'no ragequit: nothing was in the pool');
    assert.equal(route.projections.at(-1)?.status, 'FAILED');
    assert.match(route.projections.at(-1)?.error ?? '', /^cancelled in Temporal/);
    assert.equal(route.projections.at(-1)?.failedAt, undefined, 'not parked: nothing to name but the cancellation');
  });

  test('underpaid at the deposit deadline: the deposit is refunded to refundAddress and the route FAILED', { timeout: 30_000 }, async () => {
    const plan = routePlan(nextRouteId('underpaid'), { depositDeadline: new Date(Date.now() + 2_000).toISOString(), refundAddress: ADDRESS(0xee) });
    const route = script(plan.routeId, { depositBalance: 400_000n });
    const handle = await start(plan);
    await handle.signal(depositObservedSignal, { balance: '400000', blockNumber: 3 });
    assert.equal(await handle.result(), 'FAILED');
    assert.deepEqual(route.calls, ['depositBalance', 'refundDeposit', 'projectStatus'], 'at the deadline the chain is asked once');
    assert.match(
      route.projections.at(-1)?.error ?? '',
      /^underpaid: received 400000 of 1000000 by the deadline .*; refunded 400000 to 0x0+ee \(tx 0xrefund\)$/,
    );
  });

  for (const refundAddress of [ADDRESS(0xee), null]) {
    test(`funded from its own recipient: refunded (to ${refundAddress ? 'the refundAddress' : 'the address it came from'}) before the pool, FAILED ADDRESS_REUSE_REFUSED`, {
      timeout: 30_000,
    }, async () => {
      const plan = routePlan(nextRouteId('reuse'), { refundAddress });
      const route = script(plan.routeId, { reusedAddress: plan.recipient });
      const handle = await start(plan);
      await handle.signal(depositObservedSignal, { balance: AMOUNT.toString(), blockNumber: 7 });
      assert.equal(await handle.result(), 'FAILED');
      assert.deepEqual(route.calls, ['checkFunding', 'refundDeposit', 'projectStatus'], 'no bridge-in, no pool');
      assert.deepEqual(route.refundedTo, [refundAddress ?? plan.recipient]);
      const failed = route.projections.at(-1) as { status: string; error?: string };
      assert.equal(failed.status, 'FAILED');
      assert.match(
        failed.error ?? '',
        /^ADDRESS_REUSE_REFUSED: the deposit came from the recipient 0x[0-9a-fA-F]{40}, which links the payout to it for anyone; refunded 400000 to /,
      );
      const recordTo = process.env.RECORD_STUB_REUSE_HISTORY;
      if (recordTo && refundAddress === null) writeFileSync(recordTo, proto.temporal.api.history.v1.History.encode(await handle.fetchHistory()).finish());
    });
  }

  test('underpaid without a refundAddress parks at the deadline; the retry update waits again and a top-up completes the route', {
    timeout: 30_000,
  }, async () => {
    const plan = routePlan(nextRouteId('topup'), { depositDeadline: new Date(Date.now() + 1_000).toISOString() });
    const route = script(plan.routeId, { depositBalance: 400_000n });
    const handle = await start(plan);
    const parked = await until(handle, (state) => state.parked !== null);
    assert.equal(parked.parked?.step, 'await-deposit');
    assert.match(parked.parked?.error ?? '', /^underpaid: received 400000 of 1000000/);
    assert.deepEqual(route.calls, ['depositBalance'], 'at the deadline the chain is asked once');
    await handle.executeUpdate(retryUpdate);
    await handle.signal(depositObservedSignal, { balance: AMOUNT.toString(), blockNumber: 9 });
    assert.equal(await handle.result(), 'COMPLETED');
    assert.deepEqual(route.calls, ['depositBalance', ...HAPPY_STEPS]);
  });

  test('a withdrawal that finds the set below the minimum at proof time sends nothing; the route waits again, then leaves', { timeout: 30_000 }, async () => {
    const plan = routePlan(nextRouteId('deferred'), {
      privacy: { delaySeconds: 0, minAnonymitySet: 5, maxWaitSeconds: 600, pollSeconds: 1, reviewTimeoutSeconds: 0 },
    });
    const route = script(plan.routeId, { deferrals: 1 });
    const handle = await start(plan);
    await handle.signal(depositObservedSignal, { balance: AMOUNT.toString(), blockNumber: 7 });
    assert.equal(await handle.result(), 'COMPLETED');
    assert.deepEqual(route.calls, [
      'checkFunding',
      'bridgeIn',
      'awaitDelivery:in',
      'shield',
      'privacyStatus',
      'unshield',
      'privacyStatus',
      'unshield',
      'awaitDelivery:out',
    ]);
    assert.deepEqual(route.required, [5, 5], 'each withdrawal asks for the minimum the route waited for');
    assert.deepEqual(statuses(route), ['1:BRIDGING_IN', '2:RECEIVED_ON_HUB', '3:SHIELDED', '4:UNSHIELD_SENT', '5:BRIDGING_OUT', '6:COMPLETED']);
    const recordTo = process.env.RECORD_STUB_HISTORY;
    if (recordTo) writeFileSync(recordTo, proto.temporal.api.history.v1.History.encode(await handle.fetchHistory()).finish());
  });

  test('the exit lottery: a route withdraws at the moment the privacy watcher drew, in that exit epoch', { timeout: 60_000 }, async () => {
    const EPOCH_S = 3;
    const epochMs = EPOCH_S * 1000;
    const plans = [0, 1].map((i) =>
      routePlan(nextRouteId(`lottery-${i}`), {
        privacy: { exitEpochSeconds: EPOCH_S, minAnonymitySet: 3, maxWaitSeconds: 600, pollSeconds: 1, reviewTimeoutSeconds: 0 },
      }),
    );
    const routes = plans.map((plan) => script(plan.routeId));
    const handles = await Promise.all(plans.map((plan) => start(plan)));
    await Promise.all(handles.map((handle) => handle.signal(depositObservedSignal, { balance: AMOUNT.toString(), blockNumber: 7 })));
    await Promise.all(handles.map((handle) => until(handle, (state) => state.step === 'privacy-wait')));
    // The watcher drew both routes for the next epoch, at moments of their own; one is told its gate opened at its longest wait.
    // Two seconds ahead at least: under load (the whole-stack tests beside this file) a signal can take a second to act on,
    // and a draw whose moment passed before the route slept on it would not test the sleep.
    const epochStartsAt = Math.ceil((Date.now() + 2_000) / epochMs) * epochMs;
    const draws: ExitDraw[] = [
      { at: epochStartsAt + 400, epochStartsAt, epochSeconds: EPOCH_S, gate: 'set-reached' },
      { at: epochStartsAt + 2_100, epochStartsAt, epochSeconds: EPOCH_S, gate: 'max-wait' },
    ];
    await Promise.all(handles.map((handle, i) => handle.signal(privacyObservedSignal, { review: 'approved', anonymitySet: 3, exit: draws[i]! })));
    assert.deepEqual(await Promise.all(handles.map((handle) => handle.result())), ['COMPLETED', 'COMPLETED']);
    for (const [i, route] of routes.entries()) {
      const unshield = route.times.find((t) => t.call === 'unshield')!;
      assert.deepEqual(unshield.exitEpoch, { startsAt: epochStartsAt, seconds: EPOCH_S }, 'the withdrawal is told the epoch it was drawn for');
      assert.ok(
        unshield.at >= draws[i]!.at && unshield.at < draws[i]!.at + 2_500,
        `withdrawal at ${unshield.at - epochStartsAt} ms, drawn for ${draws[i]!.at - epochStartsAt}`,
      );
      // Read from the history: the timer the route slept on fires at the drawn moment.
      const slept = await drawnMoment(handles[i]!, epochStartsAt);
      assert.ok(Math.abs(slept - (draws[i]!.at - epochStartsAt)) <= 20, `slept until ${slept} ms into the epoch`);
    }
    assert.deepEqual(
      routes.map((route) => route.required),
      [[3], [1]],
      'a route whose gate opened at its longest wait asks for no minimum',
    );
    const recordTo = process.env.RECORD_STUB_LOTTERY_HISTORY;
    if (recordTo) writeFileSync(recordTo, proto.temporal.api.history.v1.History.encode(await handles[0]!.fetchHistory()).finish());
  });

  test('a withdrawal whose exit epoch passed sends nothing and waits for a new draw; a draw for that epoch again is spent', { timeout: 60_000 }, async () => {
    const EPOCH_S = 3;
    const epochMs = EPOCH_S * 1000;
    const plan = routePlan(nextRouteId('lottery-late'), {
      privacy: { exitEpochSeconds: EPOCH_S, minAnonymitySet: 2, maxWaitSeconds: 600, pollSeconds: 1, reviewTimeoutSeconds: 0 },
    });
    const route = script(plan.routeId, { epochsPassed: 1 });
    const handle = await start(plan);
    await handle.signal(depositObservedSignal, { balance: AMOUNT.toString(), blockNumber: 7 });
    await until(handle, (state) => state.step === 'privacy-wait');
    const first = Math.ceil((Date.now() + 1_500) / epochMs) * epochMs;
    const draw = (epochStartsAt: number): ExitDraw => ({ at: epochStartsAt + 100, epochStartsAt, epochSeconds: EPOCH_S, gate: 'set-reached' });
    await handle.signal(privacyObservedSignal, { review: 'approved', anonymitySet: 2, exit: draw(first) });
    await eventually(() => route.calls.filter((c) => c === 'unshield').length === 1, 'the first withdrawal');
    // The same draw again (a new watcher run tells every route once more): the route does not withdraw on it.
    await handle.signal(privacyObservedSignal, { review: 'approved', anonymitySet: 2, exit: draw(first) });
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    assert.equal(route.calls.filter((c) => c === 'unshield').length, 1, 'a draw for the deferred epoch is spent');
    await handle.signal(privacyObservedSignal, { review: 'approved', anonymitySet: 2, exit: draw(first + 2 * epochMs) });
    assert.equal(await handle.result(), 'COMPLETED');
    assert.deepEqual(
      route.times.filter((t) => t.call === 'unshield').map((t) => t.exitEpoch?.startsAt),
      [first, first + 2 * epochMs],
    );
    assert.deepEqual(statuses(route), ['1:BRIDGING_IN', '2:RECEIVED_ON_HUB', '3:SHIELDED', '4:UNSHIELD_SENT', '5:BRIDGING_OUT', '6:COMPLETED']);
  });

  test('a route that waited its longest leaves with what it has: the withdrawal asks for no minimum', { timeout: 30_000 }, async () => {
    const plan = routePlan(nextRouteId('maxwait'), {
      privacy: { delaySeconds: 0, minAnonymitySet: 6, maxWaitSeconds: 1, pollSeconds: 1, reviewTimeoutSeconds: 0 },
    });
    const route = script(plan.routeId);
    const handle = await start(plan);
    await handle.signal(depositObservedSignal, { balance: AMOUNT.toString(), blockNumber: 7 });
    assert.equal(await handle.result(), 'COMPLETED');
    assert.deepEqual(route.required, [1]);
  });
});

/**
 * When, in ms after `epochStartsAt`, the route's workflow set its withdrawal to happen: the timer it slept on last
 * before the unshield activity, from the time of the workflow task that started it (the workflow's Date.now()).
 */
async function drawnMoment(handle: { fetchHistory(): Promise<proto.temporal.api.history.v1.IHistory> }, epochStartsAt: number): Promise<number> {
  const { EventType } = proto.temporal.api.enums.v1;
  const ms = (t: { seconds?: unknown; nanos?: number | null } | null | undefined) => Number(String(t?.seconds ?? 0)) * 1000 + Math.round((t?.nanos ?? 0) / 1e6);
  let taskStartedAt = 0;
  let firesAt: number | undefined;
  for (const event of (await handle.fetchHistory()).events ?? []) {
    if (event.eventType === EventType.EVENT_TYPE_WORKFLOW_TASK_STARTED) taskStartedAt = ms(event.eventTime);
    else if (event.eventType === EventType.EVENT_TYPE_TIMER_STARTED) firesAt = taskStartedAt + ms(event.timerStartedEventAttributes?.startToFireTimeout);
    else if (event.activityTaskScheduledEventAttributes?.activityType?.name === 'unshield') break;
  }
  assert.ok(firesAt !== undefined, 'the route slept until its moment');
  return firesAt - epochStartsAt;
}
