/** The drill's worker processes: the production worker (devnet/worker.ts), each in a process of its own. */
import { spawn } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { type DrillContext, isRunning, type WorkerProcess } from './context.ts';
import { type DrillEventOf, eventsOf, readyAt } from './events.ts';
import { recordLostActivities } from './lostActivities.ts';
import { seconds } from './report.ts';
import { DrillError, type WorkerLife } from './types.ts';
import { sleep } from './waiting.ts';

const repoRoot = fileURLToPath(new URL('../..', import.meta.url));

/** Starts a worker (with DRILL_CRASH_AT=crashAt when given): its output goes to its own log file. */
export function spawnWorker(ctx: DrillContext, role: string, crashAt?: string): WorkerProcess {
  const index = eventsOf(ctx.events.events, 'worker-spawned').length + 1;
  const logFile = path.join(ctx.logDir, `worker-${String(index).padStart(2, '0')}.log`);
  const out = createWriteStream(logFile, { flags: 'a' });
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    ...ctx.workerEnv,
    DATA_DIR: ctx.dataDir,
    WORKER_HTTP_PORT: String(ctx.ports.workerHttp),
    TEMPORAL_METRICS_PORT: '0',
    LOG_LEVEL: 'info',
  };
  delete env.DRILL_CRASH_AT;
  if (crashAt) env.DRILL_CRASH_AT = crashAt;
  const child = spawn(process.execPath, ['--import', path.join(repoRoot, 'src/loader/register.mjs'), path.join(repoRoot, 'devnet/worker.ts')], {
    cwd: repoRoot,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  if (child.pid === undefined) throw new DrillError('the worker process could not be started');
  const worker: WorkerProcess = {
    index,
    role,
    pid: child.pid,
    logFile,
    child,
    spawnedAt: Date.now(),
    hitPoint: null,
    stderrTail: '',
    exited: new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal }))),
  };
  ctx.events.append({ type: 'worker-spawned', at: worker.spawnedAt, worker: index, role, pid: child.pid, logFile });
  child.stdout?.pipe(out, { end: false });
  child.stderr?.on('data', (chunk: Buffer) => {
    out.write(chunk);
    worker.stderrTail = (worker.stderrTail + chunk.toString()).slice(-2000);
    const hit = /drill: killing the worker at (\S+)/.exec(worker.stderrTail);
    if (hit) worker.hitPoint = hit[1] ?? null;
  });
  void worker.exited.then(() => setTimeout(() => out.end(), 200));
  void watchReadiness(ctx, worker);
  return worker;
}

/** Records when the worker's /readyz first answers 200 (polled while it runs). */
async function watchReadiness(ctx: DrillContext, worker: WorkerProcess): Promise<void> {
  const readyz = `http://127.0.0.1:${ctx.ports.workerHttp}/readyz`;
  while (isRunning(worker)) {
    const ok = await fetch(readyz, { signal: AbortSignal.timeout(2000) }).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) {
      ctx.events.append({ type: 'worker-ready', worker: worker.index });
      return;
    }
    await sleep(200);
  }
}

/** Seconds from the worker's spawn until its /readyz answered 200 (null: not yet). */
export function bootSeconds(ctx: DrillContext, worker: WorkerProcess): number | null {
  const at = readyAt(ctx.events.events, worker.index);
  return at === null ? null : seconds(at - worker.spawnedAt);
}

export async function waitReady(ctx: DrillContext, worker: WorkerProcess, limitMs: number): Promise<void> {
  const deadline = Date.now() + limitMs;
  while (readyAt(ctx.events.events, worker.index) === null) {
    if (!isRunning(worker)) throw new DrillError(`worker ${worker.index} exited before it was ready: ${worker.stderrTail.trim().slice(-600)}`);
    if (Date.now() > deadline) throw new DrillError(`worker ${worker.index} was not ready within ${limitMs / 1000} s (see ${worker.logFile})`);
    await sleep(200);
  }
}

/** SIGKILL (the drill's own kill, not a crash point) and wait for the exit. */
export async function killWorker(worker: WorkerProcess): Promise<void> {
  if (isRunning(worker)) worker.child.kill('SIGKILL');
  await worker.exited;
}

/** Records how the (dead) worker ended and, unless it was stopped cleanly, the activities lost with it. */
export async function recordWorkerEnd(
  ctx: DrillContext,
  worker: WorkerProcess,
  end: WorkerLife['end'],
): Promise<{ lifeSeconds: number; lost: DrillEventOf<'activity-lost'>[] }> {
  const endedAt = Date.now();
  ctx.events.append({ type: 'worker-ended', at: endedAt, worker: worker.index, end });
  const lost = end === 'stopped' ? [] : await recordLostActivities(ctx, worker);
  return { lifeSeconds: seconds(endedAt - worker.spawnedAt), lost };
}
