/**
 * Proof benchmark: how long one Privacy Pools withdrawal proof takes on this machine, and how many
 * withdrawals per minute the service's prover sustains with N routes leaving the pool at once.
 *
 *   npm run bench:proofs -- [--sequential 3] [--routes 6] [--concurrency 1]
 *
 * Proofs use the production circuit (withdraw, 32 levels: its cost does not depend on the tree's size)
 * through the service's own prover (worker threads, src/providers/privacy-pools/prover.ts).
 */
import { availableParallelism } from 'node:os';
import { parseArgs } from 'node:util';
import { createProver } from '../../src/providers/privacy-pools/prover.ts';
import { withdrawalInput } from './proof.ts';

const { values } = parseArgs({
  options: {
    sequential: { type: 'string', default: '3' },
    routes: { type: 'string', default: '6' },
    concurrency: { type: 'string', default: '1' },
    json: { type: 'boolean', default: false },
  },
});
const sequential = positive(values.sequential, '--sequential');
const routes = positive(values.routes, '--routes');
const concurrency = positive(values.concurrency, '--concurrency');

async function main() {
  const prover = createProver({ concurrency });
  try {
    let started = performance.now();
    await prover.ready();
    const readyMs = performance.now() - started;

    const times: number[] = [];
    for (let i = 0; i < sequential; i++) {
      const { commitment, input } = withdrawalInput(i);
      started = performance.now();
      await prover.proveWithdrawal(commitment, input);
      times.push((performance.now() - started) / 1000);
    }

    started = performance.now();
    await Promise.all(
      Array.from({ length: routes }, (_, i) => withdrawalInput(100 + i)).map(({ commitment, input }) => prover.proveWithdrawal(commitment, input)),
    );
    const burstSeconds = (performance.now() - started) / 1000;

    const sorted = [...times].sort((a, b) => a - b);
    const median = sorted[Math.floor(sorted.length / 2)]!;
    const figures = {
      cores: availableParallelism(),
      proverThreads: concurrency,
      artifactCheckSeconds: round(readyMs / 1000),
      proofSeconds: { median: round(median), min: round(sorted[0]!), max: round(sorted.at(-1)!), samples: times.length },
      burst: { routes, seconds: round(burstSeconds), withdrawalsPerMinute: round((routes / burstSeconds) * 60) },
      // One proof at a time already uses every core (snarkjs's own threads): the bound for this machine.
      boundWithdrawalsPerMinute: round(60 / median),
    };
    if (values.json) {
      console.log(JSON.stringify(figures, null, 2));
      return;
    }
    console.log(`withdrawal proofs on ${figures.cores} cores, ${concurrency} prover thread(s)`);
    console.log(`  artifact check (SHA-256 against the SDK)   ${figures.artifactCheckSeconds} s`);
    console.log(
      `  one proof (median of ${times.length})              ${figures.proofSeconds.median} s   (min ${figures.proofSeconds.min}, max ${figures.proofSeconds.max})`,
    );
    console.log(`  ${routes} routes at once                         ${figures.burst.seconds} s  → ${figures.burst.withdrawalsPerMinute} withdrawals/min`);
    console.log(`  bound from one proof's time                 ${figures.boundWithdrawalsPerMinute} withdrawals/min`);
  } finally {
    await prover.close();
  }
}

function positive(text: string | undefined, flag: string): number {
  const value = Number(text);
  if (!Number.isInteger(value) || value < 1) {
    console.error(`${flag} must be a positive integer`);
    process.exit(2);
  }
  return value;
}

function round(x: number): number {
  return Math.round(x * 100) / 100;
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
