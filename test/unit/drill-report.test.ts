import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { DrillEvent, TimedSpan } from '../../devnet/drill/events.ts';
import { drillReport } from '../../devnet/drill/report.ts';
import type { DrillReport, DrillStep, TransferOutcome } from '../../devnet/drill/types.ts';

// Event logs as the drill's runner writes them, and the report each must give. Times are seconds after the drill began.
const began = Date.UTC(2026, 10, 27);
const at = (s: number) => began + s * 1000;

const plan: DrillStep[] = [
  { kind: 'create', count: 1 },
  { kind: 'crash', point: 'tx:signed' },
  { kind: 'crash', point: 'after:unshield' },
  { kind: 'restart', server: 'temporal' },
];

const drillStarted = (stepPlan: DrillStep[] = plan): DrillEvent => ({
  type: 'drill-started',
  at: 0 + began,
  bridge: 'relay',
  dataDir: '/tmp/drill-x',
  plan: stepPlan,
});
const drillEnded = (s: number): DrillEvent => ({ type: 'drill-ended', at: at(s) });
const stepRan = (step: string, from: number, to: number, timed?: TimedSpan, inside: DrillEvent[] = []): DrillEvent[] => [
  { type: 'step-started', at: at(from), step, timed },
  ...inside,
  { type: 'step-finished', at: at(to), step, timed },
];
const stepFailed = (step: string, from: number, to: number, error: string, timed?: TimedSpan, inside: DrillEvent[] = []): DrillEvent[] => [
  { type: 'step-started', at: at(from), step, timed },
  ...inside,
  { type: 'step-failed', at: at(to), step, timed, error },
];
const spawned = (worker: number, role: string, s: number): DrillEvent => ({
  type: 'worker-spawned',
  at: at(s),
  worker,
  role,
  pid: 1000 + worker,
  logFile: `/tmp/drill-x/drill-logs/worker-0${worker}.log`,
});
const ready = (worker: number, s: number): DrillEvent => ({ type: 'worker-ready', at: at(s), worker });
const ended = (worker: number, end: 'hit' | 'not-hit' | 'killed' | 'stopped' | 'exited', s: number): DrillEvent => ({
  type: 'worker-ended',
  at: at(s),
  worker,
  end,
});
const lost = (worker: number, activityId: string, activityType: string, attempt: number, s: number): DrillEvent => ({
  type: 'activity-lost',
  at: at(s),
  worker,
  routeId: 'rt_1',
  activityId,
  activityType,
  attempt,
});
const completed = (activityId: string, s: number): DrillEvent => ({ type: 'activity-completed', at: at(s), routeId: 'rt_1', activityId });
const problem = (text: string, s: number): DrillEvent => ({ type: 'problem', at: at(s), text });
const created = (routeId: string, s: number): DrillEvent => ({
  type: 'transfer-created',
  at: at(s),
  transfer: {
    routeId,
    statusToken: 'token',
    route: 'USDC → USDC',
    amount: 20_000_000n,
    quoted: 18_600_000n,
    depositAddress: '0x00000000000000000000000000000000000000d0',
    recipient: '0x00000000000000000000000000000000000000e0',
    destRole: 'destination',
    destSymbol: 'USDC',
    exact: true,
  },
});
const outcome = (routeId: string, problems: string[] = []): TransferOutcome => ({
  routeId,
  route: 'USDC → USDC',
  status: 'COMPLETED',
  error: null,
  amount: 20_000_000n,
  quoted: 18_600_000n,
  exact: true,
  received: 18_600_000n,
  payouts: 1,
  depositSends: 1,
  depositSent: 20_000_000n,
  poolDeposits: 1,
  withdrawalFound: true,
  unminedIntents: 0,
  problems,
});
const temporalRestart = {
  server: 'temporal' as const,
  downSeconds: 1.4,
  apiReadySeconds: 1.9,
  workerReadySeconds: 0,
  progressSeconds: 0.6,
  workerSurvived: true,
};

const stackUp: DrillEvent[] = stepRan('start the local stack', 0.1, 3.2, undefined, [
  { type: 'stack-started', at: at(3.1), tookMs: 3000, stepMaxAttempts: 20 },
]);

/** Up to the restart: one transfer, a kill at each point (the second worker picks up what the first lost), then a Temporal restart. */
const crashes: DrillEvent[] = [
  ...stepRan('create and fund 1 transfers', 4, 6, 'crashes', [created('rt_1', 5)]),
  ...stepRan('crash a worker at tx:signed', 6, 17, 'crashes', [
    spawned(1, 'tx:signed', 6),
    ready(1, 12.5),
    ended(1, 'hit', 16),
    lost(1, 'a1', 'bridgeIn', 1, 17),
  ]),
  ...stepRan('crash a worker at after:unshield', 17, 41, 'crashes', [
    spawned(2, 'after:unshield', 17),
    ready(2, 23),
    completed('a1', 27),
    ended(2, 'hit', 40),
    lost(2, 'a5', 'unshield', 2, 41),
  ]),
  ...stepRan('restart temporal under a worker', 41, 60, 'crashes', [
    spawned(3, 'temporal restart', 41),
    ready(3, 47),
    { type: 'server-restarted', at: at(59), restart: temporalRestart },
  ]),
];

const finish: DrillEvent[] = [
  ...stepRan('finish with a clean worker', 60, 70, 'finish', [completed('a5', 62)]),
  ...stepRan('stop the last worker', 70, 72, undefined, [ended(3, 'stopped', 72), { type: 'workers-finished', at: at(72) }]),
];

const checks = (outcomes: TransferOutcome[], pool = { deposits: outcomes.length, withdrawals: outcomes.length }): DrillEvent[] => [
  ...stepRan('check every transfer on the chains and in the ledger', 72, 75, undefined, [
    ...outcomes.map((o): DrillEvent => ({ type: 'transfer-checked', at: at(74), outcome: o })),
  ]),
  ...stepRan("count the pool's deposits and withdrawals", 75, 76, undefined, [{ type: 'pool-counted', at: at(76), ...pool }]),
];

const workersOfAFullRun: DrillReport['workers'] = [
  {
    index: 1,
    role: 'tx:signed',
    pid: 1001,
    bootSeconds: 6.5,
    end: 'hit',
    lifeSeconds: 10,
    interrupted: [{ routeId: 'rt_1', activityType: 'bridgeIn', attempt: 1 }],
    recovery: null,
    logFile: '/tmp/drill-x/drill-logs/worker-01.log',
  },
  {
    index: 2,
    role: 'after:unshield',
    pid: 1002,
    bootSeconds: 6,
    end: 'hit',
    lifeSeconds: 23,
    interrupted: [{ routeId: 'rt_1', activityType: 'unshield', attempt: 2 }],
    recovery: { outstanding: 1, completed: 1, first: 10, all: 10 },
    logFile: '/tmp/drill-x/drill-logs/worker-02.log',
  },
  {
    index: 3,
    role: 'temporal restart',
    pid: 1003,
    bootSeconds: 6,
    end: 'stopped',
    lifeSeconds: 31,
    interrupted: [],
    recovery: { outstanding: 1, completed: 1, first: 21, all: 21 },
    logFile: '/tmp/drill-x/drill-logs/worker-03.log',
  },
];

/** The activity a1 is lost with worker 1, lost again with worker 2 (killed before it completed), and completes under worker 3. */
const pickedUpLate: DrillEvent[] = [
  drillStarted([
    { kind: 'create', count: 1 },
    { kind: 'crash', point: 'tx:signed' },
    { kind: 'crash', point: 'before:shield' },
    { kind: 'crash', point: 'tx:signed' },
  ]),
  ...stackUp,
  ...stepRan('create and fund 1 transfers', 4, 6, 'crashes', [created('rt_1', 5)]),
  ...stepRan('crash a worker at tx:signed', 6, 17, 'crashes', [
    spawned(1, 'tx:signed', 6),
    ready(1, 12),
    ended(1, 'hit', 16),
    lost(1, 'a1', 'bridgeIn', 1, 17),
  ]),
  ...stepRan('crash a worker at before:shield', 17, 78, 'crashes', [
    spawned(2, 'before:shield', 17),
    ready(2, 24),
    ended(2, 'not-hit', 77),
    lost(2, 'a1', 'bridgeIn', 2, 78),
  ]),
  ...stepRan('crash a worker at tx:signed', 78, 90, 'crashes', [spawned(3, 'tx:signed', 78), completed('a1', 88), ended(3, 'hit', 89)]),
  ...stepRan('finish with a clean worker', 90, 95, 'finish', [spawned(4, 'clean, to finish', 90)]),
  ...stepRan('stop the last worker', 95, 96, undefined, [ended(4, 'stopped', 96), { type: 'workers-finished', at: at(96) }]),
  ...checks([outcome('rt_1')]),
  drillEnded(100),
];

const cases: Array<{ name: string; events: DrillEvent[]; expected: Partial<DrillReport> }> = [
  {
    name: 'a drill that ran to its end: every figure from the log, kills in plan order, passed',
    events: [drillStarted(), ...stackUp, ...crashes, ...finish, ...checks([outcome('rt_1')]), drillEnded(80)],
    expected: {
      bridge: 'relay',
      dataDir: '/tmp/drill-x',
      transfers: [outcome('rt_1')],
      workers: workersOfAFullRun,
      restarts: [temporalRestart],
      kills: [
        { point: 'tx:signed', kills: 1, tries: 1 },
        { point: 'after:unshield', kills: 1, tries: 1 },
      ],
      pool: { deposits: 1, withdrawals: 1 },
      attempts: { most: 2, stepMaxAttempts: 20 },
      seconds: { stack: 3, crashes: 56, finish: 10, total: 80 },
      problems: [],
      passed: true,
    },
  },
  {
    name: 'problems seen on the way come first, then the pool, then each transfer, in that order',
    events: [
      drillStarted(),
      ...stackUp,
      ...crashes,
      problem('the API did not answer /readyz within 60 s of the temporal restart', 59.5),
      ...finish,
      ...checks([outcome('rt_1', ['ended FAILED', '2 token transfers to the recipient (one expected)'])], { deposits: 1, withdrawals: 2 }),
      drillEnded(80),
    ],
    expected: {
      problems: [
        'the API did not answer /readyz within 60 s of the temporal restart',
        'the Entrypoint relayed 2 withdrawals for 1 transfers',
        'rt_1: ended FAILED',
        'rt_1: 2 token transfers to the recipient (one expected)',
      ],
      pool: { deposits: 1, withdrawals: 2 },
      passed: false,
    },
  },
  {
    name: 'a plan that created no transfers fails',
    events: [
      drillStarted([]),
      ...stackUp,
      ...stepRan('finish with a clean worker', 4, 5, 'finish', [spawned(1, 'clean, to finish', 4)]),
      ...stepRan('stop the last worker', 5, 6, undefined, [ended(1, 'stopped', 6), { type: 'workers-finished', at: at(6) }]),
      ...checks([]),
      drillEnded(7),
    ],
    expected: { transfers: [], kills: [], problems: ['the plan created no transfers'], seconds: { stack: 3, crashes: 0, finish: 1, total: 7 }, passed: false },
  },
  {
    name: 'a worker that exited by itself: the failure ends the problems; no transfers, kills or pool; crash steps not timed; no recovery yet',
    events: [
      drillStarted(),
      ...stackUp,
      ...stepRan('create and fund 1 transfers', 4, 6, 'crashes', [created('rt_1', 5)]),
      ...stepRan('crash a worker at tx:signed', 6, 17, 'crashes', [
        spawned(1, 'tx:signed', 6),
        ready(1, 12.5),
        ended(1, 'hit', 16),
        lost(1, 'a1', 'bridgeIn', 1, 17),
      ]),
      ...stepFailed('crash a worker at after:unshield', 17, 20, 'worker 2 (after:unshield) exited by itself (code 1, signal null): boom', 'crashes', [
        spawned(2, 'after:unshield', 17),
        completed('a1', 18),
        ended(2, 'exited', 19),
      ]),
      drillEnded(21),
    ],
    expected: {
      transfers: [],
      kills: [],
      pool: { deposits: 0, withdrawals: 0 },
      restarts: [],
      workers: [
        { ...workersOfAFullRun[0]! },
        {
          index: 2,
          role: 'after:unshield',
          pid: 1002,
          bootSeconds: null,
          end: 'exited',
          lifeSeconds: 2,
          interrupted: [],
          recovery: null,
          logFile: '/tmp/drill-x/drill-logs/worker-02.log',
        },
      ],
      attempts: { most: 1, stepMaxAttempts: 20 },
      seconds: { stack: 3, crashes: 0, finish: 0, total: 21 },
      problems: ['worker 2 (after:unshield) exited by itself (code 1, signal null): boom'],
      passed: false,
    },
  },
  {
    name: 'a failure after every worker ended keeps the recovery figures and the times measured so far',
    events: [
      drillStarted(),
      ...stackUp,
      ...crashes,
      ...finish,
      ...stepFailed('check every transfer on the chains and in the ledger', 72, 73, 'HTTP request failed'),
      drillEnded(74),
    ],
    expected: {
      workers: workersOfAFullRun,
      transfers: [],
      kills: [],
      seconds: { stack: 3, crashes: 56, finish: 10, total: 74 },
      problems: ['HTTP request failed'],
      passed: false,
    },
  },
  {
    name: 'a stack that never came up: no STEP_MAX_ATTEMPTS known, nothing timed',
    events: [drillStarted(), ...stepFailed('start the local stack', 0.1, 2, 'port 7233 is taken'), drillEnded(2.5)],
    expected: {
      workers: [],
      attempts: { most: 0, stepMaxAttempts: 0 },
      seconds: { stack: 0, crashes: 0, finish: 0, total: 2.5 },
      problems: ['port 7233 is taken'],
      passed: false,
    },
  },
  {
    name: 'a point not hit, a worker killed before what it picked up completed, an activity lost twice counted once',
    events: pickedUpLate,
    expected: {
      kills: [
        { point: 'tx:signed', kills: 2, tries: 2 },
        { point: 'before:shield', kills: 0, tries: 1 },
      ],
      attempts: { most: 2, stepMaxAttempts: 20 },
      passed: true,
    },
  },
];

describe('the drill report, computed from the event log', () => {
  for (const { name, events, expected } of cases) {
    test(name, { timeout: 5_000 }, () => {
      const report = drillReport(events);
      for (const [key, value] of Object.entries(expected)) assert.deepEqual(report[key as keyof DrillReport], value, key);
    });
  }

  test('recovery: what each worker picked up of the activities lost before its spawn', { timeout: 5_000 }, () => {
    const recovery = drillReport(pickedUpLate).workers.map((w) => w.recovery);
    // Worker 2 was killed (not hit) before a1 completed; worker 3 saw it complete 10 s after its spawn.
    assert.deepEqual(recovery, [null, { outstanding: 1, completed: 0, first: null, all: null }, { outstanding: 1, completed: 1, first: 10, all: 10 }, null]);
  });

  test('a log without its start or its end is refused', { timeout: 5_000 }, () => {
    assert.throws(() => drillReport([drillStarted()]), /drill-ended/);
    assert.throws(() => drillReport([drillEnded(1)]), /drill-started/);
  });
});
