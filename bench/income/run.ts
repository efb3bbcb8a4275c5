/**
 * `npm run bench:income`: does collecting the service's income re-link routes? A simulation over weeks of traffic,
 * judged by a chain analyst who sees what is public: every deposit (value, time), every withdrawal of a class (one
 * amount per class, time), and every sweep to the treasury (amount, time).
 *
 * A route's change note holds its deposit's value less its class's withdrawal amount: public arithmetic, so the
 * analyst knows each deposit's change. A sweep whose amount fits one deposit's change names that deposit, and says its
 * withdrawal happened before the sweep. The analyst then names, for that route, the latest withdrawal of its class
 * before the sweep (the guess an immediate sweep makes right) and otherwise a withdrawal of the class after its
 * deposit within the longest wait, at random (what the analyst could do without any sweep).
 *
 * Strategies: `per-route now` (each route's whole change a minute after its withdrawal), `per-route later` (whole,
 * 1–3 days later), and `planned` (src/income/sweepPlan.ts: grid amounts, batches, notes 3 days old, a daily run at a
 * random hour with its sweeps spread over 6 hours; the production defaults: notes worth 1 USDC or more). Printed: routes
 * whose withdrawal the analyst names, against the no-sweep baseline; how many sweeps name a single deposit; and how much
 * of the income the sweeps collected (a planned sweep leaves each note's rest below the grid step, and notes below
 * 1 USDC, in the pool).
 *
 *   npm run bench:income -- [--days 28] [--routes-per-day 40] [--runs 5] [--json]
 */
import { parseArgs } from 'node:util';
import { type ChangeNoteFacts, gridAmountAtMost, planSweep } from '../../src/income/sweepPlan.ts';
import { mean, positiveInt, round, runMain } from '../support/figures.ts';

const HOUR = 3600;
const DAY = 24 * HOUR;
/** Amount classes (USDC, 6 decimals): each class withdraws one amount, so a deposit's change is public arithmetic. */
const CLASSES = 3;
const MAX_WAIT = 6 * HOUR;
const GRID_UNIT = 10_000n;

interface Route {
  id: string;
  cls: number;
  depositAt: number;
  change: bigint;
  withdrawnAt: number;
}

interface Sweep {
  amount: bigint;
  at: number;
}

type Strategy = 'per-route now' | 'per-route later' | 'planned';

function rng(seed: number) {
  let state = seed >>> 0 || 1;
  return () => {
    state = (state * 1_103_515_245 + 12_345) >>> 0;
    return state / 2 ** 32;
  };
}

function traffic(days: number, perDay: number, random: () => number): Route[] {
  const routes: Route[] = [];
  for (let i = 0; i < days * perDay; i++) {
    const depositAt = random() * days * DAY;
    // The change: an input's rounding down to its class, plus fees (5 cents to 2 USDC).
    const change = 50_000n + BigInt(Math.floor(random() * 1_950_000));
    // The exit lottery's wait: about an hour on average, at most the longest wait.
    const wait = Math.min(MAX_WAIT, -Math.log(1 - random()) * HOUR);
    routes.push({ id: `r${i}`, cls: Math.floor(random() * CLASSES), depositAt, change, withdrawnAt: depositAt + wait });
  }
  return routes;
}

function sweepsOf(strategy: Strategy, routes: Route[], days: number, random: () => number): Sweep[] {
  if (strategy === 'per-route now') return routes.map((r) => ({ amount: r.change, at: r.withdrawnAt + 60 }));
  if (strategy === 'per-route later') return routes.map((r) => ({ amount: r.change, at: r.withdrawnAt + DAY + random() * 2 * DAY }));
  // The production defaults (docs/operations.md, "Collecting the income").
  const settings = { gridUnit: GRID_UNIT, minAmount: 1_000_000n, minAgeSeconds: 3 * DAY, minBatch: 8 };
  const notes = new Map<string, ChangeNoteFacts>(
    routes.map((r) => [r.id, { routeId: r.id, generation: 1, asset: 'USDC', value: r.change, leftAt: r.withdrawnAt }]),
  );
  const out: Sweep[] = [];
  for (let day = 1; day <= days + 7; day++) {
    const runAt = day * DAY + random() * DAY;
    const plan = planSweep(
      [...notes.values()].filter((n) => n.leftAt <= runAt),
      runAt,
      settings,
    );
    for (const s of plan.sweeps) {
      const at = runAt + random() * 6 * HOUR;
      out.push({ amount: s.amount, at });
      notes.set(s.routeId, { ...notes.get(s.routeId)!, generation: s.generation + 1, value: s.noteValue - s.amount, leftAt: at });
    }
  }
  return out;
}

/** Of a route's class, the withdrawals the analyst cannot rule out: after its deposit, within the longest wait. */
const candidates = (route: Route, byClass: Route[][]) =>
  byClass[route.cls]!.filter((r) => r.withdrawnAt >= route.depositAt && r.withdrawnAt <= route.depositAt + MAX_WAIT);

function attack(strategy: Strategy, routes: Route[], swept: Sweep[], random: () => number) {
  // A sweep amount fits the deposits whose change it is (whole), or whose change's grid amount it is (planned; a later
  // generation's amount is smaller still, so this is the analyst's best case).
  const key = (r: Route) => (strategy === 'planned' ? gridAmountAtMost(r.change, GRID_UNIT) : r.change).toString();
  const byAmount = new Map<string, Route[]>();
  for (const r of routes) byAmount.set(key(r), [...(byAmount.get(key(r)) ?? []), r]);
  const sweepOf = new Map<string, Sweep>();
  let singled = 0;
  for (const s of swept) {
    const fitting = (byAmount.get(s.amount.toString()) ?? []).filter((r) => r.depositAt <= s.at);
    if (fitting.length === 1) {
      singled += 1;
      if (!sweepOf.has(fitting[0]!.id)) sweepOf.set(fitting[0]!.id, s);
    }
  }
  const byClass = Array.from({ length: CLASSES }, (_, c) => routes.filter((r) => r.cls === c));
  let named = 0;
  let baseline = 0;
  for (const route of routes) {
    const pool = candidates(route, byClass);
    if (pool.length === 0) continue;
    const atRandom = () => pool[Math.floor(random() * pool.length)]!;
    if (atRandom().id === route.id) baseline += 1;
    // With a sweep named to the route: its withdrawal is one before the sweep. An immediate sweep follows it at once (the
    // latest one); a later one only rules out what came after (one of those before, at random).
    const sweep = sweepOf.get(route.id);
    const before = sweep ? pool.filter((r) => r.withdrawnAt <= sweep.at).sort((a, b) => b.withdrawnAt - a.withdrawnAt) : [];
    const guess = before.length === 0 ? atRandom() : strategy === 'per-route now' ? before[0]! : before[Math.floor(random() * before.length)]!;
    if (guess.id === route.id) named += 1;
  }
  const collected = swept.reduce((sum, s) => sum + s.amount, 0n);
  const income = routes.reduce((sum, r) => sum + r.change, 0n);
  return { named, baseline, singled, sweeps: swept.length, collectedPercent: Number((collected * 1000n) / income) / 10 };
}

runMain(async () => {
  const { values } = parseArgs({
    options: {
      days: { type: 'string', default: '28' },
      'routes-per-day': { type: 'string', default: '40' },
      runs: { type: 'string', default: '5' },
      json: { type: 'boolean', default: false },
    },
  });
  const days = positiveInt(values.days, '--days');
  const perDay = positiveInt(values['routes-per-day'], '--routes-per-day');
  const runs = positiveInt(values.runs, '--runs');
  const strategies: Strategy[] = ['per-route now', 'per-route later', 'planned'];
  const results = strategies.map((strategy) => {
    const figures = Array.from({ length: runs }, (_, run) => {
      const random = rng(1000 + run);
      const routes = traffic(days, perDay, random);
      return { ...attack(strategy, routes, sweepsOf(strategy, routes, days, random), random), routes: routes.length };
    });
    const percent = (key: 'named' | 'baseline') => round(mean(figures.map((f) => (100 * f[key]) / f.routes)), 1);
    return {
      strategy,
      namedPercent: percent('named'),
      baselinePercent: percent('baseline'),
      sweeps: round(mean(figures.map((f) => f.sweeps)), 0),
      sweepsNamingOneDepositPercent: round(mean(figures.map((f) => (100 * f.singled) / Math.max(1, f.sweeps))), 1),
      collectedPercent: round(mean(figures.map((f) => f.collectedPercent)), 1),
    };
  });
  if (values.json) {
    process.stdout.write(`${JSON.stringify({ days, perDay, runs, results }, null, 2)}\n`);
    return;
  }
  process.stdout.write(`=== income sweeps: ${days} days, ${perDay} routes a day, ${runs} runs ===\n`);
  for (const r of results) {
    process.stdout.write(
      `${r.strategy.padEnd(16)} withdrawals named ${String(r.namedPercent).padStart(5)} % (no sweep: ${r.baselinePercent} %); ${r.sweeps} sweeps, ${r.sweepsNamingOneDepositPercent} % of them name one deposit; ${r.collectedPercent} % of the income collected\n`,
    );
  }
});
