/**
 * The drill as the runner executes it (drillSteps): the stack, the caller's plan, a clean finish and the checks.
 * Each step does one thing to the stack or its workers and records what it saw in the event log.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { createPublicClient, createWalletClient, http, type PublicClient } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { createLogger } from '../../src/logger.ts';
import type { ChainRole } from '../manifest.ts';
import { startLocalStack } from '../stack.ts';
import { WORKER_ENV_FILE } from '../stackInfo.ts';
import { checkTransfers, countPool } from './checks.ts';
import { type DrillContext, isRunning, stackOf, stopIfAborted, type WorkerProcess } from './context.ts';
import { createdTransfers, type TransferStatus } from './events.ts';
import { followLostActivities } from './lostActivities.ts';
import { seconds } from './report.ts';
import type { Step } from './runner.ts';
import { restartServer } from './servers.ts';
import { createAndFundTransfers, progressMark, transferStatuses } from './transfers.ts';
import { DrillError, type DrillStep, type ServerRestart } from './types.ts';
import { answers200, sleep, untilTrue, within } from './waiting.ts';
import { bootSeconds, killWorker, recordWorkerEnd, spawnWorker, waitReady } from './workers.ts';

/** The caller's plan between the stack's start and the finish; each interruption of the plan is timed as a crash step. */
export function drillSteps(plan: DrillStep[]): Step[] {
  return [
    { name: 'start the local stack', run: startStack },
    { name: 'open the chains', run: openChains },
    { name: 'follow the activities lost with killed workers', run: startFollowing },
    ...plan.map((step, i) => stepOfPlan(step, plan.slice(i + 1))),
    { name: 'finish with a clean worker', timed: 'finish', interruptible: true, run: finishWithCleanWorker },
    { name: 'stop the last worker', run: stopLastWorker },
    { name: 'check every transfer on the chains and in the ledger', run: checkTransfers },
    { name: "count the pool's deposits and withdrawals", run: countPool },
  ];
}

function stepOfPlan(step: DrillStep, later: DrillStep[]): Step {
  const common = { timed: 'crashes', interruptible: true } as const;
  switch (step.kind) {
    case 'create':
      return { ...common, name: `create and fund ${step.count} transfers`, run: (ctx) => createAndFundTransfers(ctx, step.count) };
    case 'crash':
      return { ...common, name: `crash a worker at ${step.point}`, run: (ctx) => crashAt(ctx, step.point) };
    case 'restart': {
      // A worker that lived through the restart finishes the transfers, unless a later step interrupts again.
      const killWorkerAfter = later.some((next) => next.kind !== 'create');
      return { ...common, name: `restart ${step.server} under a worker`, run: (ctx) => restartUnderWorker(ctx, step.server, killWorkerAfter) };
    }
  }
}

async function startStack(ctx: DrillContext): Promise<void> {
  const { bridge, stepMaxAttempts, log } = ctx.settings;
  const startedAt = Date.now();
  ctx.stack = await startLocalStack({
    dataDir: ctx.dataDir,
    ports: ctx.ports,
    worker: 'external',
    // RATE_LIMIT_PER_MINUTE=0: the drill creates its transfers from one address, faster than the abuse limits allow.
    env: { STEP_MAX_ATTEMPTS: String(stepMaxAttempts), RATE_LIMIT_PER_MINUTE: '0', ...(bridge === 'cctp' && { BRIDGE_PROVIDER: 'cctp' }) },
    pollIntervalMs: 200,
    logger: createLogger({ level: 'info', write: (line) => ctx.stackLog.write(`${line}\n`) }),
  });
  const tookMs = Date.now() - startedAt;
  ctx.events.append({ type: 'stack-started', tookMs, stepMaxAttempts: ctx.stack.config.STEP_MAX_ATTEMPTS });
  log(`local stack up in ${seconds(tookMs)} s (${bridge === 'cctp' ? 'burn-and-mint, CCTP' : 'deposit-address, Relay'})`);
}

async function openChains(ctx: DrillContext): Promise<void> {
  const { manifest } = stackOf(ctx);
  const chain = (role: ChainRole) => {
    const found = manifest.chains.find((c) => c.role === role);
    if (!found) throw new DrillError(`the devnet has no ${role} chain`);
    return found;
  };
  const token = (role: ChainRole, symbol: string) => {
    const found = chain(role).tokens.find((t) => t.symbol === symbol);
    if (!found) throw new DrillError(`the devnet has no ${symbol} on its ${role} chain`);
    return found.address;
  };
  const clients = new Map<ChainRole, PublicClient>();
  const client = (role: ChainRole) => {
    let found = clients.get(role);
    if (!found) clients.set(role, (found = createPublicClient({ transport: http(chain(role).rpcUrl), pollingInterval: 100 }) as PublicClient));
    return found;
  };
  const hubStartBlock = await client('hub').getBlockNumber();
  ctx.workerEnv = JSON.parse(readFileSync(path.join(ctx.dataDir, WORKER_ENV_FILE), 'utf8')) as Record<string, string>;
  const faucet = createWalletClient({ account: privateKeyToAccount(manifest.faucetPrivateKey), transport: http(chain('source').rpcUrl) });
  ctx.chains = { chain, token, client, faucet, hubStartBlock };
}

async function startFollowing(ctx: DrillContext): Promise<void> {
  ctx.follower = followLostActivities(ctx);
}

/** Runs a worker with DRILL_CRASH_AT=point until it dies there; after the point timeout the point counts as not hit, and the worker is killed. */
async function crashAt(ctx: DrillContext, point: string): Promise<void> {
  const { pointTimeoutMs, signal, log } = ctx.settings;
  const worker = spawnWorker(ctx, point, point);
  ctx.worker = worker;
  const exit = await within(worker.exited, pointTimeoutMs, signal);
  stopIfAborted(ctx);
  if (exit === null) {
    await killWorker(worker);
    const { lost } = await recordWorkerEnd(ctx, worker, 'not-hit');
    log(`worker ${worker.index}: ${point} not hit within ${pointTimeoutMs / 1000} s; killed it (${lost.length} activities lost)`);
  } else if (exit.signal === 'SIGKILL' && worker.hitPoint === point) {
    const { lifeSeconds, lost } = await recordWorkerEnd(ctx, worker, 'hit');
    const lostTypes = lost.map((x) => x.activityType).join(', ') || 'none';
    log(`worker ${worker.index}: killed at ${point} after ${lifeSeconds} s (boot ${bootSeconds(ctx, worker) ?? '-'} s; activities lost: ${lostTypes})`);
  } else {
    await recordWorkerEnd(ctx, worker, 'exited');
    throw new DrillError(
      `worker ${worker.index} (${point}) exited by itself (code ${exit.code}, signal ${exit.signal}): ${worker.stderrTail.trim().slice(-800)}`,
    );
  }
  ctx.worker = undefined;
}

/** Restarts the server under a clean worker that is already running transfers, and measures how everything comes back. */
async function restartUnderWorker(ctx: DrillContext, server: ServerRestart['server'], killWorkerAfter: boolean): Promise<void> {
  const { signal, log } = ctx.settings;
  const worker = spawnWorker(ctx, `${server} restart`);
  ctx.worker = worker;
  await waitReady(ctx, worker, 120_000);
  const before = await progressMark(ctx);
  await untilTrue(async () => (await progressMark(ctx)) !== before, 20_000, { signal });
  log(`restarting ${server} under worker ${worker.index}`);
  const { downAt, upAt } = await restartServer(ctx, server);
  const restart = await measureComeback(ctx, worker, server, downAt, upAt);
  ctx.events.append({ type: 'server-restarted', restart });
  log(
    `${server} was down ${restart.downSeconds} s; API ready after ${restart.apiReadySeconds ?? 'never'} s, worker ready after ${restart.workerReadySeconds ?? 'never'} s, ` +
      `next progress after ${restart.progressSeconds ?? 'none'} s${restart.workerSurvived ? '' : '; the worker died'}`,
  );
  if (restart.apiReadySeconds === null) ctx.events.append({ type: 'problem', text: `the API did not answer /readyz within 60 s of the ${server} restart` });
  if (!restart.workerSurvived)
    ctx.events.append({ type: 'problem', text: `the worker exited during the ${server} restart: ${worker.stderrTail.trim().slice(-400)}` });
  if (killWorkerAfter || !restart.workerSurvived) {
    await killWorker(worker);
    await recordWorkerEnd(ctx, worker, restart.workerSurvived ? 'killed' : 'exited');
    ctx.worker = undefined;
  }
}

/** Seconds from the server being back until the API's and the worker's /readyz answer 200 and a transfer moves again. */
async function measureComeback(
  ctx: DrillContext,
  worker: WorkerProcess,
  server: ServerRestart['server'],
  downAt: number,
  upAt: number,
): Promise<ServerRestart> {
  const signal = ctx.settings.signal;
  const alive = () => isRunning(worker);
  const mark = await progressMark(ctx);
  const moved = async () => {
    const now = await progressMark(ctx);
    return now !== null && now !== mark;
  };
  const [apiReadyAt, workerReadyAt, progressAt] = await Promise.all([
    untilTrue(answers200(`${stackOf(ctx).apiUrl}/readyz`), 60_000, { signal }),
    untilTrue(answers200(`http://127.0.0.1:${ctx.ports.workerHttp}/readyz`), 60_000, { stillValid: alive, signal }),
    untilTrue(moved, 90_000, { stillValid: alive, signal }),
  ]);
  const sinceUp = (at: number | null) => (at === null ? null : seconds(at - upAt));
  return {
    server,
    downSeconds: seconds(upAt - downAt),
    apiReadySeconds: sinceUp(apiReadyAt),
    workerReadySeconds: sinceUp(workerReadyAt),
    progressSeconds: sinceUp(progressAt),
    workerSurvived: alive(),
  };
}

/** A worker without crash points (the one that lived through a restart, or a new one) runs until every transfer is finished. */
async function finishWithCleanWorker(ctx: DrillContext): Promise<void> {
  const { finishTimeoutMs, log } = ctx.settings;
  const startedAt = Date.now();
  ctx.worker ??= spawnWorker(ctx, 'clean, to finish');
  const worker = ctx.worker;
  log(`worker ${worker.index} runs without crash points until every transfer is finished`);
  const count = createdTransfers(ctx.events.events).length;
  let notedAt = 0;
  let statuses: TransferStatus[];
  for (;;) {
    stopIfAborted(ctx);
    statuses = await transferStatuses(ctx);
    const finished = statuses.filter((v) => v.status === 'COMPLETED' || v.status === 'FAILED' || v.needsAttention).length;
    if (Date.now() - notedAt > 15_000 || finished === count) {
      log(`${seconds(Date.now() - startedAt)} s: ${statusCounts(statuses)}`);
      notedAt = Date.now();
    }
    if (finished === count) break;
    if (!isRunning(worker)) throw new DrillError(`the last worker exited: ${worker.stderrTail.trim().slice(-800)}`);
    if (Date.now() - startedAt > finishTimeoutMs) {
      ctx.events.append({ type: 'problem', text: `not every transfer finished within ${finishTimeoutMs / 1000} s of the last worker's start` });
      break;
    }
    await sleep(1000);
  }
  ctx.events.append({ type: 'transfer-statuses', statuses });
}

/** "COMPLETED 3, SHIELDED (parked) 1" */
function statusCounts(statuses: TransferStatus[]): string {
  const counts = new Map<string, number>();
  for (const v of statuses) {
    const key = v.needsAttention ? `${v.status} (parked)` : v.status;
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return [...counts].map(([key, n]) => `${key} ${n}`).join(', ');
}

/** Stops the following of lost activities, then the last worker (SIGTERM; SIGKILL after 30 s). */
async function stopLastWorker(ctx: DrillContext): Promise<void> {
  const worker = ctx.worker;
  if (!worker) throw new DrillError('no worker finished the transfers');
  // Lets the follower see the lost activities that completed meanwhile.
  await sleep(600);
  await ctx.follower?.stop();
  const stopAskedAt = Date.now();
  worker.child.kill('SIGTERM');
  if ((await within(worker.exited, 30_000)) === null) {
    ctx.events.append({ type: 'problem', text: 'the last worker did not stop within 30 s of SIGTERM' });
    await killWorker(worker);
  }
  await recordWorkerEnd(ctx, worker, 'stopped');
  ctx.settings.log(`worker ${worker.index} stopped ${seconds(Date.now() - stopAskedAt)} s after SIGTERM`);
  ctx.worker = undefined;
  ctx.events.append({ type: 'workers-finished' });
}
