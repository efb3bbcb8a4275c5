/**
 * End to end: funded → COMPLETED latency on the local stack with the privacy window at its minimum, first
 * one transfer at a time, then `--concurrent` transfers funded together (throughput), next to the bound
 * proving sets on this machine: the service's prover (its default backend and concurrency) proving a burst of
 * withdrawals, measured in the same run with bench/proofs' code before the stack starts.
 *
 *   npm run bench:e2e -- [--sequential 3] [--concurrent 20] [--proofs 2] [--mode relay|cctp] [--timeout 900] [--small] [--json]
 */
import { readdirSync, readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { parseArgs } from 'node:util';
import { measureProving } from '../proofs/proof.ts';
import { max, median, positiveInt, round, runMain } from '../support/figures.ts';
import { MIN_PRIVACY_WINDOW_ENV, awaitTerminal, createTransfer, faucetFunder, progress, startBenchStack, type CreatedTransfer } from '../support/stack.ts';

const { values } = parseArgs({
  options: {
    sequential: { type: 'string', default: '3' },
    concurrent: { type: 'string', default: '20' },
    proofs: { type: 'string', default: '2' },
    mode: { type: 'string', default: 'relay' },
    timeout: { type: 'string', default: '900' },
    small: { type: 'boolean', default: false },
    json: { type: 'boolean', default: false },
  },
});
const sequential = values.small ? 1 : positiveInt(values.sequential, '--sequential', { allowZero: true });
const concurrent = values.small ? 3 : positiveInt(values.concurrent, '--concurrent', { allowZero: true });
const proofs = values.small ? 1 : positiveInt(values.proofs, '--proofs');
const timeoutSeconds = positiveInt(values.timeout, '--timeout');
const mode = values.mode;
if (mode !== 'relay' && mode !== 'cctp') {
  console.error('--mode must be relay or cctp');
  process.exit(2);
}

runMain(async () => {
  // Before the stack starts, so nothing else competes for the cores.
  const cores = availableParallelism();
  progress(`timing ${proofs} withdrawal proof(s) one at a time, then ${2 * cores} at once (bench/proofs)`);
  const proving = await measureProving({}, { sequential: proofs, burst: 2 * cores });
  const proofSeconds = proving.proofSeconds.median;

  progress(`starting the local stack (${mode} mode, privacy window at its minimum)`);
  const bench = await startBenchStack({ env: { ...MIN_PRIVACY_WINDOW_ENV, BRIDGE_PROVIDER: mode } });
  try {
    const { stack } = bench;
    const funder = faucetFunder(stack);
    const failures: string[] = [];

    /** Funds the transfers one after another and waits for all; funded→COMPLETED seconds per completed one. */
    const run = async (transfers: CreatedTransfer[]) => {
      const fundedAt = new Map<string, number>();
      const cpuBefore = cpuByProgram();
      for (const t of transfers) fundedAt.set(t.routeId, await funder.fund(t));
      const outcomes = await awaitTerminal(
        stack,
        transfers.map((t) => t.routeId),
        { timeoutSeconds, progress },
      );
      const cpu = cpuSince(cpuBefore);
      const latencies: number[] = [];
      let lastCompleted = 0;
      let firstCompleted = Number.POSITIVE_INFINITY;
      for (const t of transfers) {
        const o = outcomes.get(t.routeId)!;
        if (o.status === 'COMPLETED' && o.finishedAt !== null) {
          latencies.push((o.finishedAt - fundedAt.get(t.routeId)!) / 1000);
          lastCompleted = Math.max(lastCompleted, o.finishedAt);
          firstCompleted = Math.min(firstCompleted, o.finishedAt);
        } else {
          failures.push(`${t.routeId}: ${o.status}${o.finishedAt === null ? ` (not finished within ${timeoutSeconds} s)` : ''} ${o.error ?? ''}`);
        }
      }
      const firstFunded = Math.min(...fundedAt.values());
      return {
        latencies,
        spanSeconds: lastCompleted > 0 ? (lastCompleted - firstFunded) / 1000 : Number.NaN,
        steadySeconds: lastCompleted > 0 ? (lastCompleted - firstCompleted) / 1000 : Number.NaN,
        cpu,
      };
    };

    const sequentialLatencies: number[] = [];
    for (let i = 0; i < sequential; i++) {
      progress(`sequential transfer ${i + 1}/${sequential}`);
      sequentialLatencies.push(...(await run([await createTransfer(stack)])).latencies);
    }

    let burst: Awaited<ReturnType<typeof run>> = { latencies: [], spanSeconds: Number.NaN, steadySeconds: Number.NaN, cpu: [] };
    if (concurrent > 0) {
      const created: CreatedTransfer[] = [];
      for (let i = 0; i < concurrent; i++) created.push(await createTransfer(stack));
      progress(`${concurrent} concurrent transfers: funding them one after another, then waiting`);
      burst = await run(created);
    }

    const throughput = (burst.latencies.length / burst.spanSeconds) * 60;
    // One withdrawal proof per transfer: the prover's burst rate is the most transfers a minute this machine can finish.
    const bound = proving.burst.proofsPerSecond * 60;
    // From the first completion on, the pipeline is full: what the stack sustains once the first transfer is through.
    const steady = ((burst.latencies.length - 1) / burst.steadySeconds) * 60;
    const figures = {
      mode,
      cores,
      prover: { backend: proving.backend, concurrency: proving.concurrency, threadsPerProof: proving.threadsPerProof },
      proofSeconds: { median: round(proofSeconds), samples: proving.proofSeconds.samples },
      proofsPerMinute: round(bound),
      sequential: {
        transfers: sequential,
        completed: sequentialLatencies.length,
        medianSeconds: round(median(sequentialLatencies)),
        maxSeconds: round(max(sequentialLatencies)),
        seconds: sequentialLatencies.map((s) => round(s, 1)),
      },
      concurrent: {
        transfers: concurrent,
        completed: burst.latencies.length,
        firstFundedToLastCompletedSeconds: round(burst.spanSeconds, 1),
        medianSeconds: round(median(burst.latencies)),
        maxSeconds: round(max(burst.latencies)),
        transfersPerMinute: round(throughput),
        steadyTransfersPerMinute: round(steady),
        /** CPU-seconds each program used from the first funding to the last completion (every process on the machine). */
        cpuSecondsByProgram: burst.cpu,
      },
      boundTransfersPerMinute: round(bound),
      throughputOverBound: round(throughput / bound),
      steadyOverBound: round(steady / bound),
      failures,
    };
    if (values.json) console.log(JSON.stringify(figures, null, 2));
    else {
      const f = figures;
      console.log(`end to end, ${mode} mode, privacy window at its minimum, ${cores} cores`);
      console.log(
        `  prover: ${f.prover.backend}, ${f.prover.concurrency} at once x ${f.prover.threadsPerProof} thread(s); one proof (median of ${f.proofSeconds.samples}) ${f.proofSeconds.median} s`,
      );
      console.log(
        `  sequential, funded → COMPLETED                ${f.sequential.completed}/${sequential}: median ${f.sequential.medianSeconds} s, max ${f.sequential.maxSeconds} s  (${f.sequential.seconds.join(', ')})`,
      );
      if (concurrent > 0) {
        console.log(
          `  ${concurrent} concurrent, funded → COMPLETED            ${f.concurrent.completed}/${concurrent}: median ${f.concurrent.medianSeconds} s, max ${f.concurrent.maxSeconds} s`,
        );
        console.log(
          `  throughput                                    ${f.concurrent.transfersPerMinute} transfers/min  (first funded → last completed ${f.concurrent.firstFundedToLastCompletedSeconds} s)`,
        );
        console.log(`  bound: the prover's proofs per minute         ${f.boundTransfersPerMinute} transfers/min  → throughput/bound ${f.throughputOverBound}`);
        console.log(
          `  steady: first → last completion               ${f.concurrent.steadyTransfersPerMinute} transfers/min  → steady/bound ${f.steadyOverBound}`,
        );
        console.log(
          `  CPU-s meanwhile (${cores} cores × ${f.concurrent.firstFundedToLastCompletedSeconds} s)  ${f.concurrent.cpuSecondsByProgram.map(([name, seconds]) => `${name} ${seconds}`).join(', ')}`,
        );
      }
      if (failures.length > 0) console.log(`  not completed: ${failures.length}\n    ${failures.join('\n    ')}`);
    }
    // Transfers that did not complete are a figure, not a broken run; none completing at all is.
    if (sequentialLatencies.length + burst.latencies.length === 0) throw new Error('no transfer completed');
  } finally {
    await bench.close();
  }
});

/** CPU-seconds (user + system) of every process on the machine, by pid, with its program's name. */
function cpuByProgram(): Map<number, { name: string; seconds: number }> {
  const ticks = 100; // USER_HZ on Linux
  const out = new Map<number, { name: string; seconds: number }>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      out.set(Number(entry), { name, seconds: (Number(fields[11]) + Number(fields[12])) / ticks });
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

/** The CPU-seconds each program used since `before` (processes started meanwhile count whole), largest first. */
function cpuSince(before: Map<number, { name: string; seconds: number }>): [string, number][] {
  const byName = new Map<string, number>();
  for (const [pid, now] of cpuByProgram()) {
    const used = now.seconds - (before.get(pid)?.name === now.name ? before.get(pid)!.seconds : 0);
    if (used > 0) byName.set(now.name, (byName.get(now.name) ?? 0) + used);
  }
  return [...byName.entries()]
    .map(([name, seconds]): [string, number] => [name, round(seconds, 1)])
    .sort((a, b) => b[1] - a[1])
    .slice(0, 8);
}
