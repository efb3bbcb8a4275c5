/**
 * The production worker as a process of its own against a bench stack started with `worker: 'external'`,
 * as the crash drill runs it: `node --import ./src/loader/register.mjs devnet/worker.ts` with the stack's data folder (its
 * `worker-env.json` is the configuration), so its memory and its JSON-RPC calls can be read apart from the
 * bench process (API and emulators).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadConfig, type Config } from '../../src/config.ts';
import { freePorts } from '../../devnet/ports.ts';
import { WORKER_ENV_FILE } from '../../devnet/stackInfo.ts';

const repoRoot = fileURLToPath(new URL('../..', import.meta.url));
const STOP_GRACE_MS = 60_000;

export interface WorkerMemory {
  /** VmRSS: resident now (bytes). */
  rss: number;
  /** VmHWM: the highest resident size since the process started or since `resetPeak()` (bytes). */
  peak: number;
}

export interface WorkerProcess {
  pid: number;
  /** Base URL of its /healthz, /readyz, /metrics. */
  url: string;
  /** The configuration it runs with (what src/worker.ts loads from the same environment). */
  config: Config;
  /** From /proc/<pid>/status; throws once the process is gone. */
  memory(): WorkerMemory;
  /** Restarts VmHWM from the current RSS (Linux `clear_refs` 5); false where the kernel refuses. */
  resetPeak(): boolean;
  /** private_route_rpc_requests_total of the worker, from its /metrics, by "chain_id method". */
  rpcCalls(): Promise<Map<string, number>>;
  /** SIGTERM and wait for its exit (SIGKILL after a minute). Safe to call twice. */
  stop(): Promise<void>;
}

/**
 * Spawns the worker for the stack in `dataDir` and resolves once its /readyz answers 200 (its Temporal
 * worker is RUNNING and Postgres answers). Its logs go to this process's stderr at `logLevel`. If it exits
 * or is not ready within `readyTimeoutMs`, it is stopped and the error carries the end of its output.
 */
export async function startWorkerProcess(opts: { dataDir: string; logLevel: string; readyTimeoutMs?: number }): Promise<WorkerProcess> {
  const [httpPort] = (await freePorts(1)) as [number];
  const stackEnv = JSON.parse(readFileSync(path.join(opts.dataDir, WORKER_ENV_FILE), 'utf8')) as Record<string, string>;
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    // The stack's values win over this shell's, as in the drill (devnet/worker.ts alone lets the shell win).
    ...stackEnv,
    DATA_DIR: opts.dataDir,
    WORKER_HTTP_PORT: String(httpPort),
    TEMPORAL_METRICS_PORT: '0',
    LOG_LEVEL: opts.logLevel,
  };
  const config = loadConfig(env);
  const child = spawn(process.execPath, ['--import', path.join(repoRoot, 'src/loader/register.mjs'), path.join(repoRoot, 'devnet/worker.ts')], {
    cwd: repoRoot,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  if (child.pid === undefined)
    throw new Error(`the worker process could not be started (${process.execPath} --import ./src/loader/register.mjs devnet/worker.ts)`);
  const pid = child.pid;
  let tail = '';
  const keep = (chunk: Buffer) => {
    process.stderr.write(chunk);
    tail = (tail + chunk.toString()).slice(-2000);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  // If this process ends without close() (an uncaught error, process.exit), the worker must not outlive it.
  const killOnExit = () => child.kill('SIGKILL');
  process.once('exit', killOnExit);

  const url = `http://${config.HOST.includes(':') ? `[${config.HOST}]` : config.HOST}:${httpPort}`;
  let stopping: Promise<void> | undefined;
  const worker: WorkerProcess = {
    pid,
    url,
    config,
    memory: () => readMemory(pid),
    resetPeak() {
      try {
        writeFileSync(`/proc/${pid}/clear_refs`, '5');
        return true;
      } catch {
        return false;
      }
    },
    async rpcCalls() {
      const res = await fetch(`${url}/metrics`, { signal: AbortSignal.timeout(10_000) });
      if (!res.ok) throw new Error(`worker /metrics → ${res.status}`);
      return parseRpcCalls(await res.text());
    },
    stop() {
      stopping ??= (async () => {
        if (alive(child)) {
          child.kill('SIGTERM');
          let timer: NodeJS.Timeout | undefined;
          const overdue = await Promise.race([
            exited.then(() => false),
            new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(true), STOP_GRACE_MS))),
          ]);
          clearTimeout(timer);
          if (overdue) {
            process.stderr.write(`worker ${pid} still running ${STOP_GRACE_MS / 1000} s after SIGTERM: SIGKILL\n`);
            child.kill('SIGKILL');
            await exited;
          }
        }
        process.off('exit', killOnExit);
      })();
      return stopping;
    },
  };

  try {
    const deadline = Date.now() + (opts.readyTimeoutMs ?? 300_000);
    for (;;) {
      if (!alive(child)) throw new Error(`the worker process exited before it was ready:\n${tail.trim()}`);
      if (
        await fetch(`${url}/readyz`, { signal: AbortSignal.timeout(2000) }).then(
          (r) => r.ok,
          () => false,
        )
      )
        return worker;
      if (Date.now() > deadline) throw new Error(`the worker process was not ready within ${(opts.readyTimeoutMs ?? 300_000) / 1000} s:\n${tail.trim()}`);
      await sleep(250);
    }
  } catch (error) {
    await worker.stop();
    throw error;
  }
}

function alive(child: ChildProcess): boolean {
  return child.exitCode === null && child.signalCode === null;
}

function readMemory(pid: number): WorkerMemory {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = (field: string) => {
    const match = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status);
    if (!match) throw new Error(`no ${field} in /proc/${pid}/status`);
    return Number(match[1]) * 1024;
  };
  return { rss: kib('VmRSS'), peak: kib('VmHWM') };
}

/** private_route_rpc_requests_total samples of a Prometheus text exposition, by "chain_id method". */
export function parseRpcCalls(text: string): Map<string, number> {
  const calls = new Map<string, number>();
  for (const line of text.split('\n')) {
    const sample = /^private_route_rpc_requests_total\{([^}]*)\}\s+(\S+)/.exec(line);
    if (!sample) continue;
    const labels = Object.fromEntries([...sample[1]!.matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1], m[2]]));
    calls.set(`${labels.chain_id} ${labels.method}`, Number(sample[2]));
  }
  return calls;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
