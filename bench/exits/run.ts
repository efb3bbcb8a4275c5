/**
 * What the exit rules cost and buy, per class traffic level: a day (or --hours) of one class's routes on a virtual
 * clock (bench/exits/simulate.ts: the service's own gate, exit lottery and anonymity set), arriving at random (a
 * Poisson stream of --per-epoch routes per exit epoch), each from a user of its own asking for --min-set. Prints per
 * level: the sets GET reports (median, 10th percentile, share that reached the minimum, share that left at the
 * longest wait), the wait in the pool after the ASP's approval (median, p95) split into the gate and the lottery,
 * Kendall tau of entry against exit order, and what a first-in-first-out observer names against what the reports
 * allow (Σ 1/set).
 *
 *   npm run bench:exits -- [--rules production|local] [--per-epoch 0.25,0.5,1,2,4] [--hours 24] [--warmup 6] [--min-set N] [--runs N] [--json]
 *
 * The class runs --warmup hours before the day measured (a class that has just opened waits for its first peers:
 * that start is not what a day of steady traffic costs).
 *
 * `production` is the service's defaults (src/config.ts), `local` the local stack's (devnet/stack.ts). A simulation
 * of the rules, not of the chains: the linkability bench (bench/linkability, `--scenario users`) plays them on the
 * real stack against the attacker.
 */
import { parseArgs } from 'node:util';
import { configSchema } from '../../src/config.ts';
import { privacyRules } from '../../src/runtime.ts';
import { DEVNET_PRIVACY_ENV } from '../../devnet/stack.ts';
import { kendallTau, type SimRules, simulate } from './simulate.ts';

const { values } = parseArgs({
  options: {
    rules: { type: 'string', default: 'production' },
    'per-epoch': { type: 'string', default: '0.25,0.5,1,2,4' },
    hours: { type: 'string', default: '24' },
    warmup: { type: 'string', default: '6' },
    'min-set': { type: 'string' },
    runs: { type: 'string', default: '3' },
    json: { type: 'boolean', default: false },
  },
});

/** Just enough of a configuration for its privacy settings to take their defaults. */
const BASE_ENV = {
  DATABASE_URL: 'postgres://bench@127.0.0.1:1/bench',
  PRIVACY_POOLS_ENTRYPOINT: '0x0000000000000000000000000000000000000001',
  HUB_CHAIN_ID: '1',
  CHAIN_RPC_URLS: '{"1":"http://127.0.0.1:1"}',
};

function rulesFor(name: string): { rules: SimRules; minSet: number } {
  if (name !== 'production' && name !== 'local') throw new Error(`--rules must be production or local (got ${name})`);
  const parsed = configSchema.safeParse(name === 'local' ? { ...BASE_ENV, ...DEVNET_PRIVACY_ENV } : BASE_ENV);
  if (!parsed.success) throw new Error(`the bench's base configuration no longer parses: ${parsed.error.message}`);
  const config = parsed.data;
  return {
    rules: {
      ...privacyRules(config),
      pollSeconds: config.PRIVACY_POLL_SECONDS,
      // The wait measured starts at the approval: the review is the ASP's, whatever the rules.
      reviewSeconds: config.POOL_ETA_SECONDS > 60 ? 60 : config.POOL_ETA_SECONDS,
      proofSeconds: name === 'local' ? 2 : 30,
    },
    // The local stack asks for nobody by default; its users asking for 3 is the case worth measuring.
    minSet: name === 'local' ? 3 : config.PRIVACY_MIN_ANONYMITY_SET,
  };
}

const quantile = (sorted: number[], q: number) => (sorted.length === 0 ? Number.NaN : sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!);
const sortedOf = (xs: number[]) => [...xs].sort((a, b) => a - b);

interface LevelFigures {
  perEpoch: number;
  routes: number;
  set: { median: number; p10: number; reachedMinimum: number; leftAtLongestWait: number };
  waitSeconds: { median: number; p95: number; gateMedian: number; lotteryMedian: number; lotteryP95: number };
  tau: number;
  fifo: { hits: number; allowed: number };
}

/** A Poisson stream of `perEpoch` routes per epoch over `hours`, each a user of its own. */
function arrivals(rules: SimRules, perEpoch: number, hours: number, minSet: number, seed: number, start: number) {
  let state = seed >>> 0 || 1;
  const random = () => {
    state = (state * 1_103_515_245 + 12_345) >>> 0;
    return state / 2 ** 32;
  };
  const meanGapMs = (rules.epochSeconds * 1000) / perEpoch;
  const list: Array<{ at: number; client: string; minimum: number }> = [];
  for (let at = start + -Math.log(1 - random()) * meanGapMs; at < start + hours * 3_600_000; at += -Math.log(1 - random()) * meanGapMs) {
    list.push({ at, client: `user${list.length}`, minimum: minSet });
  }
  return list;
}

const START = 1_800_000_000_000;

function level(rules: SimRules, perEpoch: number, hours: number, warmupHours: number, minSet: number, runs: number): LevelFigures {
  const sets: number[] = [];
  const waits: number[] = [];
  const gates: number[] = [];
  const lotteries: number[] = [];
  const taus: number[] = [];
  let reached = 0;
  let longest = 0;
  let hits = 0;
  let allowed = 0;
  let routes = 0;
  for (let run = 0; run < runs; run++) {
    const from = START + warmupHours * 3_600_000;
    const result = simulate(rules, arrivals(rules, perEpoch, warmupHours + hours, minSet, 7919 * (run + 1) + Math.round(perEpoch * 1000), START));
    const measured = result.routes.filter((r) => r.enteredAt >= from);
    const ids = new Set(measured.map((r) => r.routeId));
    const entered = [...measured].sort((a, b) => a.enteredAt - b.enteredAt);
    const left = result.withdrawals.map((w) => w.routeId).filter((id) => ids.has(id));
    taus.push(
      kendallTau(
        entered.map((r) => r.routeId),
        left,
      ),
    );
    left.forEach((id, i) => {
      if (entered[i]?.routeId === id) hits++;
    });
    for (const route of measured) {
      routes++;
      const approvedAt = route.enteredAt + rules.reviewSeconds * 1000;
      sets.push(route.reported!);
      allowed += 1 / route.reported!;
      if (route.reported! >= route.minimum) reached++;
      if (route.gate === 'max-wait') longest++;
      waits.push((route.withdrawnAt! - approvedAt) / 1000);
      gates.push((route.gatedAt! - approvedAt) / 1000);
      lotteries.push((route.withdrawnAt! - route.gatedAt!) / 1000);
    }
  }
  const [s, w, g, l] = [sets, waits, gates, lotteries].map(sortedOf) as [number[], number[], number[], number[]];
  return {
    perEpoch,
    routes,
    set: { median: quantile(s, 0.5), p10: quantile(s, 0.1), reachedMinimum: reached / routes, leftAtLongestWait: longest / routes },
    waitSeconds: {
      median: quantile(w, 0.5),
      p95: quantile(w, 0.95),
      gateMedian: quantile(g, 0.5),
      lotteryMedian: quantile(l, 0.5),
      lotteryP95: quantile(l, 0.95),
    },
    tau: taus.reduce((a, b) => a + b, 0) / taus.length,
    fifo: { hits, allowed },
  };
}

const { rules, minSet: defaultMinSet } = rulesFor(values.rules);
const minSet = values['min-set'] === undefined ? defaultMinSet : Number(values['min-set']);
const hours = Number(values.hours);
const warmup = Number(values.warmup);
const runs = Number(values.runs);
const levels = values['per-epoch'].split(',').map(Number);
const figures = levels.map((perEpoch) => level(rules, perEpoch, hours, warmup, minSet, runs));

if (values.json) {
  console.log(JSON.stringify({ rules, minSet, hours, warmup, runs, levels: figures }, null, 2));
} else {
  const duration = (seconds: number) =>
    seconds >= 3600 ? `${(seconds / 3600).toFixed(1)} h` : seconds >= 120 ? `${Math.round(seconds / 60)} min` : `${Math.round(seconds)} s`;
  console.log(
    `${values.rules} rules: epochs of ${rules.epochSeconds} s, lottery mean ${rules.meanMinSeconds}–${rules.meanMaxSeconds} s, flush after ${rules.flushSeconds} s, longest wait ${rules.maxWaitSeconds} s; routes ask for ${minSet}; ${hours} h (after ${warmup} h of the same traffic) × ${runs} runs per level`,
  );
  console.log(
    'routes/epoch  routes  set median (p10)  reached  longest wait  wait after approval: median  p95   (gate median, lottery median, p95)  tau    FIFO hits / Σ1/set',
  );
  for (const f of figures) {
    console.log(
      [
        String(f.perEpoch).padEnd(12),
        String(f.routes).padStart(6),
        `${f.set.median} (${f.set.p10})`.padStart(16),
        `${Math.round(f.set.reachedMinimum * 100)} %`.padStart(8),
        `${Math.round(f.set.leftAtLongestWait * 100)} %`.padStart(13),
        duration(f.waitSeconds.median).padStart(28),
        duration(f.waitSeconds.p95).padStart(6),
        `   (${duration(f.waitSeconds.gateMedian)}, ${duration(f.waitSeconds.lotteryMedian)}, ${duration(f.waitSeconds.lotteryP95)})`.padEnd(40),
        f.tau.toFixed(2).padStart(5),
        `${f.fifo.hits} / ${f.fifo.allowed.toFixed(1)}`.padStart(14),
      ].join(' '),
    );
  }
}
