/**
 * The crash drill (`npm run drill`, and a short form in test/e2e/drill.test.ts): transfers in flight on a real local
 * stack whose worker runs as its own process and is killed with SIGKILL at named crash points
 * (src/temporal/crashPoints.ts: inside the sends of money-moving activities and at step boundaries), with
 * the Temporal server and Postgres restarted mid-flight. At the end every transfer must be COMPLETED with
 * exactly the quoted payout, and the chains must show no second payment. It measures, and asserts nothing
 * about time: kills per point, each worker's boot, the recovery from each restart to the next progress of
 * the transfers the kill interrupted, the reconnection after each server restart, and the total.
 *
 * How it is built (devnet/drill/): the caller's plan becomes a list of named steps (steps.ts) that a small runner
 * executes in order, stopping at the first failure (runner.ts). Steps share only a context of handles
 * (context.ts) and an append-only event log (events.ts); the report is computed from that log alone (report.ts).
 */
import { createWriteStream } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { type DrillContext, type DrillPorts, isRunning } from './drill/context.ts';
import { EventLog } from './drill/events.ts';
import { drillReport } from './drill/report.ts';
import { runSteps } from './drill/runner.ts';
import { drillSteps } from './drill/steps.ts';
import type { DrillOptions, DrillReport } from './drill/types.ts';
import { killWorker } from './drill/workers.ts';
import { freePorts } from './ports.ts';

export { formatDrillReport } from './drill/format.ts';
export { fullPlan, shortPlan } from './drill/plans.ts';
export * from './drill/types.ts';

/** Runs a drill plan on a fresh local stack and returns its report (never throws for a failed check: `passed` says). */
export async function runDrill(opts: DrillOptions): Promise<DrillReport> {
  const began = Date.now();
  const bridge = opts.bridge ?? 'relay';
  const dataDir = await mkdtemp(path.join(tmpdir(), 'private-route-drill-'));
  const logDir = path.join(dataDir, 'drill-logs');
  await mkdir(logDir, { recursive: true });
  const ctx: DrillContext = {
    settings: {
      bridge,
      pointTimeoutMs: opts.pointTimeoutMs ?? 60_000,
      finishTimeoutMs: opts.finishTimeoutMs ?? 600_000,
      stepMaxAttempts: opts.stepMaxAttempts ?? 20,
      log: opts.log ?? ((line: string) => process.stderr.write(`[drill] ${line}\n`)),
      signal: opts.signal,
    },
    dataDir,
    logDir,
    stackLog: createWriteStream(path.join(logDir, 'stack.log'), { flags: 'a' }),
    ports: await drillPorts(),
    events: new EventLog(),
  };
  ctx.events.append({ type: 'drill-started', at: began, bridge, dataDir, plan: opts.plan });
  let passed = false;
  try {
    ctx.settings.log(`data folder ${dataDir} (worker logs in drill-logs/)`);
    await runSteps(drillSteps(opts.plan), ctx);
    ctx.events.append({ type: 'drill-ended' });
    const report = drillReport(ctx.events.events);
    passed = report.passed;
    return report;
  } finally {
    await cleanUp(ctx, passed && !opts.keepDataDir);
  }
}

async function drillPorts(): Promise<DrillPorts> {
  const [api, temporal, temporalUi, postgres, relay, source, hub, destination, iris, asp, workerHttp] = (await freePorts(11)) as [
    number,
    number,
    number,
    number,
    number,
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  return { api, temporal, temporalUi, postgres, relay, source, hub, destination, iris, asp, workerHttp };
}

/** Stops whatever still runs; the data folder is kept when the drill failed or the caller asked to keep it. */
async function cleanUp(ctx: DrillContext, removeDataDir: boolean): Promise<void> {
  void ctx.follower?.stop();
  if (ctx.worker && isRunning(ctx.worker)) await killWorker(ctx.worker);
  await ctx.stack?.stop().catch(() => {});
  await ctx.temporalServer?.stop().catch(() => {});
  await new Promise((resolve) => ctx.stackLog.end(resolve));
  if (removeDataDir) await rm(ctx.dataDir, { recursive: true, force: true });
  else ctx.settings.log(`kept the data folder ${ctx.dataDir} (stack and worker logs in drill-logs/)`);
}
