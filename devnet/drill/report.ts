/**
 * The drill's report, computed from its event log alone (no clock, no I/O): what runDrill returns. A drill that
 * stopped at a failed step reports its workers, restarts and problems so far, but no transfers, kills or pool.
 */
import { type DrillEvent, type DrillEventOf, eventsOf, lostActivities, type TimedSpan } from './events.ts';
import type { DrillReport, TransferOutcome, WorkerLife } from './types.ts';

/** Milliseconds as seconds with one decimal, as every figure of the report. */
export const seconds = (ms: number) => Math.round(ms / 100) / 10;

export function drillReport(events: readonly DrillEvent[]): DrillReport {
  const [started] = eventsOf(events, 'drill-started');
  const [ended] = eventsOf(events, 'drill-ended');
  if (!started || !ended) throw new Error('a drill event log starts with drill-started and ends with drill-ended');
  const [failure] = eventsOf(events, 'step-failed');
  const [stackUp] = eventsOf(events, 'stack-started');
  const workers = workerLives(events);
  const transfers = failure ? [] : eventsOf(events, 'transfer-checked').map((e) => e.outcome);
  const [counted] = eventsOf(events, 'pool-counted');
  const pool = { deposits: counted?.deposits ?? 0, withdrawals: counted?.withdrawals ?? 0 };
  const problems = [
    ...eventsOf(events, 'problem').map((e) => e.text),
    ...(failure ? [failure.error] : verdictProblems(eventsOf(events, 'transfer-created').length, transfers, pool)),
  ];
  return {
    bridge: started.bridge,
    dataDir: started.dataDir,
    transfers,
    workers,
    restarts: eventsOf(events, 'server-restarted').map((e) => e.restart),
    kills: failure ? [] : killsPerPoint(started.plan, workers),
    pool: failure ? { deposits: 0, withdrawals: 0 } : pool,
    attempts: {
      most: Math.max(0, ...eventsOf(events, 'activity-lost').map((e) => e.attempt)),
      stepMaxAttempts: stackUp?.stepMaxAttempts ?? 0,
    },
    seconds: {
      stack: seconds(stackUp?.tookMs ?? 0),
      crashes: spanSeconds(events, 'crashes'),
      finish: spanSeconds(events, 'finish'),
      total: seconds(ended.at - started.at),
    },
    problems,
    passed: problems.length === 0,
  };
}

/** The checks of a drill that ran to its end: as many pool deposits and withdrawals as transfers, each transfer exact. */
function verdictProblems(created: number, transfers: TransferOutcome[], pool: DrillReport['pool']): string[] {
  const problems: string[] = [];
  if (pool.deposits !== created) problems.push(`the pool saw ${pool.deposits} deposits for ${created} transfers`);
  if (pool.withdrawals !== created) problems.push(`the Entrypoint relayed ${pool.withdrawals} withdrawals for ${created} transfers`);
  for (const t of transfers) for (const p of t.problems) problems.push(`${t.routeId}: ${p}`);
  if (created === 0) problems.push('the plan created no transfers');
  return problems;
}

/** From the first start to the last finish of the steps timed so; 0 when one of them failed or none ran. */
function spanSeconds(events: readonly DrillEvent[], span: TimedSpan): number {
  const timed = events.filter(
    (e): e is DrillEventOf<'step-started' | 'step-finished' | 'step-failed'> =>
      (e.type === 'step-started' || e.type === 'step-finished' || e.type === 'step-failed') && e.timed === span,
  );
  const first = timed.find((e) => e.type === 'step-started');
  const last = timed.filter((e) => e.type === 'step-finished').at(-1);
  if (!first || !last || timed.some((e) => e.type === 'step-failed')) return 0;
  return seconds(last.at - first.at);
}

function workerLives(events: readonly DrillEvent[]): WorkerLife[] {
  const ready = eventsOf(events, 'worker-ready');
  const ended = eventsOf(events, 'worker-ended');
  const lost = eventsOf(events, 'activity-lost');
  const recoveryIsFinal = eventsOf(events, 'workers-finished').length > 0;
  return eventsOf(events, 'worker-spawned').map((spawned) => {
    const readyAt = ready.find((e) => e.worker === spawned.worker)?.at;
    const end = ended.find((e) => e.worker === spawned.worker);
    return {
      index: spawned.worker,
      role: spawned.role,
      pid: spawned.pid,
      bootSeconds: readyAt === undefined ? null : seconds(readyAt - spawned.at),
      end: end?.end ?? 'exited',
      lifeSeconds: end ? seconds(end.at - spawned.at) : 0,
      interrupted: lost.filter((e) => e.worker === spawned.worker).map((e) => ({ routeId: e.routeId, activityType: e.activityType, attempt: e.attempt })),
      recovery: recoveryIsFinal ? recoveryOf(events, spawned, end?.at ?? Number.POSITIVE_INFINITY) : null,
      logFile: spawned.logFile,
    };
  });
}

/**
 * What a worker picked up: the activities lost with earlier workers and still outstanding at its spawn, and when
 * they completed while it ran (a completion up to 1 s after its end still counts: the follower polls twice a second).
 */
function recoveryOf(events: readonly DrillEvent[], spawned: DrillEventOf<'worker-spawned'>, endedAt: number): WorkerLife['recovery'] {
  const outstanding = lostActivities(events).filter((x) => x.worker < spawned.worker && (x.completedAt === null || x.completedAt > spawned.at));
  if (outstanding.length === 0) return null;
  const done = outstanding.flatMap((x) => (x.completedAt !== null && x.completedAt <= endedAt + 1000 ? [x.completedAt - spawned.at] : []));
  return {
    outstanding: outstanding.length,
    completed: done.length,
    first: done.length ? seconds(Math.min(...done)) : null,
    all: done.length === outstanding.length ? seconds(Math.max(...done)) : null,
  };
}

/** Crash points in plan order with the workers killed there and the workers that ran with them. */
function killsPerPoint(plan: DrillEventOf<'drill-started'>['plan'], workers: WorkerLife[]): DrillReport['kills'] {
  const kills = new Map<string, { kills: number; tries: number }>();
  for (const step of plan) if (step.kind === 'crash' && !kills.has(step.point)) kills.set(step.point, { kills: 0, tries: 0 });
  for (const life of workers) {
    const entry = kills.get(life.role);
    if (!entry) continue;
    entry.tries += 1;
    if (life.end === 'hit') entry.kills += 1;
  }
  return [...kills].map(([point, k]) => ({ point, ...k }));
}
