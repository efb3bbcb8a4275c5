/**
 * The crash drill (`npm run drill`, and a short form in test/drill.test.ts): transfers in flight on a real local
 * stack whose worker runs as its own process and is killed with SIGKILL at named crash points
 * (src/temporal/crashPoints.ts: inside the sends of money-moving activities and at step boundaries), with
 * the Temporal server and Postgres restarted mid-flight. At the end every transfer must be COMPLETED with
 * exactly the quoted payout, and the chains must show no second payment. It measures, and asserts nothing
 * about time: kills per point, each worker's boot, the recovery from each restart to the next progress of
 * the transfers the kill interrupted, the reconnection after each server restart, and the total.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, existsSync, readFileSync, type WriteStream } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { decodePendingActivityState } from '@temporalio/client';
import { eq, inArray, sql } from 'drizzle-orm';
import { createPublicClient, createWalletClient, erc20Abi, getAbiItem, http, type Address, type PublicClient } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { ledgerEntries, transfers, txIntents } from '../src/db/schema.ts';
import { createLogger } from '../src/logger.ts';
import { entrypointAbi, poolAbi } from '../src/providers/privacy-pools/abi.ts';
import { freePorts } from './ports.ts';
import { startLocalPostgres } from './postgres.ts';
import { commandOf, PROCESSES_FILE } from './processes.ts';
import { startLocalStack, type LocalStack } from './stack.ts';
import { WORKER_ENV_FILE } from './stackInfo.ts';
import { readTemporalDevConfig, startTemporalDevServer, type TemporalDevServer } from './temporalServer.ts';

const repoRoot = fileURLToPath(new URL('..', import.meta.url));

/** One step of a drill plan. */
export type DrillStep =
  /** Creates `count` transfers through the API and funds them from the faucet, as senders would. */
  | { kind: 'create'; count: number }
  /** Runs a worker with DRILL_CRASH_AT=point until it dies there (or `pointTimeoutMs` passes: the point was not hit). */
  | { kind: 'crash'; point: string }
  /** Restarts the server under a running worker, and measures how the API and the worker come back. */
  | { kind: 'restart'; server: 'temporal' | 'postgres' };

export interface DrillOptions {
  plan: DrillStep[];
  /** Bridge mode of the stack: relay (deposit-address, default) or cctp (burn-and-mint; one transfer in three pays on the hub). */
  bridge?: 'relay' | 'cctp';
  /** How long a worker with a crash point may run before the point counts as not hit (default 60 s). */
  pointTimeoutMs?: number;
  /**
   * STEP_MAX_ATTEMPTS of the drill's stack (default 20). Each kill costs every activity in flight one attempt of
   * its step, and a drill kills far more often than any real failure would: with the service's default (8) a
   * step killed 8 times in a row parks, by design. The report gives the most attempts one activity used.
   */
  stepMaxAttempts?: number;
  /** How long the last, clean worker may take to finish every transfer (default 10 minutes). */
  finishTimeoutMs?: number;
  /** Progress lines (default: stderr). */
  log?: (line: string) => void;
  /** Keep the data folder (logs, databases, chains) afterwards; it is always kept when the drill fails. */
  keepDataDir?: boolean;
  signal?: AbortSignal;
}

/** One worker process of the drill. */
export interface WorkerLife {
  index: number;
  /** The crash point it ran with, or why it ran without one. */
  role: string;
  pid: number;
  /** Seconds from spawn until its /readyz answered 200 (null: never). */
  bootSeconds: number | null;
  /** How it ended: killed at its point, killed by the drill, stopped, or exited on its own. */
  end: 'hit' | 'not-hit' | 'killed' | 'stopped' | 'exited';
  /** Seconds from spawn to its end. */
  lifeSeconds: number;
  /** Activities of transfers that were running in it when it died (lost with it; Temporal retries them). */
  interrupted: Array<{ routeId: string; activityType: string; attempt: number }>;
  /**
   * What this worker picked up after the kills before it: the activities lost with earlier workers and still
   * outstanding at its spawn, how many of them completed while it ran, and the seconds from its spawn until
   * the first and the last of them completed (all: null when it was killed before every one completed).
   * Null when nothing was outstanding.
   */
  recovery: { outstanding: number; completed: number; first: number | null; all: number | null } | null;
  logFile: string;
}

export interface ServerRestart {
  server: 'temporal' | 'postgres';
  /** Seconds the server was down (stop begun → accepting connections again). */
  downSeconds: number;
  /** Seconds from the server being back until the API's /readyz answered 200 (null: not within the limit). */
  apiReadySeconds: number | null;
  /** Seconds from the server being back until the worker's /readyz answered 200. */
  workerReadySeconds: number | null;
  /** Seconds from the server being back until a transfer made progress (Postgres state changed). */
  progressSeconds: number | null;
  /** The worker lived through the restart (did not exit). */
  workerSurvived: boolean;
}

export interface TransferOutcome {
  routeId: string;
  route: string;
  status: string;
  error: string | null;
  amount: bigint;
  quoted: bigint;
  /**
   * True when the recipient must receive exactly `quoted` (Relay's exact-output order, the direct leg). False for a
   * CCTP payout to another chain: it burns B with B − maxFee ≥ quote, and Circle's unused fee buffer is minted to
   * the recipient too (docs/money.md), so quote ≤ received ≤ B.
   */
  exact: boolean;
  /** The recipient's balance of the destination token at the end (a fresh address: all of it came from us). */
  received: bigint;
  /** Token Transfer logs to the recipient on its chain. */
  payouts: number;
  /** Token Transfer logs out of the deposit address on the source chain, and their sum. */
  depositSends: number;
  depositSent: bigint;
  /** The pool's Deposited events of the route's hub account. */
  poolDeposits: number;
  /** The ledger's withdrawal is one of the Entrypoint's WithdrawalRelayed transactions (and no other route's). */
  withdrawalFound: boolean;
  /** Live intents of the route the chain never mined. */
  unminedIntents: number;
  problems: string[];
}

export interface DrillReport {
  bridge: 'relay' | 'cctp';
  dataDir: string;
  transfers: TransferOutcome[];
  workers: WorkerLife[];
  restarts: ServerRestart[];
  /** Crash points in plan order with the number of workers killed there, and those never hit. */
  kills: Array<{ point: string; kills: number; tries: number }>;
  pool: { deposits: number; withdrawals: number };
  /** The most attempts one lost activity had used when it was lost (each kill costs the activities in flight one), and the step budget. */
  attempts: { most: number; stepMaxAttempts: number };
  seconds: { stack: number; crashes: number; finish: number; total: number };
  problems: string[];
  passed: boolean;
}

/** The full drill's plan: every crash point in order of a transfer's life, Temporal restarted halfway and Postgres at three quarters. */
export function fullPlan(transfers: number, bridge: 'relay' | 'cctp'): DrillStep[] {
  const first = Math.ceil(transfers / 2);
  return [
    { kind: 'create', count: first },
    { kind: 'crash', point: 'before:bridgeIn' },
    { kind: 'crash', point: 'tx:signed' },
    { kind: 'crash', point: 'tx:broadcast' },
    { kind: 'crash', point: 'after:bridgeIn' },
    { kind: 'crash', point: 'after:awaitDelivery' },
    { kind: 'crash', point: 'before:shield' },
    { kind: 'crash', point: 'tx:signed' },
    { kind: 'crash', point: 'tx:broadcast' },
    { kind: 'crash', point: 'after:shield' },
    { kind: 'restart', server: 'temporal' },
    ...(transfers > first ? [{ kind: 'create', count: transfers - first } as const] : []),
    { kind: 'crash', point: 'before:privacyStatus' },
    { kind: 'crash', point: 'tx:signed' },
    { kind: 'crash', point: 'tx:broadcast' },
    { kind: 'crash', point: 'after:privacyStatus' },
    { kind: 'crash', point: 'before:unshield' },
    { kind: 'crash', point: 'tx:signed' },
    { kind: 'crash', point: 'after:unshield' },
    { kind: 'restart', server: 'postgres' },
    ...(bridge === 'cctp'
      ? ([
          { kind: 'crash', point: 'before:bridgeOut' },
          { kind: 'crash', point: 'tx:broadcast' },
          { kind: 'crash', point: 'after:bridgeOut' },
        ] as const)
      : []),
    { kind: 'crash', point: 'before:awaitDelivery' },
    { kind: 'crash', point: 'after:awaitDelivery' },
  ];
}

/** The short form the test suite runs: two transfers, four interruptions. */
export function shortPlan(): DrillStep[] {
  return [
    { kind: 'create', count: 2 },
    { kind: 'crash', point: 'tx:signed' },
    { kind: 'crash', point: 'tx:broadcast' },
    { kind: 'crash', point: 'after:unshield' },
    { kind: 'restart', server: 'temporal' },
  ];
}

/** The drill could not run (the stack, a worker that would not start, a server that would not come back). */
export class DrillError extends Error {
  override name = 'DrillError';
}

interface Created {
  routeId: string;
  /** The creator's token: the drill follows its routes in the full view (the public one moves once an exit epoch). */
  statusToken: string;
  route: string;
  amount: bigint;
  quoted: bigint;
  depositAddress: Address;
  recipient: Address;
  destRole: 'destination' | 'hub';
  destSymbol: string;
  exact: boolean;
}

interface Ports {
  api: number;
  temporal: number;
  temporalUi: number;
  postgres: number;
  relay: number;
  source: number;
  hub: number;
  destination: number;
  iris: number;
  asp: number;
  workerHttp: number;
}

interface RunningWorker {
  life: WorkerLife;
  child: ChildProcess;
  spawnedAt: number;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  hitPoint: string | null;
  stderrTail: string;
}

/** An activity lost with a killed worker, followed until it completes. */
interface Interrupted {
  /** The worker it was first lost with. */
  worker: WorkerLife;
  routeId: string;
  activityId: string;
  activityType: string;
  completedAt: number | null;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The promise's value, or null after `ms` or once `signal` aborts (the timer does not outlive the wait). */
async function within<T>(promise: Promise<T>, ms: number, signal?: AbortSignal): Promise<T | null> {
  let timer: NodeJS.Timeout | undefined;
  let onAbort: (() => void) | undefined;
  const limit = new Promise<null>((resolve) => {
    timer = setTimeout(() => resolve(null), ms);
    onAbort = () => resolve(null);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
  try {
    return await Promise.race([promise, limit]);
  } finally {
    clearTimeout(timer);
    if (onAbort) signal?.removeEventListener('abort', onAbort);
  }
}
const seconds = (ms: number) => Math.round(ms / 100) / 10;
const transferEvent = getAbiItem({ abi: erc20Abi, name: 'Transfer' });
const depositedEvent = getAbiItem({ abi: poolAbi, name: 'Deposited' });
const withdrawalEvent = getAbiItem({ abi: entrypointAbi, name: 'WithdrawalRelayed' });

/** Runs a drill plan on a fresh local stack and returns its report (never throws for a failed check: `passed` says). */
export async function runDrill(opts: DrillOptions): Promise<DrillReport> {
  const log = opts.log ?? ((line: string) => process.stderr.write(`[drill] ${line}\n`));
  const bridge = opts.bridge ?? 'relay';
  const pointTimeoutMs = opts.pointTimeoutMs ?? 60_000;
  const finishTimeoutMs = opts.finishTimeoutMs ?? 600_000;
  const began = Date.now();
  const dataDir = await mkdtemp(path.join(tmpdir(), 'private-route-drill-'));
  const logDir = path.join(dataDir, 'drill-logs');
  await mkdir(logDir, { recursive: true });
  const stackLog = createWriteStream(path.join(logDir, 'stack.log'), { flags: 'a' });
  const [api, temporalPort, temporalUi, postgres, relay, source, hub, destination, iris, asp, workerHttp] = (await freePorts(11)) as [
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
  const ports: Ports = { api, temporal: temporalPort, temporalUi, postgres, relay, source, hub, destination, iris, asp, workerHttp };

  const problems: string[] = [];
  const workers: WorkerLife[] = [];
  const restarts: ServerRestart[] = [];
  const interrupted: Interrupted[] = [];
  const created: Created[] = [];
  let stack: LocalStack | undefined;
  let temporalServer: TemporalDevServer | undefined;
  let current: RunningWorker | undefined;
  let passed = false;
  let report: DrillReport | undefined;
  const timings = { stack: 0, crashes: 0, finish: 0 };
  let following = true;

  const checkAbort = () => {
    if (opts.signal?.aborted) throw new DrillError('the drill was interrupted');
  };

  try {
    log(`data folder ${dataDir} (worker logs in drill-logs/)`);
    const stackStarted = Date.now();
    stack = await startLocalStack({
      dataDir,
      ports,
      worker: 'external',
      // RATE_LIMIT_PER_MINUTE=0: the drill creates its transfers from one address, faster than the abuse limits allow.
      env: { STEP_MAX_ATTEMPTS: String(opts.stepMaxAttempts ?? 20), RATE_LIMIT_PER_MINUTE: '0', ...(bridge === 'cctp' && { BRIDGE_PROVIDER: 'cctp' }) },
      pollIntervalMs: 200,
      logger: createLogger({ level: 'info', write: (line) => stackLog.write(`${line}\n`) }),
    });
    timings.stack = Date.now() - stackStarted;
    log(`local stack up in ${seconds(timings.stack)} s (${bridge === 'cctp' ? 'burn-and-mint, CCTP' : 'deposit-address, Relay'})`);
    const s = stack;
    const chain = (role: 'source' | 'hub' | 'destination') => {
      const found = s.manifest.chains.find((c) => c.role === role);
      if (!found) throw new DrillError(`the devnet has no ${role} chain`);
      return found;
    };
    const token = (role: 'source' | 'hub' | 'destination', symbol: string) => {
      const found = chain(role).tokens.find((t) => t.symbol === symbol);
      if (!found) throw new DrillError(`the devnet has no ${symbol} on its ${role} chain`);
      return found.address;
    };
    const clients = new Map<string, PublicClient>();
    const chainClient = (role: 'source' | 'hub' | 'destination') => {
      let client = clients.get(role);
      if (!client) clients.set(role, (client = createPublicClient({ transport: http(chain(role).rpcUrl), pollingInterval: 100 }) as PublicClient));
      return client;
    };
    const hubStartBlock = await chainClient('hub').getBlockNumber();
    const workerEnv = JSON.parse(readFileSync(path.join(dataDir, WORKER_ENV_FILE), 'utf8')) as Record<string, string>;

    // ------------------------------------------------------------------ transfers
    const apiCall = async <T>(method: 'GET' | 'POST', route: string, body?: unknown, statusToken?: string): Promise<T> => {
      const response = await fetch(`${s.apiUrl}${route}`, {
        method,
        headers: {
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
          ...(statusToken ? { authorization: `Bearer ${statusToken}` } : {}),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(30_000),
      });
      const json = (await response.json()) as { success: boolean; data?: T; error?: string };
      if (!json.success || json.data === undefined) throw new DrillError(`${method} ${route} answered ${response.status}: ${json.error ?? 'no data'}`);
      return json.data;
    };
    const faucet = createWalletClient({ account: privateKeyToAccount(s.manifest.faucetPrivateKey), transport: http(chain('source').rpcUrl) });

    const createTransfers = async (count: number) => {
      for (let n = 0; n < count; n++) {
        const i = created.length;
        // Relay: USDC → USDC and USDC → WETH on the destination chain. CCTP (USDC only): one in three pays on the hub (direct leg).
        const destRole: 'destination' | 'hub' = bridge === 'cctp' && i % 3 === 2 ? 'hub' : 'destination';
        const destSymbol = bridge === 'relay' && i % 2 === 1 ? 'WETH' : 'USDC';
        const recipient = privateKeyToAccount(generatePrivateKey()).address;
        const amount = `${20 + 7 * i}.${(13 * i) % 100}`;
        const t = await apiCall<{ routeId: string; statusToken: string; amount: string; quotedOutputAmount: string; depositAddress: Address }>(
          'POST',
          '/api/private-route',
          {
            sourceChainId: chain('source').chainId,
            destChainId: chain(destRole).chainId,
            amount,
            tokenSymbol: 'USDC',
            destTokenSymbol: destSymbol,
            userDestinationAddress: recipient,
          },
        );
        const route = `USDC → ${destSymbol}${destRole === 'hub' ? ' on the hub' : ''}`;
        const exact = bridge === 'relay' || destRole === 'hub';
        created.push({
          routeId: t.routeId,
          statusToken: t.statusToken,
          route,
          amount: BigInt(t.amount),
          quoted: BigInt(t.quotedOutputAmount),
          depositAddress: t.depositAddress,
          recipient,
          destRole,
          destSymbol,
          exact,
        });
        const hash = await faucet.writeContract({
          chain: null,
          address: token('source', 'USDC'),
          abi: erc20Abi,
          functionName: 'transfer',
          args: [t.depositAddress, BigInt(t.amount)],
        });
        await chainClient('source').waitForTransactionReceipt({ hash, timeout: 30_000 });
        log(`created and funded ${t.routeId} (${amount} ${route})`);
      }
    };

    // ------------------------------------------------------------------ progress
    /** What moves when a transfer makes progress: its projected status, ledger, intents and their outcomes. */
    const progressMark = async (): Promise<string | null> => {
      if (created.length === 0) return null;
      const ids = created.map((c) => c.routeId);
      try {
        const [row] = await s.service.db.execute<{ seq: string; ledger: string; intents: string; mined: string }>(sql`
          select
            (select coalesce(sum(${transfers.statusSeq}), 0) from ${transfers} where ${inArray(transfers.routeId, ids)}) as seq,
            (select count(*) from ${ledgerEntries} where ${inArray(ledgerEntries.routeId, ids)}) as ledger,
            (select count(*) from ${txIntents} where ${inArray(txIntents.routeId, ids)}) as intents,
            (select count(*) from ${txIntents} where ${inArray(txIntents.routeId, ids)} and ${txIntents.status} = 'mined') as mined`);
        return row ? `${row.seq}/${row.ledger}/${row.intents}/${row.mined}` : null;
      } catch {
        return null;
      }
    };

    /** Follows interrupted activities until they complete (describe of their workflows, twice a second). */
    const follower = (async () => {
      while (following) {
        const open = interrupted.filter((x) => x.completedAt === null);
        const byRoute = new Map<string, Interrupted[]>();
        for (const x of open) byRoute.set(x.routeId, [...(byRoute.get(x.routeId) ?? []), x]);
        await Promise.all(
          [...byRoute].map(async ([routeId, items]) => {
            try {
              const described = await s.temporal.client.workflow.getHandle(routeId).describe();
              const pending = new Set((described.raw.pendingActivities ?? []).map((a) => a.activityId));
              for (const x of items) if (!pending.has(x.activityId)) x.completedAt = Date.now();
            } catch {
              // Temporal is restarting: the next round looks again.
            }
          }),
        );
        await sleep(500);
      }
    })();

    /** Activities of the drill's transfers that the (dead) worker had started: lost with it. */
    const lostWith = async (life: WorkerLife): Promise<void> => {
      const identity = `${life.pid}@${hostname()}`;
      // A completion the worker sent just before it died may still reach the server: only what stays started was lost.
      await sleep(1000);
      for (const c of created) {
        const described = await s.temporal.client.workflow
          .getHandle(c.routeId)
          .describe()
          .catch(() => null);
        for (const a of described?.raw.pendingActivities ?? []) {
          if (decodePendingActivityState(a.state) !== 'STARTED' || a.lastWorkerIdentity !== identity || !a.activityId) continue;
          const activityType = a.activityType?.name ?? '?';
          life.interrupted.push({ routeId: c.routeId, activityType, attempt: a.attempt ?? 1 });
          // Lost again after an earlier kill: still the same outstanding activity.
          if (interrupted.some((x) => x.routeId === c.routeId && x.activityId === a.activityId)) continue;
          interrupted.push({ worker: life, routeId: c.routeId, activityId: a.activityId, activityType, completedAt: null });
        }
      }
    };

    // ------------------------------------------------------------------ workers
    const lifeTimes = new Map<number, { spawnedAt: number; endedAt: number }>();
    const spawnWorker = (role: string, crashAt?: string): RunningWorker => {
      const index = workers.length + 1;
      const logFile = path.join(logDir, `worker-${String(index).padStart(2, '0')}.log`);
      const out: WriteStream = createWriteStream(logFile, { flags: 'a' });
      const env: NodeJS.ProcessEnv = {
        ...process.env,
        ...workerEnv,
        DATA_DIR: dataDir,
        WORKER_HTTP_PORT: String(ports.workerHttp),
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
      const life: WorkerLife = { index, role, pid: child.pid, bootSeconds: null, end: 'exited', lifeSeconds: 0, interrupted: [], recovery: null, logFile };
      workers.push(life);
      const running: RunningWorker = {
        life,
        child,
        spawnedAt: Date.now(),
        hitPoint: null,
        stderrTail: '',
        exited: new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal }))),
      };
      child.stdout?.pipe(out, { end: false });
      child.stderr?.on('data', (chunk: Buffer) => {
        out.write(chunk);
        running.stderrTail = (running.stderrTail + chunk.toString()).slice(-2000);
        const hit = /drill: killing the worker at (\S+)/.exec(running.stderrTail);
        if (hit) running.hitPoint = hit[1] ?? null;
      });
      void running.exited.then(() => setTimeout(() => out.end(), 200));
      lifeTimes.set(index, { spawnedAt: running.spawnedAt, endedAt: Number.POSITIVE_INFINITY });
      void (async () => {
        const readyz = `http://127.0.0.1:${ports.workerHttp}/readyz`;
        while (child.exitCode === null && child.signalCode === null) {
          const ok = await fetch(readyz, { signal: AbortSignal.timeout(2000) }).then(
            (r) => r.ok,
            () => false,
          );
          if (ok) {
            life.bootSeconds = seconds(Date.now() - running.spawnedAt);
            return;
          }
          await sleep(200);
        }
      })();
      return running;
    };

    /** SIGKILL (the drill's own kill, not a crash point) and wait for the exit. */
    const kill = async (w: RunningWorker) => {
      if (w.child.exitCode === null && w.child.signalCode === null) w.child.kill('SIGKILL');
      await w.exited;
    };

    const waitReady = async (w: RunningWorker, limitMs: number) => {
      const deadline = Date.now() + limitMs;
      while (w.life.bootSeconds === null) {
        if (w.child.exitCode !== null || w.child.signalCode !== null)
          throw new DrillError(`worker ${w.life.index} exited before it was ready: ${w.stderrTail.trim().slice(-600)}`);
        if (Date.now() > deadline) throw new DrillError(`worker ${w.life.index} was not ready within ${limitMs / 1000} s (see ${w.life.logFile})`);
        await sleep(200);
      }
    };

    const finishLife = async (w: RunningWorker, end: WorkerLife['end']) => {
      w.life.end = end;
      w.life.lifeSeconds = seconds(Date.now() - w.spawnedAt);
      lifeTimes.set(w.life.index, { spawnedAt: w.spawnedAt, endedAt: Date.now() });
      if (end !== 'stopped') await lostWith(w.life);
    };

    // ------------------------------------------------------------------ servers
    const restartServer = async (server: 'temporal' | 'postgres'): Promise<{ downAt: number; upAt: number }> => {
      const downAt = Date.now();
      if (server === 'temporal') {
        if (temporalServer) await temporalServer.stop();
        else await stopRecordedTemporal(dataDir);
        temporalServer = await startTemporalDevServer({ dataDir, config: readTemporalDevConfig(), port: ports.temporal, uiPort: ports.temporalUi });
      } else {
        // Adopts the running cluster (same folder and port) only to stop it with pg_ctl, then starts it again.
        const running = await startLocalPostgres({ dataDir, port: ports.postgres });
        await running.stop();
        await startLocalPostgres({ dataDir, port: ports.postgres });
      }
      return { downAt, upAt: Date.now() };
    };

    const untilTrue = async (probe: () => Promise<boolean>, limitMs: number, stillValid: () => boolean = () => true): Promise<number | null> => {
      const started = Date.now();
      while (Date.now() - started < limitMs && stillValid() && !opts.signal?.aborted) {
        if (await probe().catch(() => false)) return Date.now();
        await sleep(200);
      }
      return null;
    };
    const answers200 = (url: string) => () => fetch(url, { signal: AbortSignal.timeout(3000) }).then((r) => r.ok);

    // ------------------------------------------------------------------ the plan
    const crashesStarted = Date.now();
    for (const [i, step] of opts.plan.entries()) {
      checkAbort();
      if (step.kind === 'create') {
        await createTransfers(step.count);
        continue;
      }
      if (step.kind === 'crash') {
        const w = spawnWorker(step.point, step.point);
        current = w;
        const outcome = await within(w.exited, pointTimeoutMs, opts.signal);
        checkAbort();
        if (outcome === null) {
          await kill(w);
          await finishLife(w, 'not-hit');
          log(`worker ${w.life.index}: ${step.point} not hit within ${pointTimeoutMs / 1000} s; killed it (${w.life.interrupted.length} activities lost)`);
        } else if (outcome.signal === 'SIGKILL' && w.hitPoint === step.point) {
          await finishLife(w, 'hit');
          const lost = w.life.interrupted.map((x) => x.activityType).join(', ') || 'none';
          log(`worker ${w.life.index}: killed at ${step.point} after ${w.life.lifeSeconds} s (boot ${w.life.bootSeconds ?? '-'} s; activities lost: ${lost})`);
        } else {
          await finishLife(w, 'exited');
          throw new DrillError(
            `worker ${w.life.index} (${step.point}) exited by itself (code ${outcome.code}, signal ${outcome.signal}): ${w.stderrTail.trim().slice(-800)}`,
          );
        }
        current = undefined;
        continue;
      }

      // A server restart under a clean worker that is already running transfers.
      const w = spawnWorker(`${step.server} restart`);
      current = w;
      await waitReady(w, 120_000);
      const before = await progressMark();
      await untilTrue(async () => (await progressMark()) !== before, 20_000);
      log(`restarting ${step.server} under worker ${w.life.index}`);
      const { downAt, upAt } = await restartServer(step.server);
      const alive = () => w.child.exitCode === null && w.child.signalCode === null;
      const mark = await progressMark();
      const [apiReadyAt, workerReadyAt, progressAt] = await Promise.all([
        untilTrue(answers200(`${s.apiUrl}/readyz`), 60_000),
        untilTrue(answers200(`http://127.0.0.1:${ports.workerHttp}/readyz`), 60_000, alive),
        untilTrue(
          async () => {
            const now = await progressMark();
            return now !== null && now !== mark;
          },
          90_000,
          alive,
        ),
      ]);
      const restart: ServerRestart = {
        server: step.server,
        downSeconds: seconds(upAt - downAt),
        apiReadySeconds: apiReadyAt === null ? null : seconds(apiReadyAt - upAt),
        workerReadySeconds: workerReadyAt === null ? null : seconds(workerReadyAt - upAt),
        progressSeconds: progressAt === null ? null : seconds(progressAt - upAt),
        workerSurvived: alive(),
      };
      restarts.push(restart);
      log(
        `${step.server} was down ${restart.downSeconds} s; API ready after ${restart.apiReadySeconds ?? 'never'} s, worker ready after ${restart.workerReadySeconds ?? 'never'} s, ` +
          `next progress after ${restart.progressSeconds ?? 'none'} s${restart.workerSurvived ? '' : '; the worker died'}`,
      );
      if (apiReadyAt === null) problems.push(`the API did not answer /readyz within 60 s of the ${step.server} restart`);
      if (!restart.workerSurvived) problems.push(`the worker exited during the ${step.server} restart: ${w.stderrTail.trim().slice(-400)}`);
      const laterCrash = opts.plan.slice(i + 1).some((later) => later.kind !== 'create');
      if (laterCrash || !restart.workerSurvived) {
        await kill(w);
        await finishLife(w, restart.workerSurvived ? 'killed' : 'exited');
        current = undefined;
      }
    }
    timings.crashes = Date.now() - crashesStarted;

    // ------------------------------------------------------------------ finish with a clean worker
    checkAbort();
    const finishStarted = Date.now();
    const last = current ?? spawnWorker('clean, to finish');
    current = last;
    log(`worker ${last.life.index} runs without crash points until every transfer is finished`);
    let views = new Map<string, { status: string; error: string | null; needsAttention: boolean }>();
    let lastNote = 0;
    for (;;) {
      checkAbort();
      views = new Map(
        await Promise.all(
          created.map(
            async (c) =>
              [
                c.routeId,
                await apiCall<{ status: string; error: string | null; needsAttention: boolean }>(
                  'GET',
                  `/api/private-route/${c.routeId}`,
                  undefined,
                  c.statusToken,
                ),
              ] as const,
          ),
        ),
      );
      const all = [...views.values()];
      const finished = all.filter((v) => v.status === 'COMPLETED' || v.status === 'FAILED' || v.needsAttention).length;
      if (Date.now() - lastNote > 15_000 || finished === created.length) {
        const counts = new Map<string, number>();
        for (const v of all)
          counts.set(v.needsAttention ? `${v.status} (parked)` : v.status, (counts.get(v.needsAttention ? `${v.status} (parked)` : v.status) ?? 0) + 1);
        log(`${seconds(Date.now() - finishStarted)} s: ${[...counts].map(([k, n]) => `${k} ${n}`).join(', ')}`);
        lastNote = Date.now();
      }
      if (finished === created.length) break;
      if (last.child.exitCode !== null || last.child.signalCode !== null) throw new DrillError(`the last worker exited: ${last.stderrTail.trim().slice(-800)}`);
      if (Date.now() - finishStarted > finishTimeoutMs) {
        problems.push(`not every transfer finished within ${finishTimeoutMs / 1000} s of the last worker's start`);
        break;
      }
      await sleep(1000);
    }
    timings.finish = Date.now() - finishStarted;
    // The interrupted activities that completed meanwhile; the follower stops here.
    await sleep(600);
    following = false;
    await follower;
    const stopAsked = Date.now();
    last.child.kill('SIGTERM');
    const stopped = await within(last.exited, 30_000);
    if (stopped === null) {
      problems.push('the last worker did not stop within 30 s of SIGTERM');
      await kill(last);
    }
    await finishLife(last, 'stopped');
    log(`worker ${last.life.index} stopped ${seconds(Date.now() - stopAsked)} s after SIGTERM`);
    current = undefined;

    // What each worker picked up: activities lost before its spawn, completed while it ran (the follower polls twice a second).
    for (const life of workers) {
      const times = lifeTimes.get(life.index);
      if (!times) continue;
      const outstanding = interrupted.filter((x) => x.worker.index < life.index && (x.completedAt === null || x.completedAt > times.spawnedAt));
      if (outstanding.length === 0) continue;
      const done = outstanding.flatMap((x) => (x.completedAt !== null && x.completedAt <= times.endedAt + 1000 ? [x.completedAt - times.spawnedAt] : []));
      life.recovery = {
        outstanding: outstanding.length,
        completed: done.length,
        first: done.length ? seconds(Math.min(...done)) : null,
        all: done.length === outstanding.length ? seconds(Math.max(...done)) : null,
      };
    }

    // ------------------------------------------------------------------ exactness
    const outcomes = await checkTransfers({ stack: s, created, views, chainClient, token, hubStartBlock });
    const withdrawals = await chainClient('hub').getLogs({
      address: s.manifest.privacyPools.entrypoint,
      event: withdrawalEvent,
      fromBlock: hubStartBlock,
      toBlock: 'latest',
    });
    const deposits = await chainClient('hub').getLogs({
      address: s.manifest.privacyPools.pool,
      event: depositedEvent,
      fromBlock: hubStartBlock,
      toBlock: 'latest',
    });
    const pool = { deposits: deposits.length, withdrawals: withdrawals.length };
    if (pool.deposits !== created.length) problems.push(`the pool saw ${pool.deposits} deposits for ${created.length} transfers`);
    if (pool.withdrawals !== created.length) problems.push(`the Entrypoint relayed ${pool.withdrawals} withdrawals for ${created.length} transfers`);
    for (const o of outcomes) for (const p of o.problems) problems.push(`${o.routeId}: ${p}`);
    if (created.length === 0) problems.push('the plan created no transfers');

    const kills = new Map<string, { kills: number; tries: number }>();
    for (const step of opts.plan) if (step.kind === 'crash' && !kills.has(step.point)) kills.set(step.point, { kills: 0, tries: 0 });
    for (const life of workers) {
      const entry = kills.get(life.role);
      if (!entry) continue;
      entry.tries += 1;
      if (life.end === 'hit') entry.kills += 1;
    }
    passed = problems.length === 0;
    report = {
      bridge,
      dataDir,
      transfers: outcomes,
      workers,
      restarts,
      kills: [...kills].map(([point, k]) => ({ point, ...k })),
      pool,
      attempts: { most: mostAttempts(workers), stepMaxAttempts: s.config.STEP_MAX_ATTEMPTS },
      seconds: { stack: seconds(timings.stack), crashes: seconds(timings.crashes), finish: seconds(timings.finish), total: seconds(Date.now() - began) },
      problems,
      passed,
    };
    return report;
  } catch (error) {
    problems.push(error instanceof Error ? error.message : String(error));
    passed = false;
    report = {
      bridge,
      dataDir,
      transfers: [],
      workers,
      restarts,
      kills: [],
      pool: { deposits: 0, withdrawals: 0 },
      attempts: { most: mostAttempts(workers), stepMaxAttempts: stack?.config.STEP_MAX_ATTEMPTS ?? 0 },
      seconds: { stack: seconds(timings.stack), crashes: seconds(timings.crashes), finish: seconds(timings.finish), total: seconds(Date.now() - began) },
      problems,
      passed,
    };
    return report;
  } finally {
    following = false;
    if (current && current.child.exitCode === null && current.child.signalCode === null) {
      current.child.kill('SIGKILL');
      await current.exited;
    }
    await stack?.stop().catch(() => {});
    await temporalServer?.stop().catch(() => {});
    await new Promise((resolve) => stackLog.end(resolve));
    if (passed && !opts.keepDataDir) await rm(dataDir, { recursive: true, force: true });
    else log(`kept the data folder ${dataDir} (stack and worker logs in drill-logs/)`);
  }
}

/** Stops the stack's Temporal dev server by its recorded pid (SIGTERM; SIGKILL after 15 s), only if it still runs the recorded command. */
async function stopRecordedTemporal(dataDir: string): Promise<void> {
  const file = path.join(dataDir, PROCESSES_FILE);
  if (!existsSync(file)) throw new DrillError(`no ${PROCESSES_FILE} in ${dataDir}: cannot find the Temporal dev server to restart`);
  const record = JSON.parse(readFileSync(file, 'utf8')) as { children: Array<{ name: string; pid: number; command: string }> };
  const server = record.children.find((c) => c.name === 'temporal dev server');
  if (!server || commandOf(server.pid) !== server.command) throw new DrillError(`the Temporal dev server recorded in ${file} is not running`);
  process.kill(server.pid, 'SIGTERM');
  const deadline = Date.now() + 15_000;
  while (commandOf(server.pid) === server.command) {
    if (Date.now() > deadline) process.kill(server.pid, 'SIGKILL');
    await sleep(100);
  }
}

async function checkTransfers(ctx: {
  stack: LocalStack;
  created: Created[];
  views: Map<string, { status: string; error: string | null }>;
  chainClient: (role: 'source' | 'hub' | 'destination') => PublicClient;
  token: (role: 'source' | 'hub' | 'destination', symbol: string) => Address;
  hubStartBlock: bigint;
}): Promise<TransferOutcome[]> {
  const { stack, created, chainClient, token } = ctx;
  const hub = chainClient('hub');
  const withdrawals = await hub.getLogs({
    address: stack.manifest.privacyPools.entrypoint,
    event: withdrawalEvent,
    fromBlock: ctx.hubStartBlock,
    toBlock: 'latest',
  });
  const withdrawalTxs = new Set(withdrawals.map((w) => w.transactionHash.toLowerCase()));
  const claimed = new Map<string, string>();
  const outcomes: TransferOutcome[] = [];
  for (const c of created) {
    const problems: string[] = [];
    const view = ctx.views.get(c.routeId);
    const status = view?.status ?? 'UNKNOWN';
    if (status !== 'COMPLETED') problems.push(`ended ${status}${view?.error ? `: ${view.error}` : ''}`);

    const destToken = token(c.destRole, c.destSymbol);
    const dest = chainClient(c.destRole);
    const received = await dest.readContract({ address: destToken, abi: erc20Abi, functionName: 'balanceOf', args: [c.recipient] });
    const paidLogs = await dest.getLogs({ address: destToken, event: transferEvent, args: { to: c.recipient }, fromBlock: 0n, toBlock: 'latest' });
    const sourceUsdc = token('source', 'USDC');
    const outLogs = await chainClient('source').getLogs({
      address: sourceUsdc,
      event: transferEvent,
      args: { from: c.depositAddress },
      fromBlock: 0n,
      toBlock: 'latest',
    });
    const depositSent = outLogs.reduce((sum, l) => sum + (l.args.value ?? 0n), 0n);
    const [row] = await stack.service.db.select({ hubAccount: transfers.hubAccount }).from(transfers).where(eq(transfers.routeId, c.routeId));
    const poolLogs = row
      ? await hub.getLogs({
          address: stack.manifest.privacyPools.pool,
          event: depositedEvent,
          args: { _depositor: row.hubAccount as Address },
          fromBlock: ctx.hubStartBlock,
          toBlock: 'latest',
        })
      : [];
    const ledger = await stack.service.db.select().from(ledgerEntries).where(eq(ledgerEntries.routeId, c.routeId));
    const entry = (kind: string) => ledger.find((e) => e.entryKey === kind);
    const amountOf = (kind: string) => (entry(kind) ? BigInt(entry(kind)!.amount) : null);
    const unmined = await stack.service.db
      .select({ id: txIntents.id, step: txIntents.step })
      .from(txIntents)
      .where(sql`${txIntents.routeId} = ${c.routeId} and ${txIntents.status} = 'pending'`);

    const [shielded, bridgedOut, fee] = [amountOf('shielded'), amountOf('bridged_out'), amountOf('service_fee')];
    if (c.exact && received !== c.quoted) problems.push(`the recipient holds ${received}, quoted ${c.quoted}`);
    if (!c.exact && (received < c.quoted || bridgedOut === null || received > bridgedOut))
      problems.push(`the recipient holds ${received}: not between the quote ${c.quoted} and the burn ${bridgedOut}`);
    if (paidLogs.length !== 1) problems.push(`${paidLogs.length} token transfers to the recipient (one expected)`);
    if (outLogs.length !== 1 || depositSent !== c.amount)
      problems.push(`the deposit address sent ${outLogs.length} transfers of ${depositSent} in all (one of ${c.amount} expected)`);
    if (poolLogs.length !== 1) problems.push(`${poolLogs.length} pool deposits by its hub account (one expected)`);

    if (amountOf('received') !== c.amount) problems.push(`ledger: received ${amountOf('received')}, funded ${c.amount}`);
    if (amountOf('paid') !== (c.exact ? c.quoted : received))
      problems.push(`ledger: paid ${amountOf('paid')}, ${c.exact ? `quoted ${c.quoted}` : `received ${received}`}`);
    const paidTx = entry('paid')?.txHash?.toLowerCase();
    if (paidLogs.length === 1 && paidTx !== paidLogs[0]!.transactionHash.toLowerCase())
      problems.push('ledger: the paid transaction is not the one that paid the recipient');
    const shieldTx = entry('shielded')?.txHash?.toLowerCase();
    if (poolLogs.length === 1 && shieldTx !== poolLogs[0]!.transactionHash.toLowerCase())
      problems.push('ledger: the shielded transaction is not the pool deposit of its hub account');
    const unshieldTx = entry('unshielded')?.txHash?.toLowerCase();
    const withdrawalFound = !!unshieldTx && withdrawalTxs.has(unshieldTx) && !claimed.has(unshieldTx);
    if (!withdrawalFound)
      problems.push(
        unshieldTx && claimed.has(unshieldTx)
          ? `ledger: its withdrawal is also ${claimed.get(unshieldTx)}'s`
          : 'ledger: no relayed withdrawal matches its unshielded entry',
      );
    if (unshieldTx) claimed.set(unshieldTx, c.routeId);
    if (shielded === null || bridgedOut === null || fee === null || shielded - bridgedOut !== fee)
      problems.push(`ledger: service fee ${fee} is not shielded ${shielded} − bridged out ${bridgedOut}`);
    if (unmined.length > 0) problems.push(`${unmined.length} recorded transaction(s) never mined: ${unmined.map((u) => `#${u.id} ${u.step}`).join(', ')}`);

    outcomes.push({
      routeId: c.routeId,
      route: c.route,
      status,
      error: view?.error ?? null,
      amount: c.amount,
      quoted: c.quoted,
      exact: c.exact,
      received,
      payouts: paidLogs.length,
      depositSends: outLogs.length,
      depositSent,
      poolDeposits: poolLogs.length,
      withdrawalFound,
      unminedIntents: unmined.length,
      problems,
    });
  }
  return outcomes;
}

const mostAttempts = (workers: WorkerLife[]) => Math.max(0, ...workers.flatMap((w) => w.interrupted.map((x) => x.attempt)));

const median = (xs: number[]) => {
  if (xs.length === 0) return null;
  const sorted = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : Math.round(((sorted[mid - 1]! + sorted[mid]!) / 2) * 10) / 10;
};
const fmt = (n: number | null | undefined) => (n === null || n === undefined ? '-' : String(n));
const pad = (text: string | number, width: number) => String(text).padEnd(width);

/** The drill's figures as text: kills per point, each worker's life, restarts, the transfers' exactness, times. */
export function formatDrillReport(r: DrillReport): string {
  const lines: string[] = [];
  const mode = r.bridge === 'cctp' ? 'burn-and-mint (CCTP)' : 'deposit-address (Relay)';
  const hits = r.workers.filter((w) => w.end === 'hit').length;
  lines.push(
    `Crash drill: ${r.transfers.length} transfers, ${mode}; ${hits} SIGKILLs at crash points, ${r.restarts.length} server restarts; ${r.seconds.total} s in all`,
  );
  lines.push('');
  lines.push('Kills per crash point (kills / workers that ran with it; 0 = not hit within the point timeout)');
  for (const k of r.kills) lines.push(`  ${pad(k.point, 26)} ${k.kills} / ${k.tries}`);
  lines.push('');
  lines.push("Workers (life, boot: s from spawn to its end, to /readyz 200; lost: transfers' activities running in it when it died;");
  lines.push('         recovery: of the activities lost before its spawn, s from its spawn until the first completed, and until all did)');
  lines.push(`  ${pad('#', 3)} ${pad('ran with', 22)} ${pad('end', 8)} ${pad('life', 6)} ${pad('boot', 5)} ${pad('lost', 36)} recovery`);
  for (const w of r.workers) {
    const counts = new Map<string, number>();
    for (const x of w.interrupted) counts.set(x.activityType, (counts.get(x.activityType) ?? 0) + 1);
    const lost = [...counts].map(([t, n]) => (n > 1 ? `${t}×${n}` : t)).join(', ') || '-';
    const rec = w.recovery;
    const recovery = !rec
      ? '-'
      : rec.completed === 0
        ? `0 of ${rec.outstanding} before its end`
        : `first ${rec.first} s, ${rec.all === null ? `${rec.completed} of ${rec.outstanding} before its end` : `all ${rec.outstanding} by ${rec.all} s`}`;
    lines.push(`  ${pad(w.index, 3)} ${pad(w.role, 22)} ${pad(w.end, 8)} ${pad(w.lifeSeconds, 6)} ${pad(fmt(w.bootSeconds), 5)} ${pad(lost, 36)} ${recovery}`);
  }
  const boots = r.workers.flatMap((w) => (w.bootSeconds === null ? [] : [w.bootSeconds]));
  const firsts = r.workers.flatMap((w) => (w.recovery?.first == null ? [] : [w.recovery.first]));
  const alls = r.workers.flatMap((w) => (w.recovery?.all == null ? [] : [w.recovery.all]));
  lines.push(
    `  boot median ${fmt(median(boots))} s (max ${fmt(boots.length ? Math.max(...boots) : null)}); after a restart, the first lost activity completed after median ${fmt(median(firsts))} s ` +
      `(max ${fmt(firsts.length ? Math.max(...firsts) : null)}), the last after median ${fmt(median(alls))} s (max ${fmt(alls.length ? Math.max(...alls) : null)})`,
  );
  lines.push(
    `  the most attempts one lost activity had used: ${r.attempts.most} (the drill's STEP_MAX_ATTEMPTS: ${r.attempts.stepMaxAttempts}; the service's default is 8)`,
  );
  lines.push('');
  if (r.restarts.length > 0) {
    lines.push('Server restarts (seconds after the server was back)');
    for (const x of r.restarts) {
      lines.push(
        `  ${pad(x.server, 9)} down ${x.downSeconds} s; API /readyz after ${fmt(x.apiReadySeconds)} s; worker /readyz after ${fmt(x.workerReadySeconds)} s; ` +
          `next progress after ${fmt(x.progressSeconds)} s; worker ${x.workerSurvived ? 'reconnected by itself' : 'DIED'}`,
      );
    }
    lines.push('');
  }
  if (r.transfers.length > 0) {
    lines.push('Transfers (payouts: token transfers to the recipient; sends: transfers out of the deposit address)');
    lines.push(`  ${pad('routeId', 36)} ${pad('route', 24)} ${pad('status', 10)} ${pad('quoted = received', 40)} payouts sends pool-deposits withdrawal`);
    for (const t of r.transfers) {
      const exact = `${t.quoted} ${t.quoted === t.received ? '=' : t.exact || t.received < t.quoted ? '≠' : '<'} ${t.received}`;
      lines.push(
        `  ${pad(t.routeId, 36)} ${pad(t.route, 24)} ${pad(t.status, 10)} ${pad(exact, 40)} ${pad(t.payouts, 7)} ${pad(t.depositSends, 5)} ${pad(t.poolDeposits, 13)} ${t.withdrawalFound ? 'yes' : 'NO'}`,
      );
    }
    if (r.transfers.some((t) => !t.exact))
      lines.push("  (CCTP to another chain: quote < received ≤ burn is by design, Circle's unused fee buffer is minted to the recipient; docs/money.md)");
    lines.push(`  pool: ${r.pool.deposits} deposits and ${r.pool.withdrawals} withdrawals for ${r.transfers.length} transfers`);
    lines.push('');
  }
  lines.push(`Time: stack start ${r.seconds.stack} s, crash steps ${r.seconds.crashes} s, clean finish ${r.seconds.finish} s, total ${r.seconds.total} s`);
  lines.push(
    r.passed
      ? 'PASSED: every transfer COMPLETED with exactly its quoted payout (CCTP: at least it, at most the burn), and no second payment on any chain'
      : `FAILED:\n${r.problems.map((p) => `  - ${p}`).join('\n')}`,
  );
  return lines.join('\n');
}
