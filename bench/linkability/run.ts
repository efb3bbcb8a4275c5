/**
 * Linkability benchmark (design §4b): an outside observer's attempt to link deposits to payouts and pool
 * deposits to pool withdrawals, on the real local stack, printed next to chance, and per route the anonymity set
 * GET reported beside the one the attacker leaves.
 *
 *   npm run bench:linkability -- [--scenario relay|cross-asset|asp|cctp|users|analyst|all] [--mode relay|cctp] [--json]
 *     [--shared N] [--shared-amount 100] [--class N] [--class-amount 150] [--distinct N] [--sybil N] [--hub N]
 *     [--cross N] [--cross-amount 100] [--cross-spacing 25] [--price-epoch 30] [--volatility 20] [--price-step 5]
 *     [--price-seed S] [--sample-every 3] [--rejected N] [--no-ragequit] [--victims N] [--burst-clients one|distinct]
 *     [--maxwait N] [--no-poke] [--refund-delay-min S] [--refund-delay-max S] [--public-delay S] [--public-hold S]
 *     [--min-set N] [--max-wait S] [--exit-epoch S] [--gap-max S] [--timeout S] [--users N] [--rounds R]
 *     [--exit-mean-min S] [--exit-mean-max S] [--flush S] [--traffic-window S] [--min-peer-age S] [--reuse N];
 *     BENCH_LOG_LEVEL=info shows service logs
 *
 * `users` (users.ts): R rounds of N distinct users of one class on one stack, scored per round with the time-order
 * attacks (timeOrder.ts) and a gate-aware observer beside GET's sets. `analyst` (analyst.ts): issue 33's links around the
 * pool (address reuse, sender forgery, the funding moment from a routeId), each beside the figure of the rule it replaced.
 * The attacker (attacks.ts, posterior.ts) sees only public data (observe.ts): the three chains' JSON-RPC, the public
 * quote endpoint (also sampled while the transfers were created), Relay's public request history and the ASP's
 * public list of approved labels; and, for the routes of its own (Sybil) client, what their creator knows. The
 * harness (harness.ts) alone uses the database and GET of the routes it created, to know the truth and score the
 * guesses (score.ts). Exit code 0 after printing; 1 only when the harness itself failed (stack, transfers not completing).
 */
import { randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';
import { attack, type CrossAssetFigures, type Guesses } from './attacker.ts';
import { type Item, longestWaitAttack, type MomentScore, momentAttack, type MomentTarget } from './attacks.ts';
import {
  awaitTransfers,
  type BenchOptions,
  createAndFund,
  groundTruth,
  planRoutes,
  awaitDustRefunds,
  type Created,
  type HookArrivals,
  type PublicSightings,
  publicKnowledge,
  SCENARIOS,
  type Scenario,
  startBench,
  startDustPoker,
  startHookReceiver,
  STRAY_SCAN_SECONDS,
  watchPublicViews,
} from './harness.ts';
import { observe, type QuoteSample, startQuoteSampler } from './observe.ts';
import { runUsers, type UsersResult, usersReport } from './users.ts';
import { type AnalystResult, analystReport, runAnalyst } from './analyst.ts';
import { effectiveSet } from './posterior.ts';
import { type GroupScore, type LinkScore, type OrderScore, orderScore, type RouteTruth, routeSet, scoreGroup, scoreLinks, scoreTracing } from './score.ts';

// ------------------------------------------------------------------ options

const DEFAULTS: Record<Scenario, Record<string, string>> = {
  relay: { shared: '4', sybil: '2', class: '4', distinct: '2', victims: '1', maxwait: '3', 'min-set': '3', 'max-wait': '150', 'exit-epoch': '10' },
  'cross-asset': { cross: '5', 'min-set': '2', 'max-wait': '90', 'exit-epoch': '10' },
  asp: { shared: '5', rejected: '1', 'min-set': '3', 'max-wait': '150', 'exit-epoch': '10' },
  cctp: { shared: '3', hub: '3', distinct: '1', 'min-set': '2', 'max-wait': '150', 'exit-epoch': '10' },
  // The local stack's privacy rules (devnet/stack.ts DEVNET_PRIVACY_ENV): epochs of 3 s, the longest wait 20 s.
  users: { users: '16', rounds: '1', 'min-set': '3', 'max-wait': '20', 'exit-epoch': '3' },
  // Issue 33's links around the pool, on the local stack's privacy rules.
  analyst: { users: '8', reuse: '1', 'min-set': '3', 'max-wait': '20', 'exit-epoch': '3', 'gap-max': '6' },
};
const COMMON: Record<string, string> = {
  shared: '0',
  'shared-amount': '100',
  class: '0',
  'class-amount': '150',
  distinct: '0',
  sybil: '0',
  hub: '0',
  cross: '0',
  'cross-amount': '100',
  'cross-spacing': '25',
  'price-epoch': '30',
  volatility: '30',
  'price-step': '5',
  'sample-every': '3',
  rejected: '0',
  victims: '0',
  'burst-clients': 'one',
  maxwait: '0',
  'refund-delay-min': '20',
  'refund-delay-max': '120',
  'gap-max': '1.5',
  users: '16',
  rounds: '1',
  reuse: '0',
  // The exit lottery (issue 32) as on the local stack: mean wait 9–45 s, a flush 180 s after the oldest open gate,
  // traffic counted over 432 s; no minimum age.
  'exit-mean-min': '9',
  'exit-mean-max': '45',
  flush: '180',
  'traffic-window': '432',
  'min-peer-age': '0',
  'public-delay': '30',
  'public-hold': '450',
  timeout: '900',
};

function burstClients(text: string): 'one' | 'distinct' {
  if (text !== 'one' && text !== 'distinct') throw new Error(`--burst-clients must be one or distinct (got ${text})`);
  return text;
}

function options(): { json: boolean; runs: BenchOptions[] } {
  const names = [...new Set([...Object.keys(COMMON), ...Object.values(DEFAULTS).flatMap((d) => Object.keys(d))])];
  const { values } = parseArgs({
    options: {
      ...Object.fromEntries(names.map((n) => [n, { type: 'string' as const }])),
      scenario: { type: 'string', default: 'relay' },
      mode: { type: 'string' },
      'price-seed': { type: 'string' },
      'no-ragequit': { type: 'boolean', default: false },
      'no-poke': { type: 'boolean', default: false },
      json: { type: 'boolean', default: false },
    },
  });
  const given = values as Record<string, string | boolean | undefined>;
  const scenario = String(given.scenario);
  const scenarios: Scenario[] = scenario === 'all' ? SCENARIOS : SCENARIOS.includes(scenario as Scenario) ? [scenario as Scenario] : [];
  if (scenarios.length === 0) throw new Error(`--scenario must be one of ${[...SCENARIOS, 'all'].join(', ')} (got ${scenario})`);
  const mode = given.mode;
  if (mode !== undefined && mode !== 'relay' && mode !== 'cctp') throw new Error(`--mode must be relay or cctp (got ${mode})`);
  const runs = scenarios.map((s): BenchOptions => {
    const text = (name: string) => String(given[name] ?? DEFAULTS[s][name] ?? COMMON[name]);
    const int = (name: string, min: number) => {
      const n = Number(text(name));
      if (!Number.isInteger(n) || n < min) throw new Error(`--${name} must be an integer ≥ ${min} (got ${text(name)})`);
      return n;
    };
    const seconds = (name: string, max = 600) => {
      const n = Number(text(name));
      if (!Number.isFinite(n) || n < 0 || n > max) throw new Error(`--${name} must be a number of seconds in [0, ${max}] (got ${text(name)})`);
      return n;
    };
    const runMode = s === 'cctp' ? 'cctp' : s === 'cross-asset' ? 'relay' : ((mode as 'relay' | 'cctp' | undefined) ?? 'relay');
    return {
      scenario: s,
      mode: runMode,
      shared: int('shared', 0),
      sharedAmount: text('shared-amount'),
      classSize: int('class', 0),
      classAmount: text('class-amount'),
      distinct: int('distinct', 0),
      sybil: int('sybil', 0),
      hub: int('hub', 0),
      cross: int('cross', 0),
      crossAmount: text('cross-amount'),
      crossSpacingSeconds: seconds('cross-spacing'),
      rejected: int('rejected', 0),
      victims: s === 'cross-asset' ? 0 : int('victims', 0),
      burstClients: burstClients(text('burst-clients')),
      maxWaitGroup: s === 'cross-asset' ? 0 : int('maxwait', 0),
      // users: the time-order attacks only (no pokes; the issue 19 channels are the other scenarios').
      poke: s !== 'users' && !given['no-poke'],
      refundDelayMinSeconds: int('refund-delay-min', 0),
      refundDelayMaxSeconds: int('refund-delay-max', 0),
      ragequitRejected: !given['no-ragequit'],
      users: int('users', 1),
      rounds: int('rounds', 1),
      reuse: int('reuse', 0),
      minAnonymitySet: int('min-set', 1),
      maxWaitSeconds: int('max-wait', 1),
      exitEpochSeconds: int('exit-epoch', 1),
      exitMeanMinSeconds: int('exit-mean-min', 1),
      exitMeanMaxSeconds: int('exit-mean-max', 1),
      flushSeconds: int('flush', 1),
      trafficWindowSeconds: int('traffic-window', 1),
      minPeerAgeSeconds: int('min-peer-age', 0),
      publicDelaySeconds: int('public-delay', 0),
      publicHoldSeconds: int('public-hold', 0),
      gapMaxSeconds: seconds('gap-max'),
      timeoutSeconds: int('timeout', 10),
      priceEpochSeconds: int('price-epoch', 1),
      volatilityBps: s === 'cross-asset' ? int('volatility', 0) : 0,
      priceStepSeconds: int('price-step', 1),
      priceSeed: typeof given['price-seed'] === 'string' ? given['price-seed'] : `bench-${randomBytes(4).toString('hex')}`,
      sampleEverySeconds: seconds('sample-every', 60),
      progress: (line: string) => process.stderr.write(`[bench ${s}] ${line}\n`),
    };
  });
  return { json: !!given.json, runs };
}

// ------------------------------------------------------------------ scoring

interface GroupFigures {
  group: string;
  size: number;
  pool: { value: GroupScore; rootAware: GroupScore; classFifo: GroupScore; fingerprint: GroupScore | null };
  endToEnd: { value: GroupScore; classFifo: GroupScore; fingerprint: GroupScore | null };
}

interface RouteFigures extends RouteTruth {
  /** What its payout paid, as the attacker sees it (smallest units); OFF-GRID when it is not the route's class value. */
  payoutValue: string | null;
  offGrid: boolean;
  effectiveSet: number | null;
  overstated: boolean;
  miss: boolean;
  poolLinked: boolean;
  endToEndLinked: boolean;
}

function score(routes: RouteTruth[], g: Guesses) {
  const completed = routes.filter((r) => r.status === 'COMPLETED');
  const scored = completed.filter((r) => !r.attackerOwn);
  const truth = (pair: (r: RouteTruth) => [string | null, string | null]) =>
    new Map(
      completed.flatMap((r) => {
        const [a, b] = pair(r);
        return a && b ? [[a, b] as const] : [];
      }),
    );
  const poolTruth = truth((r) => [r.shieldTx, r.unshieldTx]);
  const byId = <T extends Item>(items: T[]) => new Map(items.map((i) => [i.id, i]));
  const poolDep = (r: RouteTruth) => r.shieldTx;
  const poolWd = (r: RouteTruth) => r.unshieldTx;
  const srcDep = (r: RouteTruth) => r.depositAddress;
  const payout = (r: RouteTruth) => r.payoutTx;

  const groups: GroupFigures[] = [...new Set(scored.map((r) => r.group))].map((group) => {
    const members = scored.filter((r) => r.group === group);
    return {
      group,
      size: members.length,
      pool: {
        value: scoreGroup(members, g.pool.value, poolDep, poolWd),
        rootAware: scoreGroup(members, g.pool.rootAware, poolDep, poolWd),
        classFifo: scoreGroup(members, g.pool.classFifo, poolDep, poolWd),
        fingerprint: g.pool.fingerprint ? scoreGroup(members, g.pool.fingerprint, poolDep, poolWd) : null,
      },
      endToEnd: {
        value: scoreGroup(members, g.endToEnd.value, srcDep, payout),
        classFifo: scoreGroup(members, g.endToEnd.classFifo, srcDep, payout),
        fingerprint: g.endToEnd.fingerprint ? scoreGroup(members, g.endToEnd.fingerprint, srcDep, payout) : null,
      },
    };
  });

  const effective = (w: string, d: string | null) => effectiveSet(g.posterior, w, d);
  const routeFigures: RouteFigures[] = routes.map((r) => {
    const set = r.status === 'COMPLETED' && !r.attackerOwn ? routeSet(r, effective, g.candidates) : null;
    const paidValue = g.paid.find((p) => p.id === r.payoutTx)?.value.toString() ?? null;
    return {
      ...r,
      payoutValue: paidValue,
      offGrid: paidValue !== null && r.classValue !== null && paidValue !== r.classValue,
      effectiveSet: set?.effective ?? null,
      overstated: set?.overstated ?? false,
      miss: set?.miss ?? false,
      poolLinked: !!r.shieldTx && g.pool.classFifo.get(r.shieldTx) === r.unshieldTx,
      endToEndLinked: g.endToEnd.classFifo.get(r.depositAddress) === r.payoutTx,
    };
  });
  const compared = routeFigures.filter((r) => r.effectiveSet !== null && r.anonymitySet !== null);
  // The fingerprint without time order: the expected number right when ties among the predicted value's payouts are broken at random.
  const options = g.pool.fingerprintOptions;
  const fingerprintValueOnly = options
    ? scored.reduce((sum, r) => {
        const ids = r.shieldTx ? options.get(r.shieldTx) : undefined;
        return sum + (ids && r.unshieldTx && ids.includes(r.unshieldTx) ? 1 / ids.length : 0);
      }, 0)
    : null;

  // The ASP: per withdrawal (mined order) what its root approved; per rejected route, where its deposit was left out.
  const withdrawalsInOrder = [...g.exits].sort((a, b) => a.withdrawal.order - b.withdrawal.order);
  const rejected = routes
    .filter((r) => r.rejected)
    .map((r) => {
      const entry = g.entries.find((e) => e.id === r.shieldTx);
      const possible = entry ? g.classes.get(entry.id) : undefined;
      const sameClassAfter = withdrawalsInOrder.filter(
        (x) => entry && x.payout && x.withdrawal.order > entry.deposit.order && (!possible || (x.classKey !== null && possible.has(x.classKey))),
      );
      return {
        routeId: r.routeId,
        status: r.status,
        approvedIndex: g.asp.labelApprovedAt(entry?.deposit.label ?? null),
        ragequit: r.status === 'FAILED',
        sameClassWithdrawalsAfter: sameClassAfter.length,
        candidateOf: sameClassAfter.filter((x) => g.candidates.get(x.id)?.ids.includes(entry!.id)).length,
      };
    });

  return {
    completed: completed.length,
    control: scoreLinks(
      g.control,
      truth((r) => [r.fillTx, r.shieldTx]),
    ),
    tracing: {
      entries: scoreTracing(completed, new Map(g.entries.map((e) => [e.id, e.source?.id ?? null])), poolDep, srcDep),
      exits: scoreTracing(completed, new Map(g.exits.map((x) => [x.id, x.payout?.id ?? null])), poolWd, payout),
      via: [...new Set([...g.entries.map((e) => `in: ${e.via}`), ...g.exits.map((x) => `out: ${x.via}`)])],
    },
    pool: {
      identifier: scoreLinks(g.pool.identifier, poolTruth),
      stateRoot: scoreLinks(g.pool.stateRoot, poolTruth),
      gas: { ...scoreLinks(g.pool.gas.links, poolTruth), funders: g.pool.gas.funders },
      /** Per group of look-alikes: exit order against entry order. */
      order: [...new Set(scored.map((r) => r.group))]
        .filter((group) => group !== 'distinct')
        .map((group) => ({
          group,
          ...orderScore(
            scored.filter((r) => r.group === group),
            byId(g.deposits),
            byId(g.withdrawals),
          ),
        })),
    },
    endToEnd: {
      identifier: scoreLinks(
        g.endToEnd.identifier,
        truth((r) => [r.depositAddress, r.payoutTx]),
      ),
      quotePredictable: g.endToEnd.quotePredictable,
    },
    groups,
    fingerprintValueOnly,
    asp: {
      leaves: g.asp.leaves,
      rootsOnChain: g.asp.rootsOnChain,
      rootsReproduced: g.asp.rootsReproduced,
      ragequits: g.asp.ragequits,
      withdrawals: withdrawalsInOrder.map((x) => {
        const c = g.candidates.get(x.id)!;
        return { withdrawal: x.id, classKey: c.classKey, candidates: c.ids.length, approvedAtRoot: c.approvedAtRoot, excluded: c.excluded };
      }),
      rejected,
    },
    routes: routeFigures,
    summary: {
      compared: compared.length,
      overstated: compared.filter((r) => r.overstated).length,
      misses: routeFigures.filter((r) => r.miss).length,
      offGrid: routeFigures.filter((r) => r.offGrid).length,
      unsolved: g.posterior.unsolved.length,
    },
  };
}

// ------------------------------------------------------------------ report

interface ScenarioResult {
  scenario: Exclude<Scenario, 'users' | 'analyst'>;
  mode: 'relay' | 'cctp';
  settings: Record<string, string | number | boolean>;
  notes: string[];
  planned: number;
  seconds: { stack: number; transfers: number; attack: number; total: number };
  observed: { poolDeposits: number; poolWithdrawals: number; sourceDeposits: number; payouts: number; relayRequests: number | null; ownPairs: number };
  crossAsset: CrossAssetFigures | null;
  scored: ReturnType<typeof score>;
  timing: TimingAttacks;
}

interface TimingAttacks {
  /** GET without a token: the moment each route's public view first showed its end, against the payouts. */
  publicView: MomentScore & { moments: number };
  /** A webhook receiver per route: its last delivery, against the payouts. */
  webhooks: MomentScore & { receivers: number };
  /** The dust poke: each stray's refund against the payouts. */
  dust: (MomentScore & { poked: number; pokedInFlight: number; refunded: number; beforePayout: number; toRecipients: number; lagSeconds: number[] }) | null;
  /** Routes that left at the longest wait. */
  longestWait: MomentScore;
  /** n − 1: each victim, its burst, and whether the burst opened its gate. */
  victims: Array<{ routeId: string; burst: number; burstClients: 'one' | 'distinct'; gateOpenedByBurst: boolean; get: number | null }>;
}

/** Slack for a withdrawal after its epoch began: a proof (and a bridge-out). */
const PROOF_AND_BRIDGE_SECONDS = 120;
/** Slack between a payout and the moment the service recorded COMPLETED (its receipt, a block or two). */
const RECORD_SECONDS = 5;
/** WEBHOOK_MAX_DELAY_SECONDS on the stack (the default). */
const WEBHOOK_MAX_DELAY_SECONDS = 30;

/**
 * The issue 19 attacks on moments. Each route's class is what the attacker's quote inversion gave its source deposit
 * (the public view shows the amount; a receiver's observer is granted it too: a stronger attacker).
 */
function timingAttacks(
  bench: BenchOptions,
  routes: RouteTruth[],
  created: Created[],
  guesses: Awaited<ReturnType<typeof attack>>,
  sightings: PublicSightings,
  arrivals: HookArrivals,
): TimingAttacks {
  const scored = routes.filter((r) => r.status === 'COMPLETED' && !r.attackerOwn && r.unshieldTx && r.payoutTx);
  const byRoute = new Map(created.map((c) => [c.routeId, c]));
  const classKeys = (r: RouteTruth) => {
    const entry = guesses.entries.find((e) => e.source?.id === r.depositAddress);
    return entry ? (guesses.classes.get(entry.id) ?? new Set<string>()) : null;
  };
  const ownExits = new Set(guesses.own.values());
  const payouts = guesses.exits
    .filter((x) => !ownExits.has(x.id) && x.payout)
    .map((x) => ({ id: x.payout!.id, timestamp: x.payout!.timestamp, classKey: x.classKey }));
  // The end shows (and its webhooks go out) at the next epoch start after both the route's own delay after COMPLETED and
  // the hold after its funding (published rules): so its payout came after the funding and at most the hold, the
  // delay, an epoch and the recording before. The payout names the withdrawal (the bridge is public).
  const endWindow = bench.publicHoldSeconds + bench.publicDelaySeconds + bench.exitEpochSeconds + RECORD_SECONDS;
  const fundedAt = (r: RouteTruth) => guesses.entries.find((e) => e.source?.id === r.depositAddress)?.source?.timestamp;

  const viewTargets: MomentTarget[] = [];
  const moments = new Set<number>();
  for (const r of scored) {
    const at = sightings.get(r.routeId)?.get('COMPLETED');
    if (at === undefined) continue;
    moments.add(Math.floor(at / 1000));
    viewTargets.push({ at: Math.floor(at / 1000), from: fundedAt(r), classKeys: classKeys(r), truth: r.payoutTx! });
  }

  const hookTargets: MomentTarget[] = [];
  for (const r of scored) {
    // The observer sees arrivals, not bodies: the last is the end's (alone before issue 19, or in the end's batch).
    const times = [...(arrivals.get(byRoute.get(r.routeId)?.hookPath ?? '') ?? [])].sort((a, b) => a - b);
    if (times.length < 2) continue;
    hookTargets.push({ at: Math.floor(times.at(-1)! / 1000), from: fundedAt(r), classKeys: classKeys(r), truth: r.payoutTx! });
  }

  let dust: TimingAttacks['dust'] = null;
  if (bench.poke) {
    const poked = scored.filter((r) => byRoute.get(r.routeId)?.pokedAt);
    const payoutAt = new Map(payouts.map((p) => [p.id, p.timestamp]));
    const recipients = new Set(guesses.exits.flatMap((x) => (x.payout ? [x.payout.recipient] : [])));
    const dustTargets: MomentTarget[] = [];
    const lags: number[] = [];
    let toRecipients = 0;
    for (const r of poked) {
      const refund = guesses.refunds.find((f) => f.depositAddress === r.depositAddress);
      if (!refund) continue;
      if (recipients.has(refund.to)) toRecipients++;
      const paidAt = payoutAt.get(r.payoutTx!);
      if (paidAt !== undefined) lags.push(refund.timestamp - paidAt);
      dustTargets.push({ at: refund.timestamp, classKeys: classKeys(r), truth: r.payoutTx! });
    }
    dust = {
      ...momentAttack(dustTargets, payouts, {
        windowSeconds: bench.refundDelayMaxSeconds + STRAY_SCAN_SECONDS + 60,
        minLagSeconds: bench.refundDelayMinSeconds,
      }),
      poked: created.filter((c) => c.pokedAt).length,
      pokedInFlight: poked.length,
      refunded: dustTargets.length,
      beforePayout: lags.filter((l) => l < 0).length,
      toRecipients,
      lagSeconds: lags.sort((a, b) => a - b),
    };
  }

  const leftAtMaxWait = new Map(scored.filter((r) => r.leftAtMaxWait && r.shieldTx).map((r) => [r.shieldTx!, r.unshieldTx!]));
  const longestWait = longestWaitAttack(
    guesses.entries,
    guesses.exits,
    new Map([...guesses.classes].map(([id, keys]) => [id, keys ?? new Set<string>()])),
    { epochSeconds: bench.exitEpochSeconds, maxWaitSeconds: bench.maxWaitSeconds, proofSeconds: PROOF_AND_BRIDGE_SECONDS },
    guesses.own,
    leftAtMaxWait,
  );

  const victims = routes
    .filter((r) => r.group === 'victim')
    .map((v) => {
      const index = created.filter((c) => c.group === 'victim').findIndex((c) => c.routeId === v.routeId);
      return {
        routeId: v.routeId,
        burst: created.filter((c) => c.group === 'burst' && c.follows === index).length,
        burstClients: bench.burstClients,
        // It left before its longest wait: its set was reached, which only the burst could do (its amount is its own).
        gateOpenedByBurst: v.status === 'COMPLETED' && v.leftAtMaxWait === false,
        get: v.anonymitySet,
      };
    });

  return {
    publicView: { ...momentAttack(viewTargets, payouts, { windowSeconds: endWindow }), moments: moments.size },
    webhooks: {
      ...momentAttack(hookTargets, payouts, { windowSeconds: endWindow + WEBHOOK_MAX_DELAY_SECONDS }),
      receivers: hookTargets.length,
    },
    dust,
    longestWait,
    victims,
  };
}

const pad = (text: string | number, width: number) => String(text).padEnd(width);
const short = (id: string | null) => (id ? `${id.slice(0, 10)}…` : '-');

function groupLines(figures: GroupFigures): string[] {
  const { group, size } = figures;
  const s = (label: string, x: GroupScore | null) => (x ? `${label} ${x.correct}/${x.size}` : null);
  const attacks = (side: GroupFigures['pool'] | GroupFigures['endToEnd'], extra: Array<string | null>) =>
    [s('by value (FIFO)', side.value), ...extra, s('quote inversion + FIFO in class', side.classFifo), s('price fingerprint', side.fingerprint)]
      .filter(Boolean)
      .join('; ');
  const best = Math.max(...[...Object.values(figures.pool), ...Object.values(figures.endToEnd)].map((x) => x?.correct ?? 0));
  const verdict =
    group === 'distinct'
      ? '(expected: each its own class, linked)'
      : `chance 1.0/${size}; target ≤ 2 → ${size <= 2 ? 'n/a (K ≤ 2)' : best <= 2 ? 'MET' : 'MISSED'}`;
  return [
    `  ${group} (K=${size}) ${verdict}`,
    `      pool:       ${attacks(figures.pool, [s('inside proof root', figures.pool.rootAware)])}`,
    `      end to end: ${attacks(figures.endToEnd, [])}`,
  ];
}

function linkLine(label: string, x: LinkScore): string {
  const wrong = x.details.filter((d) => !d.correct).length;
  return `  ${label}: ${x.links} links, ${x.correct} correct${wrong ? `, ${wrong} wrong` : ''}`;
}

function orderLine(o: OrderScore & { group: string }): string {
  return o.exitPositions.length < 2
    ? `  ${o.group} group exit order: n/a`
    : `  ${o.group} group exit order (entry 1..${o.exitPositions.length} → exit positions): [${o.exitPositions.join(', ')}]; Kendall tau ${o.kendallTau.toFixed(2)} (1 = FIFO, ~0 = unrelated)`;
}

function report(r: ScenarioResult): string {
  const sc = r.scored;
  const settings = Object.entries(r.settings)
    .map(([k, v]) => `${k} ${v}`)
    .join(', ');
  const lines = [
    `=== linkability: scenario ${r.scenario} (${r.mode === 'cctp' ? 'burn-and-mint, CCTP' : 'deposit-address, Relay'}) ===`,
    `settings: ${settings}`,
    ...r.notes.map((n) => `note: ${n}`),
    `completed ${sc.completed}/${r.planned}; time: stack ${r.seconds.stack} s, transfers ${r.seconds.transfers} s, attack ${r.seconds.attack} s, total ${r.seconds.total} s`,
    `observed (public data): ${r.observed.poolDeposits} pool deposits, ${r.observed.poolWithdrawals} withdrawals, ${r.observed.sourceDeposits} source deposits, ${r.observed.payouts} payouts, ${r.observed.relayRequests ?? 'no'} Relay requests; attacker's own routes known: ${r.observed.ownPairs}`,
    `public bridges: entries traced to their source deposit ${sc.tracing.entries.correct}/${sc.tracing.entries.routes} correct, exits to their payout ${sc.tracing.exits.correct}/${sc.tracing.exits.routes} correct (${sc.tracing.via.join('; ')})`,
    `positive control: identifier attack links bridge-in fills to pool deposits ${sc.control.correct}/${sc.completed}`,
    '',
    'shared identifiers, roots, gas (pool deposit → withdrawal; end to end)',
    linkLine('identifier links (pool)', sc.pool.identifier),
    linkLine('state-root links (pool)', sc.pool.stateRoot),
    linkLine('gas-funding links (pool)', sc.pool.gas),
    linkLine('identifier links (end to end)', sc.endToEnd.identifier),
    ...sc.pool.order.map(orderLine),
    `  the public quote of a source deposit's exact value names its payout's value for ${sc.endToEnd.quotePredictable}/${r.observed.sourceDeposits} deposits (with classes: the class, shared by the class's routes)`,
    '',
    'groups: attacker correct / K (chance: a random matching of K look-alikes gets 1 right; target ≤ chance + 1)',
    ...sc.groups.flatMap(groupLines),
  ];
  if (r.crossAsset) {
    const c = r.crossAsset;
    lines.push(
      '',
      'price fingerprint (cross-asset)',
      c.pricesMove
        ? `  quote samples ${c.samples}: ${c.epochsSeen} price epochs seen (runs of one held price), ${c.sampledValues} distinct quoted values; the ${c.payouts} WETH payouts got ${c.payoutValues} distinct values; samples predicted a class for ${c.predicted}/${c.deposits} deposits; by value alone (ties at random) expected correct ${sc.fingerprintValueOnly?.toFixed(1) ?? '-'}/${c.deposits}`
        : '  n/a: the bridge has no moving prices (no GET /_emulator/prices); every quote of the input was the same',
    );
  }
  const timedOut = sc.asp.withdrawals.reduce((sum, w) => sum + (w.excluded.timing ?? 0), 0);
  const kept = sc.asp.withdrawals.reduce((sum, w) => sum + w.candidates, 0);
  const t = r.timing;
  const m = (label: string, x: MomentScore, extra = '') =>
    `  ${label}: named its own ${x.linked}/${x.routes} (chance ${x.chance.toFixed(1)}/${x.routes}: a uniform guess among ${x.meanCandidates.toFixed(1)} candidates on average${x.misses ? `; ${x.misses} outside the attacker's window` : ''})${extra}`;
  lines.push(
    '',
    'timing attacks (issue 19): the attacker names the latest event of the route’s class before the moment it watches, next to a uniform guess among the same candidates',
    m(
      'public view (routeIds held, no statusToken, read every 0.5 s; the moment its end showed → payouts)',
      t.publicView,
      `; views changed at ${t.publicView.moments} distinct seconds`,
    ),
    m(`webhooks (one receiver per route; its last delivery → payouts)`, t.webhooks),
    t.dust
      ? m(
          `dust poke (0.10 USDC to ${t.dust.poked} deposit addresses, ${t.dust.pokedInFlight} scored routes poked in flight, ${t.dust.refunded} refunds seen; refund → payouts)`,
          t.dust,
          `; refunds before their route's payout ${t.dust.beforePayout}/${t.dust.refunded}; to a payout's recipient ${t.dust.toRecipients}; refund − payout ${t.dust.lagSeconds.length ? `${t.dust.lagSeconds[0]}–${t.dust.lagSeconds.at(-1)} s (median ${t.dust.lagSeconds[Math.floor(t.dust.lagSeconds.length / 2)]})` : 'n/a'}`,
        )
      : '  dust poke: off (--no-poke)',
    m(
      'longest wait (the old rule: deposit + PRIVACY_MAX_WAIT_SECONDS → the next epoch; routes that left at it. Under the exit lottery a note gated at its longest wait leaves at a random later epoch: the rule no longer holds, kept for comparison)',
      t.longestWait,
    ),
    ...t.victims.map((v) => {
      const route = sc.routes.find((x) => x.routeId === v.routeId);
      return `  n − 1: victim ${v.routeId.slice(0, 11)}… followed into the pool by ${v.burst} routes of its amount from ${v.burstClients === 'one' ? 'one client' : 'distinct clients'}: gate opened by them ${v.gateOpenedByBurst ? 'YES' : 'no (it left at the longest wait)'}; GET set ${v.get ?? '-'}, attacker ${route?.effectiveSet ?? '-'}${route?.overstated ? ' OVERSTATED' : ''}`;
    }),
  );
  lines.push(
    '',
    `gate timing (issue 32's public rule: a withdrawal mined in epoch e spent a same-class note approved on chain and aged before e began; no upper bound, the exit lottery keeps gated notes for any number of epochs): ruled out ${timedOut} of ${timedOut + kept} same-class candidates over ${sc.asp.withdrawals.length} withdrawals; the matchings, FIFO and effective sets above and below use what is left`,
  );
  lines.push(
    '',
    `ASP: ${sc.asp.leaves ?? 'n/a (no public list)'} approved labels; ${sc.asp.rootsReproduced}/${sc.asp.rootsOnChain} on-chain roots reproduced (LeanIMT of a prefix); ${sc.asp.ragequits} ragequit(s)`,
    ...sc.asp.withdrawals.map(
      (w, i) =>
        `  withdrawal ${i + 1} ${short(w.withdrawal)}: ${w.approvedAtRoot ?? '?'} labels approved at its root; ${w.candidates} candidates; same-class deposits ruled out: after its state root ${w.excluded.stateRoot}, not approved at its ASP root ${w.excluded.asp}, ragequit ${w.excluded.ragequit}, by the gate's timing ${w.excluded.timing ?? 0}`,
    ),
    ...sc.asp.rejected.map(
      (x) =>
        `  rejected ${x.routeId}: ${x.status}${x.ragequit ? ' (ragequit)' : ''}; its label ${x.approvedIndex >= 0 ? `WAS approved (position ${x.approvedIndex + 1})` : 'never approved'}; candidate of ${x.candidateOf} of the ${x.sameClassWithdrawalsAfter} same-class withdrawals after it`,
    ),
    '',
    'per route: GET anonymitySet beside the attacker’s effective set (⌊1 / largest posterior⌋ of a uniform matching of the class’s withdrawals to their candidates)',
    `  ${pad('routeId', 14)} ${pad('group', 9)} ${pad('amount', 9)} ${pad('class', 18)} ${pad('status', 10)} ${pad('GET set', 8)} ${pad('maxWait', 8)} ${pad('attacker', 9)} ${pad('flag', 11)} ${pad('pool', 5)} e2e`,
    ...sc.routes.map((x) => {
      const flag = [x.attackerOwn ? 'own' : '', x.overstated ? 'OVERSTATED' : '', x.miss ? 'MISS' : '', x.offGrid ? `OFF-GRID(paid ${x.payoutValue})` : '']
        .filter(Boolean)
        .join(' ');
      return `  ${pad(`${x.routeId.slice(0, 11)}…`, 14)} ${pad(x.group, 9)} ${pad(x.amount, 9)} ${pad(x.classValue ?? '-', 18)} ${pad(x.status, 10)} ${pad(x.anonymitySet ?? '-', 8)} ${pad(x.leftAtMaxWait === null ? '-' : x.leftAtMaxWait ? 'yes' : 'no', 8)} ${pad(x.effectiveSet ?? '-', 9)} ${pad(flag, 11)} ${pad(x.poolLinked ? 'LINK' : '-', 5)} ${x.endToEndLinked ? 'LINK' : '-'}`;
    }),
    "  pool / e2e LINK: the quote-inversion + FIFO-in-class attack named the route's own withdrawal / payout. MISS: the attacker's rules left out the route's own deposit. OFF-GRID: its payout is not its class value",
    `summary: routes overstated ${sc.summary.overstated}/${sc.summary.compared} (target 0); attacker rule misses ${sc.summary.misses}; payouts off the grid ${sc.summary.offGrid}; unsolved withdrawals ${sc.summary.unsolved}`,
  );
  return `${lines.join('\n')}\n`;
}

// ------------------------------------------------------------------ main

async function runScenario(bench: BenchOptions): Promise<{ result: ScenarioResult; failed: boolean }> {
  const t0 = Date.now();
  const secondsSince = (t: number) => Math.round((Date.now() - t) / 1000);
  bench.progress(`starting the local stack (${bench.mode} mode)`);
  const running = await startBench(bench);
  try {
    const { stack } = running;
    const tStack = secondsSince(t0);
    const t1 = Date.now();
    const known = publicKnowledge(stack, bench.mode);
    const { planned, notes } = await planRoutes(stack, bench);
    const sampler =
      bench.scenario === 'cross-asset'
        ? startQuoteSampler(known, bench.crossAmount, { role: 'destination', tokenSymbol: 'WETH' }, bench.sampleEverySeconds * 1000)
        : null;
    let samples: QuoteSample[] | null = null;
    const receiver = await startHookReceiver();
    const created: Created[] = [];
    const stopPoking = bench.poke ? startDustPoker(stack, created, bench) : async () => {};
    let views: Awaited<ReturnType<typeof awaitTransfers>>;
    let sightings: PublicSightings;
    try {
      try {
        await createAndFund(stack, planned, bench, receiver.base, created);
      } finally {
        samples = (await sampler?.stop()) ?? null;
      }
      const publicViews = watchPublicViews(stack, created);
      views = await awaitTransfers(stack, created, bench);
      await stopPoking();
      bench.progress('waiting for the public views to show the ends (their own delay, then the next exit epoch)');
      sightings = await publicViews((bench.publicHoldSeconds + bench.publicDelaySeconds + 2 * bench.exitEpochSeconds + 10) * 1000);
      if (bench.poke) {
        bench.progress('waiting for the strays to be refunded (their own delay after the scan)');
        const refunded = await awaitDustRefunds(stack, created, (bench.refundDelayMaxSeconds + STRAY_SCAN_SECONDS + 60) * 1000);
        bench.progress(`${refunded}/${created.filter((c) => c.pokedAt).length} poked deposit addresses refunded`);
      }
      // The held webhooks go out with the public end, after their own random delay (WEBHOOK_MAX_DELAY_SECONDS).
      const deadline = Date.now() + (WEBHOOK_MAX_DELAY_SECONDS + 15) * 1000;
      while (Date.now() < deadline && created.some((c) => (receiver.arrivals.get(c.hookPath)?.length ?? 0) < 2)) await new Promise((r) => setTimeout(r, 1000));
    } finally {
      await stopPoking();
      await receiver.close();
    }
    const routes = await groundTruth(stack, created, views);
    const tTransfers = secondsSince(t1);
    const unfinished = routes.filter((r) => r.status !== 'COMPLETED' && !r.rejected);
    if (unfinished.length > 0) {
      bench.progress(
        `WARNING: ${unfinished.length} transfers did not complete (${unfinished.map((r) => `${r.routeId}: ${r.status}`).join(', ')}); scoring the completed ones`,
      );
    }

    const t2 = Date.now();
    const view = await observe(known);
    const guesses = await attack(known, view, {
      samples,
      sampledInput: bench.scenario === 'cross-asset' ? bench.crossAmount : null,
      own: routes.filter((r) => r.attackerOwn).map((r) => ({ depositAddress: r.depositAddress, payoutTx: r.payoutTx })),
    });
    const scored = score(routes, guesses);
    const timing = timingAttacks(bench, routes, created, guesses, sightings, receiver.arrivals);
    const settings: ScenarioResult['settings'] = {
      'min set': bench.minAnonymitySet,
      'max wait s': bench.maxWaitSeconds,
      'exit epoch s': bench.exitEpochSeconds,
      'public end delay s': `0–${bench.publicDelaySeconds}`,
      'public end hold s': bench.publicHoldSeconds,
      'gap s': `0–${bench.gapMaxSeconds}`,
      'refund delay s': bench.poke ? `${bench.refundDelayMinSeconds}–${bench.refundDelayMaxSeconds}` : 'no poke',
    };
    if (bench.scenario === 'cross-asset')
      Object.assign(settings, {
        routes: `${bench.cross} × ${bench.crossAmount} USDC → WETH`,
        'spacing s': bench.crossSpacingSeconds,
        'price epoch s': bench.priceEpochSeconds,
        'volatility bps': `${bench.volatilityBps} per ${bench.priceStepSeconds} s`,
        'price seed': bench.priceSeed,
        'sample every s': bench.sampleEverySeconds,
      });
    else
      Object.assign(settings, {
        shared: `${bench.shared} × ${bench.sharedAmount} USDC`,
        ...(bench.sybil ? { sybil: `${bench.sybil} × ${bench.sharedAmount} USDC (one client, the attacker's)` } : {}),
        ...(bench.classSize ? { class: `${bench.classSize} around ${bench.classAmount} USDC` } : {}),
        ...(bench.distinct ? { distinct: bench.distinct } : {}),
        ...(bench.hub ? { 'paid on the hub': `${bench.hub} × ${bench.sharedAmount} USDC` } : {}),
        ...(bench.rejected ? { 'ASP rejects': bench.rejected, ragequit: bench.ragequitRejected } : {}),
        ...(bench.victims
          ? {
              'n − 1 victims': `${bench.victims}, each followed by ${bench.minAnonymitySet - 1} (${bench.burstClients} client${bench.burstClients === 'one' ? '' : 's'})`,
            }
          : {}),
        ...(bench.maxWaitGroup ? { 'longest-wait group': bench.maxWaitGroup } : {}),
      });
    const result: ScenarioResult = {
      scenario: bench.scenario as Exclude<Scenario, 'users' | 'analyst'>,
      mode: bench.mode,
      settings,
      notes,
      planned: planned.length,
      seconds: { stack: tStack, transfers: tTransfers, attack: secondsSince(t2), total: secondsSince(t0) },
      observed: {
        poolDeposits: guesses.deposits.length,
        poolWithdrawals: guesses.withdrawals.length,
        sourceDeposits: guesses.entered.length,
        payouts: guesses.paid.length,
        relayRequests: view.relayRequests?.length ?? null,
        ownPairs: guesses.ownPairs,
      },
      crossAsset: guesses.crossAsset,
      scored,
      timing,
    };
    return { result, failed: unfinished.length > 0 };
  } finally {
    const tStop = Date.now();
    bench.progress('stopping the local stack');
    await running.close();
    bench.progress(`stopped in ${secondsSince(tStop)} s`);
  }
}

async function main(): Promise<number> {
  const { json, runs } = options();
  const results: Array<ScenarioResult | UsersResult | AnalystResult> = [];
  let failed = false;
  for (const bench of runs) {
    const { result, failed: f } =
      bench.scenario === 'users' ? await runUsers(bench) : bench.scenario === 'analyst' ? await runAnalyst(bench) : await runScenario(bench);
    failed ||= f;
    results.push(result);
    if (!json)
      process.stdout.write(`${result.scenario === 'users' ? usersReport(result) : result.scenario === 'analyst' ? analystReport(result) : report(result)}\n`);
  }
  if (json) process.stdout.write(`${JSON.stringify({ scenarios: results }, (_, v) => (typeof v === 'bigint' ? v.toString() : v), 2)}\n`);
  else if (results.length > 1) {
    const counts = results.flatMap((r) =>
      r.scenario === 'analyst'
        ? []
        : r.scenario === 'users'
          ? { overstated: r.rounds.reduce((a, x) => a + x.overstated.gateAware, 0), compared: r.rounds.reduce((a, x) => a + x.overstated.compared, 0) }
          : r.scored.summary,
    );
    process.stdout.write(
      `overall: routes overstated ${counts.reduce((a, c) => a + c.overstated, 0)}/${counts.reduce((a, c) => a + c.compared, 0)} (target 0; users: against the gate-aware observer)\n`,
    );
  }
  return failed ? 1 : 0;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`[bench] harness failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  },
);
