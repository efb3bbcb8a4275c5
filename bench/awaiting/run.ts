/**
 * Many transfers awaiting deposit: do they slow the funded ones, and what does waiting cost?
 *
 * Two fresh stacks, one after the other: the baseline (N = 0) and the loaded one (N unfunded transfers
 * created first). On each: the service's JSON-RPC calls per second (private_route_rpc_requests_total,
 * read in-process) and this process's RSS over a window while the N transfers wait, then `--funded`
 * transfers created and funded, and their funded → COMPLETED latency, capped at `--timeout`.
 *
 *   npm run bench:awaiting -- [--n 1000] [--funded 5] [--window 30] [--timeout 300] [--create-concurrency 10] [--no-baseline] [--small] [--json]
 *
 * RSS is the bench process's: it hosts the API, the worker, its prover threads and the emulators (anvil,
 * Temporal and Postgres are child processes, not counted).
 */
import { parseArgs } from 'node:util';
import { rpcRequests } from '../../src/observability/metrics.ts';
import { max, median, positiveInt, round, runMain, table } from '../support/figures.ts';
import { MIN_PRIVACY_WINDOW_ENV, awaitTerminal, createTransfer, faucetFunder, progress, startBenchStack, type CreatedTransfer } from '../support/stack.ts';

const { values } = parseArgs({
  options: {
    n: { type: 'string', default: '1000' },
    funded: { type: 'string', default: '5' },
    window: { type: 'string', default: '30' },
    timeout: { type: 'string', default: '300' },
    'create-concurrency': { type: 'string', default: '10' },
    'no-baseline': { type: 'boolean', default: false },
    small: { type: 'boolean', default: false },
    json: { type: 'boolean', default: false },
  },
});
const n = values.small ? 50 : positiveInt(values.n, '--n', { allowZero: true });
const funded = values.small ? 2 : positiveInt(values.funded, '--funded');
const windowSeconds = values.small ? 10 : positiveInt(values.window, '--window');
const timeoutSeconds = values.small ? 180 : positiveInt(values.timeout, '--timeout');
const createConcurrency = positiveInt(values['create-concurrency'], '--create-concurrency');
const withBaseline = !values['no-baseline'];

type Calls = Map<string, number>;

/** private_route_rpc_requests_total now, by "chain_id method". */
async function rpcCalls(): Promise<Calls> {
  const metric = await rpcRequests.get();
  return new Map(metric.values.map((v) => [`${v.labels.chain_id} ${v.labels.method}`, v.value]));
}

interface Phase {
  n: number;
  createSeconds: number | null;
  createsPerSecond: number | null;
  window: { seconds: number; callsPerSecond: number; byChainMethod: Record<string, number>; rssMiB: number; peakRssMiB: number };
  funded: { transfers: number; completed: number; medianSeconds: number; maxSeconds: number; seconds: number[]; notCompleted: string[] };
}

async function phase(awaiting: number): Promise<Phase> {
  progress(`\n== N = ${awaiting}: starting a fresh local stack`);
  const bench = await startBenchStack({ env: MIN_PRIVACY_WINDOW_ENV });
  try {
    const { stack } = bench;
    let createSeconds: number | null = null;
    if (awaiting > 0) {
      progress(`creating ${awaiting} transfers that will never be funded (${createConcurrency} at a time)`);
      const started = performance.now();
      let next = 0;
      let lastProgress = started;
      await Promise.all(
        Array.from({ length: Math.min(createConcurrency, awaiting) }, async () => {
          while (next < awaiting) {
            next++;
            await createTransfer(stack, '10');
            if (performance.now() - lastProgress > 15_000) {
              progress(`  ${next}/${awaiting} created`);
              lastProgress = performance.now();
            }
          }
        }),
      );
      createSeconds = (performance.now() - started) / 1000;
      progress(`  ${awaiting} created in ${round(createSeconds, 1)} s`);
    }

    progress(`measuring RPC calls and RSS for ${windowSeconds} s while ${awaiting} transfer(s) wait`);
    const before = await rpcCalls();
    const windowStart = performance.now();
    let peakRss = process.memoryUsage().rss;
    const sampler = setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage().rss)), 1000);
    await new Promise((resolve) => setTimeout(resolve, windowSeconds * 1000));
    clearInterval(sampler);
    const seconds = (performance.now() - windowStart) / 1000;
    const after = await rpcCalls();
    const rss = process.memoryUsage().rss;
    peakRss = Math.max(peakRss, rss);
    const byChainMethod: Record<string, number> = {};
    let total = 0;
    for (const [key, value] of after) {
      const delta = value - (before.get(key) ?? 0);
      if (delta > 0) byChainMethod[key] = round(delta / seconds);
      total += delta;
    }

    progress(`creating and funding ${funded} transfer(s); waiting at most ${timeoutSeconds} s for COMPLETED`);
    const funder = faucetFunder(stack);
    const transfers: CreatedTransfer[] = [];
    for (let i = 0; i < funded; i++) transfers.push(await createTransfer(stack));
    const fundedAt = new Map<string, number>();
    for (const t of transfers) fundedAt.set(t.routeId, await funder.fund(t));
    const outcomes = await awaitTerminal(stack, transfers.map((t) => t.routeId), { timeoutSeconds, progress });
    const latencies: number[] = [];
    const notCompleted: string[] = [];
    for (const t of transfers) {
      const o = outcomes.get(t.routeId)!;
      if (o.status === 'COMPLETED' && o.finishedAt !== null) latencies.push((o.finishedAt - fundedAt.get(t.routeId)!) / 1000);
      else notCompleted.push(`${t.routeId}: ${o.finishedAt === null ? `still ${o.status} after ${timeoutSeconds} s` : `${o.status} ${o.error ?? ''}`}`);
    }
    return {
      n: awaiting,
      createSeconds: createSeconds === null ? null : round(createSeconds, 1),
      createsPerSecond: createSeconds === null ? null : round(awaiting / createSeconds, 1),
      window: { seconds: round(seconds, 1), callsPerSecond: round(total / seconds, 1), byChainMethod, rssMiB: Math.round(rss / 2 ** 20), peakRssMiB: Math.round(peakRss / 2 ** 20) },
      funded: { transfers: funded, completed: latencies.length, medianSeconds: round(median(latencies), 1), maxSeconds: round(max(latencies), 1), seconds: latencies.map((s) => round(s, 1)), notCompleted },
    };
  } finally {
    await bench.close();
  }
}

runMain(async () => {
  const phases: Phase[] = [];
  if (withBaseline && n > 0) phases.push(await phase(0));
  phases.push(await phase(n));

  if (values.json) {
    console.log(JSON.stringify({ phases }, null, 2));
    return;
  }
  console.log(`transfers awaiting deposit (privacy window at its minimum, production poll interval 1 s)\n`);
  const latency = (p: Phase) =>
    p.funded.completed === 0 ? `none completed within ${timeoutSeconds} s` : `median ${p.funded.medianSeconds} s, max ${p.funded.maxSeconds} s${p.funded.completed < p.funded.transfers ? ` (${p.funded.transfers - p.funded.completed} not completed within ${timeoutSeconds} s)` : ''}`;
  console.log(
    table([
      ['', ...phases.map((p) => `N = ${p.n}`)],
      ['creates', ...phases.map((p) => (p.createSeconds === null ? '-' : `${p.n} in ${p.createSeconds} s (${p.createsPerSecond}/s)`))],
      [`RPC calls/s while waiting (${windowSeconds} s)`, ...phases.map((p) => p.window.callsPerSecond)],
      ['RSS of the bench process (end of window / peak)', ...phases.map((p) => `${p.window.rssMiB} / ${p.window.peakRssMiB} MiB`)],
      [`${funded} funded: funded → COMPLETED`, ...phases.map(latency)],
    ]),
  );
  const base = phases.find((p) => p.n === 0);
  const loaded = phases.find((p) => p.n === n);
  if (base && loaded && n > 0 && base.funded.completed > 0 && loaded.funded.completed > 0) {
    console.log(`\nloaded / baseline median latency: ${round(loaded.funded.medianSeconds / base.funded.medianSeconds)}`);
  }
  for (const p of phases) {
    console.log(`\nRPC calls/s by "chain_id method", N = ${p.n}:`);
    const rows = Object.entries(p.window.byChainMethod).sort((a, b) => b[1] - a[1]);
    console.log(rows.length === 0 ? '  none' : table(rows.map(([k, v]) => [`  ${k}`, v])));
    if (p.funded.notCompleted.length > 0) console.log(`not completed:\n  ${p.funded.notCompleted.join('\n  ')}`);
  }
  console.log('\nRSS: this process hosts the API, the worker (with its prover threads) and the emulators; anvil, Temporal and Postgres run as child processes.');
  // A loaded stack where no funded transfer completes is the finding this bench exists for, not a broken run.
});
