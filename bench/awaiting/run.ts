/**
 * Many transfers awaiting deposit: do they slow the funded ones, and what does waiting cost?
 *
 * Two fresh stacks, one after the other: the baseline (N = 0) and the loaded one (N unfunded transfers
 * created first). On each: the service's JSON-RPC calls per second (private_route_rpc_requests_total of
 * this process and of the worker's /metrics) and the memory of the worker and of this process over a
 * window while the N transfers wait, then `--funded` transfers created and funded, their funded → COMPLETED
 * latency (capped at `--timeout`) and the worker's memory after them.
 *
 *   npm run bench:awaiting -- [--n 1000] [--funded 5] [--window 30] [--timeout 300] [--create-concurrency 10] [--no-baseline] [--in-process-worker] [--small] [--json]
 *
 * The worker runs as a process of its own (devnet/worker.ts, as in production): its RSS is read from
 * /proc/<pid>/status (VmRSS, and VmHWM restarted once it is ready). This process hosts the API and the
 * Relay/ASP/Iris emulators (anvil, Temporal and Postgres are child processes of it, not counted);
 * `--in-process-worker` runs the worker in this process too, as before, and has no worker row.
 */
import { parseArgs } from 'node:util';
import { rpcRequests } from '../../src/observability/metrics.ts';
import { proverOptions, proverSizing } from '../../src/providers/privacy-pools/prover.ts';
import { workerSlots } from '../../src/temporal/worker.ts';
import { max, median, positiveInt, round, runMain, table } from '../support/figures.ts';
import { MIN_PRIVACY_WINDOW_ENV, awaitTerminal, createTransfer, faucetFunder, progress, startBenchStack, type CreatedTransfer } from '../support/stack.ts';
import type { WorkerProcess } from '../support/workerProcess.ts';

const { values } = parseArgs({
  options: {
    n: { type: 'string', default: '1000' },
    funded: { type: 'string', default: '5' },
    window: { type: 'string', default: '30' },
    timeout: { type: 'string', default: '300' },
    'create-concurrency': { type: 'string', default: '10' },
    'no-baseline': { type: 'boolean', default: false },
    'in-process-worker': { type: 'boolean', default: false },
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
const workerMode = values['in-process-worker'] ? 'in-process' : 'external';

type Calls = Map<string, number>;

/** private_route_rpc_requests_total now, by "chain_id method": this process's (the API's) plus the worker process's. */
async function rpcCalls(worker: WorkerProcess | null): Promise<Calls> {
  const metric = await rpcRequests.get();
  const calls: Calls = new Map(metric.values.map((v) => [`${v.labels.chain_id} ${v.labels.method}`, v.value]));
  if (worker) for (const [key, value] of await worker.rpcCalls()) calls.set(key, (calls.get(key) ?? 0) + value);
  return calls;
}

const mib = (bytes: number) => Math.round(bytes / 2 ** 20);

/** The worker process's memory at one moment (MiB): resident now and the highest since ready. */
interface WorkerRss {
  rssMiB: number;
  peakMiB: number;
}

interface Phase {
  n: number;
  createSeconds: number | null;
  createsPerSecond: number | null;
  window: { seconds: number; callsPerSecond: number; byChainMethod: Record<string, number>; benchRssMiB: number; benchPeakRssMiB: number };
  /** Null with --in-process-worker. */
  worker: {
    pid: number;
    config: { maxCachedWorkflows: number; slots: { steps: number; waits: number; proofs: number } };
    /** VmRSS once ready, and VmHWM then (the boot's peak: loading, bundling the workflows). */
    ready: { rssMiB: number; bootPeakMiB: number };
    /** Whether `peakMiB` below counts from ready (VmHWM restarted); if not, it is the sampled maximum (1 s). */
    peakSinceReady: boolean;
    endOfWindow: WorkerRss;
    afterFunded: WorkerRss;
  } | null;
  funded: { transfers: number; completed: number; medianSeconds: number; maxSeconds: number; seconds: number[]; notCompleted: string[] };
}

async function phase(awaiting: number): Promise<Phase> {
  progress(`\n== N = ${awaiting}: starting a fresh local stack`);
  const bench = await startBenchStack({ env: MIN_PRIVACY_WINDOW_ENV, worker: workerMode });
  let workerSampler: NodeJS.Timeout | undefined;
  try {
    const { stack, worker } = bench;
    let workerReady: { rssMiB: number; bootPeakMiB: number } | null = null;
    let peakSinceReady = false;
    let sampledWorkerPeak = 0;
    /** VmRSS now, and VmHWM since ready where it could be restarted (else the 1 s samples' maximum). */
    const workerRss = (): WorkerRss | null => {
      if (!worker) return null;
      const m = worker.memory();
      sampledWorkerPeak = Math.max(sampledWorkerPeak, m.rss);
      return { rssMiB: mib(m.rss), peakMiB: mib(peakSinceReady ? m.peak : sampledWorkerPeak) };
    };
    if (worker) {
      const m = worker.memory();
      workerReady = { rssMiB: mib(m.rss), bootPeakMiB: mib(m.peak) };
      peakSinceReady = worker.resetPeak();
      sampledWorkerPeak = m.rss;
      workerSampler = setInterval(workerRss, 1000);
      progress(
        `worker process ${worker.pid} ready: RSS ${workerReady.rssMiB} MiB (boot peak ${workerReady.bootPeakMiB} MiB), WORKER_MAX_CACHED_WORKFLOWS=${worker.config.WORKER_MAX_CACHED_WORKFLOWS}`,
      );
    }
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
    const before = await rpcCalls(worker);
    const windowStart = performance.now();
    let peakRss = process.memoryUsage().rss;
    const sampler = setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage().rss)), 1000);
    await new Promise((resolve) => setTimeout(resolve, windowSeconds * 1000));
    clearInterval(sampler);
    const seconds = (performance.now() - windowStart) / 1000;
    const after = await rpcCalls(worker);
    const rss = process.memoryUsage().rss;
    peakRss = Math.max(peakRss, rss);
    const workerEndOfWindow = workerRss();
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
    const outcomes = await awaitTerminal(
      stack,
      transfers.map((t) => t.routeId),
      { timeoutSeconds, progress },
    );
    const latencies: number[] = [];
    const notCompleted: string[] = [];
    for (const t of transfers) {
      const o = outcomes.get(t.routeId)!;
      if (o.status === 'COMPLETED' && o.finishedAt !== null) latencies.push((o.finishedAt - fundedAt.get(t.routeId)!) / 1000);
      else notCompleted.push(`${t.routeId}: ${o.finishedAt === null ? `still ${o.status} after ${timeoutSeconds} s` : `${o.status} ${o.error ?? ''}`}`);
    }
    const workerAfterFunded = workerRss();
    return {
      n: awaiting,
      createSeconds: createSeconds === null ? null : round(createSeconds, 1),
      createsPerSecond: createSeconds === null ? null : round(awaiting / createSeconds, 1),
      window: { seconds: round(seconds, 1), callsPerSecond: round(total / seconds, 1), byChainMethod, benchRssMiB: mib(rss), benchPeakRssMiB: mib(peakRss) },
      worker:
        worker && workerReady && workerEndOfWindow && workerAfterFunded
          ? {
              pid: worker.pid,
              config: {
                maxCachedWorkflows: worker.config.WORKER_MAX_CACHED_WORKFLOWS,
                slots: workerSlots(worker.config, proverSizing(proverOptions(worker.config)).concurrency),
              },
              ready: workerReady,
              peakSinceReady,
              endOfWindow: workerEndOfWindow,
              afterFunded: workerAfterFunded,
            }
          : null,
      funded: {
        transfers: funded,
        completed: latencies.length,
        medianSeconds: round(median(latencies), 1),
        maxSeconds: round(max(latencies), 1),
        seconds: latencies.map((s) => round(s, 1)),
        notCompleted,
      },
    };
  } finally {
    clearInterval(workerSampler);
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
    p.funded.completed === 0
      ? `none completed within ${timeoutSeconds} s`
      : `median ${p.funded.medianSeconds} s, max ${p.funded.maxSeconds} s${p.funded.completed < p.funded.transfers ? ` (${p.funded.transfers - p.funded.completed} not completed within ${timeoutSeconds} s)` : ''}`;
  console.log(
    table([
      ['', ...phases.map((p) => `N = ${p.n}`)],
      ['creates', ...phases.map((p) => (p.createSeconds === null ? '-' : `${p.n} in ${p.createSeconds} s (${p.createsPerSecond}/s)`))],
      [`RPC calls/s while waiting (${windowSeconds} s)`, ...phases.map((p) => p.window.callsPerSecond)],
      ...(workerMode === 'external'
        ? [
            [
              'worker RSS (own process): ready / boot peak',
              ...phases.map((p) => (p.worker ? `${p.worker.ready.rssMiB} / ${p.worker.ready.bootPeakMiB} MiB` : '-')),
            ],
            [
              'worker RSS (own process): end of window / peak since ready',
              ...phases.map((p) => (p.worker ? `${p.worker.endOfWindow.rssMiB} / ${p.worker.endOfWindow.peakMiB} MiB` : '-')),
            ],
            [
              `worker RSS (own process): after the ${funded} funded / peak since ready`,
              ...phases.map((p) => (p.worker ? `${p.worker.afterFunded.rssMiB} / ${p.worker.afterFunded.peakMiB} MiB` : '-')),
            ],
          ]
        : []),
      [
        `RSS of the bench process (${workerMode === 'external' ? 'API + emulators' : 'API + worker + emulators'}): end of window / peak in window`,
        ...phases.map((p) => `${p.window.benchRssMiB} / ${p.window.benchPeakRssMiB} MiB`),
      ],
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
  const w = phases.find((p) => p.worker)?.worker;
  if (w) {
    console.log(
      `\nworker: its own process (devnet/worker.ts); WORKER_MAX_CACHED_WORKFLOWS=${w.config.maxCachedWorkflows}, slots steps ${w.config.slots.steps} / waits ${w.config.slots.waits} / proofs ${w.config.slots.proofs}.`,
    );
    console.log(
      `worker RSS from /proc/<pid>/status: VmRSS, and ${w.peakSinceReady ? 'VmHWM restarted once the worker was ready (creates, window and funded transfers included)' : 'the maximum of 1 s VmRSS samples since ready (VmHWM could not be restarted)'}; "boot peak" is VmHWM at ready (loading and bundling the workflows).`,
    );
    console.log(
      "bench process: the API and the Relay/ASP/Iris emulators; anvil, Temporal and Postgres run as child processes, not counted. RPC calls: the API's and the worker's.",
    );
  } else {
    console.log(
      '\nRSS: this process hosts the API, the worker (with its prover threads) and the emulators; anvil, Temporal and Postgres run as child processes.',
    );
  }
  // A loaded stack where no funded transfer completes is the finding this bench exists for, not a broken run.
});
