/**
 * Proof benchmark: the service's prover on the production withdraw circuit, snarkjs and the native prover side by
 * side in one run. Each configuration runs in a fresh process of its own (so one's memory does not count against
 * the next), and reports its start (threads, the circuit-file check), one proof at a time, and a burst of
 * `--burst` proofs asked for at once: proofs per second with the prover's concurrency in flight, CPU-seconds per
 * proof (this process's threads and the native processes) and the resident memory while proving.
 *
 *   npm run bench:proofs -- [--sequential 3] [--burst 8] [--small] [--json]
 *
 * Configurations: snarkjs as the service ran it before (one proof at a time, snarkjs's own threads on every core),
 * the native prover as the service runs it by default (one single-threaded proof per core), and the native prover
 * one proof at a time on every core (the lowest latency of one proof).
 */
import { execFileSync } from 'node:child_process';
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import type { ProverOptions } from '../../src/providers/privacy-pools/prover.ts';
import { positiveInt, round, runMain, table } from '../support/figures.ts';
import { measureProving, type ProvingFigures } from './proof.ts';

const cores = availableParallelism();
const CONFIGURATIONS: Record<string, { label: string; options: ProverOptions }> = {
  snarkjs: { label: 'snarkjs, 1 at a time (before)', options: { backend: 'snarkjs' } },
  native: { label: `native, ${cores} at once x 1 thread (default)`, options: { backend: 'native' } },
  'native-latency': { label: `native, 1 at a time x ${cores} threads`, options: { backend: 'native', concurrency: 1 } },
};

const { values } = parseArgs({
  options: {
    sequential: { type: 'string', default: '3' },
    burst: { type: 'string', default: '8' },
    configuration: { type: 'string' },
    small: { type: 'boolean', default: false },
    json: { type: 'boolean', default: false },
  },
});
const sequential = values.small ? 1 : positiveInt(values.sequential, '--sequential');
const burst = values.small ? 2 : positiveInt(values.burst, '--burst');

runMain(async () => {
  // The child: one configuration, its figures as JSON on stdout.
  if (values.configuration) {
    const configuration = CONFIGURATIONS[values.configuration];
    if (!configuration) throw new Error(`unknown configuration ${values.configuration}`);
    console.log(JSON.stringify(await measureProving(configuration.options, { sequential, burst })));
    return;
  }
  const results: Record<string, ProvingFigures> = {};
  for (const name of Object.keys(CONFIGURATIONS)) {
    process.stderr.write(`measuring ${CONFIGURATIONS[name]!.label}…\n`);
    const out = execFileSync(
      process.execPath,
      // Loaded as the service's processes load code (the SDK's bundle not through tsx's hook, which holds ~300 MiB for it).
      [
        '--import',
        fileURLToPath(new URL('../../src/loader/register.mjs', import.meta.url)),
        fileURLToPath(import.meta.url),
        '--configuration',
        name,
        '--sequential',
        String(sequential),
        '--burst',
        String(burst),
      ],
      { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] },
    );
    results[name] = JSON.parse(out.trim().split('\n').at(-1)!);
  }
  const base = results.snarkjs!;
  const speedup = (name: string) => results[name]!.burst.proofsPerSecond / base.burst.proofsPerSecond;
  if (values.json) {
    console.log(
      JSON.stringify(
        { cores, sequential, burst, results, speedupOverSnarkjs: Object.fromEntries(Object.keys(results).map((n) => [n, round(speedup(n))])) },
        null,
        2,
      ),
    );
    return;
  }
  console.log(`withdrawal proofs (withdraw circuit, 2^16 domain) on ${cores} cores; ${sequential} one at a time, then ${burst} at once`);
  console.log(
    table([
      [
        'configuration',
        'ready s',
        'one proof s',
        'proofs/s',
        'x snarkjs',
        'CPU-s/proof',
        'RSS before',
        'peak process',
        'peak native',
        'peak total',
        'prover MiB',
      ],
      ...Object.entries(results).map(([name, f]) => [
        CONFIGURATIONS[name]!.label + (f.fallbackReason ? ` [fell back: ${f.fallbackReason}]` : ''),
        round(f.readySeconds),
        `${round(f.proofSeconds.median)} (${round(f.proofSeconds.min)}–${round(f.proofSeconds.max)})`,
        `${round(f.burst.proofsPerSecond)} (${f.burst.inFlight} in flight)`,
        round(speedup(name)),
        round(f.burst.cpuSecondsPerProof),
        Math.round(f.rssMiB.before),
        Math.round(f.rssMiB.peakProcess),
        Math.round(f.rssMiB.peakNativeProcesses),
        Math.round(f.rssMiB.peakTotal),
        Math.round(f.rssMiB.peakTotal - f.rssMiB.before),
      ]),
    ]),
  );
});
