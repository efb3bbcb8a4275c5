/**
 * End to end: funded → COMPLETED latency on the local stack with the privacy window at its minimum, first
 * one transfer at a time, then `--concurrent` transfers funded together (throughput), next to the bound
 * proving sets on this machine (one proof's time, measured in the same run with bench/proofs' code).
 *
 *   npm run bench:e2e -- [--sequential 3] [--concurrent 20] [--proofs 2] [--mode relay|cctp] [--timeout 900] [--small] [--json]
 */
import { availableParallelism } from 'node:os';
import { parseArgs } from 'node:util';
import { timeProofs } from '../proofs/proof.ts';
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
  progress(`timing ${proofs} withdrawal proof(s) (bench/proofs)`);
  const proofTimes = await timeProofs(proofs);
  const proofSeconds = median(proofTimes);
  const cores = availableParallelism();

  progress(`starting the local stack (${mode} mode, privacy window at its minimum)`);
  const bench = await startBenchStack({ env: { ...MIN_PRIVACY_WINDOW_ENV, BRIDGE_PROVIDER: mode } });
  try {
    const { stack } = bench;
    const funder = faucetFunder(stack);
    const failures: string[] = [];

    /** Funds the transfers one after another and waits for all; funded→COMPLETED seconds per completed one. */
    const run = async (transfers: CreatedTransfer[]) => {
      const fundedAt = new Map<string, number>();
      for (const t of transfers) fundedAt.set(t.routeId, await funder.fund(t));
      const outcomes = await awaitTerminal(
        stack,
        transfers.map((t) => t.routeId),
        { timeoutSeconds, progress },
      );
      const latencies: number[] = [];
      let lastCompleted = 0;
      for (const t of transfers) {
        const o = outcomes.get(t.routeId)!;
        if (o.status === 'COMPLETED' && o.finishedAt !== null) {
          latencies.push((o.finishedAt - fundedAt.get(t.routeId)!) / 1000);
          lastCompleted = Math.max(lastCompleted, o.finishedAt);
        } else {
          failures.push(`${t.routeId}: ${o.status}${o.finishedAt === null ? ` (not finished within ${timeoutSeconds} s)` : ''} ${o.error ?? ''}`);
        }
      }
      const firstFunded = Math.min(...fundedAt.values());
      return { latencies, spanSeconds: lastCompleted > 0 ? (lastCompleted - firstFunded) / 1000 : Number.NaN };
    };

    const sequentialLatencies: number[] = [];
    for (let i = 0; i < sequential; i++) {
      progress(`sequential transfer ${i + 1}/${sequential}`);
      sequentialLatencies.push(...(await run([await createTransfer(stack)])).latencies);
    }

    let burst = { latencies: [] as number[], spanSeconds: Number.NaN };
    if (concurrent > 0) {
      const created: CreatedTransfer[] = [];
      for (let i = 0; i < concurrent; i++) created.push(await createTransfer(stack));
      progress(`${concurrent} concurrent transfers: funding them one after another, then waiting`);
      burst = await run(created);
    }

    const throughput = (burst.latencies.length / burst.spanSeconds) * 60;
    const bound = (cores / proofSeconds) * 60;
    const oneStreamBound = 60 / proofSeconds;
    const figures = {
      mode,
      cores,
      proofSeconds: { median: round(proofSeconds), samples: proofTimes.map((t) => round(t)) },
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
      },
      boundTransfersPerMinute: round(bound),
      throughputOverBound: round(throughput / bound),
      oneProofAtATimeBoundPerMinute: round(oneStreamBound),
      throughputOverOneProofAtATimeBound: round(throughput / oneStreamBound),
      failures,
    };
    if (values.json) console.log(JSON.stringify(figures, null, 2));
    else {
      const f = figures;
      console.log(`end to end, ${mode} mode, privacy window at its minimum, ${cores} cores`);
      console.log(`  one withdrawal proof (median of ${proofTimes.length})         ${f.proofSeconds.median} s`);
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
        console.log(`  bound: cores ÷ seconds per proof              ${f.boundTransfersPerMinute} transfers/min  → throughput/bound ${f.throughputOverBound}`);
        console.log(
          `  one proof at a time (a proof uses every core) ${f.oneProofAtATimeBoundPerMinute} transfers/min  → throughput/that ${f.throughputOverOneProofAtATimeBound}`,
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
