/**
 * Withdrawal proofs of the production circuit through the service's prover, for the benchmarks: the inputs
 * of a distinct note per route, and one proof's time on this machine.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { createProver, type ProverOptions } from '../../src/providers/privacy-pools/prover.ts';
import { withdrawalOf } from '../../test/support/withdrawals.ts';

/**
 * A distinct note per route (its own secrets), withdrawing 60 of its 100 USDC. The proof's cost does not depend on
 * the trees: the circuit always has its 32 levels.
 */
export function withdrawalInput(route: number) {
  return withdrawalOf(100_000_000n, 60_000_000n, BigInt(route));
}

/** What `measureProving` reports: one proof at a time, then a burst with the prover's own concurrency. */
export interface ProvingFigures {
  backend: string;
  concurrency: number;
  threadsPerProof: number;
  fallbackReason?: string;
  /** Threads started and circuit files checked (the native start-up check included). */
  readySeconds: number;
  /** One withdrawal proof at a time (its witness and verification included), as a transfer waits for it. */
  proofSeconds: { median: number; min: number; max: number; samples: number };
  burst: {
    proofs: number;
    inFlight: number;
    seconds: number;
    proofsPerSecond: number;
    /** CPU time of this process (all its threads) and of its native prover processes, per proof. */
    cpuSecondsPerProof: number;
  };
  /** Resident memory, MiB: this process before the prover started, and the peaks while it proved. */
  rssMiB: { before: number; peakProcess: number; peakNativeProcesses: number; peakTotal: number };
}

/**
 * Measures the service's prover with `options` (the service's defaults when empty): its start, `sequential` proofs
 * one at a time, then `burst` proofs asked for at once. CPU and memory include the native prover processes.
 */
export async function measureProving(options: ProverOptions, plan: { sequential: number; burst: number }): Promise<ProvingFigures> {
  const before = rssOf('self');
  const prover = createProver(options);
  let peakProcess = before;
  let peakNative = 0;
  let peakTotal = before;
  const sampler = setInterval(() => {
    const own = rssOf('self');
    const native = nativeChildren().reduce((sum, pid) => sum + rssOf(String(pid)), 0);
    peakProcess = Math.max(peakProcess, own);
    peakNative = Math.max(peakNative, native);
    peakTotal = Math.max(peakTotal, own + native);
  }, 50);
  try {
    let started = performance.now();
    await prover.ready();
    const readySeconds = (performance.now() - started) / 1000;
    const times: number[] = [];
    for (let i = 0; i < plan.sequential; i++) {
      const { commitment, input } = withdrawalInput(i);
      started = performance.now();
      await prover.proveWithdrawal(commitment, input);
      times.push((performance.now() - started) / 1000);
    }
    const inputs = Array.from({ length: plan.burst }, (_, i) => withdrawalInput(1_000 + i));
    const cpuBefore = cpuSeconds();
    started = performance.now();
    await Promise.all(inputs.map(({ commitment, input }) => prover.proveWithdrawal(commitment, input)));
    const seconds = (performance.now() - started) / 1000;
    const cpu = cpuSeconds() - cpuBefore;
    const setup = prover.setup();
    const sorted = [...times].sort((a, b) => a - b);
    return {
      backend: setup.backend,
      concurrency: setup.concurrency,
      threadsPerProof: setup.threadsPerProof,
      fallbackReason: setup.fallbackReason,
      readySeconds,
      proofSeconds: {
        median: sorted[Math.floor(sorted.length / 2)] ?? Number.NaN,
        min: sorted[0] ?? Number.NaN,
        max: sorted.at(-1) ?? Number.NaN,
        samples: times.length,
      },
      burst: {
        proofs: plan.burst,
        inFlight: Math.min(plan.burst, setup.concurrency),
        seconds,
        proofsPerSecond: plan.burst / seconds,
        cpuSecondsPerProof: cpu / plan.burst,
      },
      rssMiB: { before, peakProcess, peakNativeProcesses: peakNative, peakTotal },
    };
  } finally {
    clearInterval(sampler);
    await prover.close();
  }
}

/** The native prover processes this process started (children of any of its threads). */
function nativeChildren(): number[] {
  const pids: number[] = [];
  for (const task of safeList('/proc/self/task')) {
    for (const pid of safeRead(`/proc/self/task/${task}/children`).split(' ').filter(Boolean)) pids.push(Number(pid));
  }
  return pids;
}

/** CPU seconds of this process and of its live children (the native provers live as long as the prover). */
function cpuSeconds(): number {
  const own = process.cpuUsage();
  let children = 0;
  for (const pid of nativeChildren()) {
    const stat = safeRead(`/proc/${pid}/stat`);
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    children += (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
  }
  return (own.user + own.system) / 1e6 + children;
}

const CLOCK_TICKS = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;

function rssOf(pid: string): number {
  const match = /VmRSS:\s+(\d+) kB/.exec(safeRead(`/proc/${pid}/status`));
  return match ? Number(match[1]) / 1024 : 0;
}

function safeRead(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return '';
  }
}

function safeList(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}
