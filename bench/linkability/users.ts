/**
 * The many-users scenario (issue 32, point 5): rounds of N distinct users on one stack, each its own client address
 * (X-Forwarded-For behind TRUST_PROXY_HOPS=1) and its own fresh funding wallet, sending close but different inputs of
 * one amount class and asking for the same minimum set. Each round is scored on its own once its routes are done:
 * - completion, GET's sets against the minimum, leftAtMaxWait;
 * - Kendall tau between source deposit order and payout order, and between pool deposit and withdrawal order;
 * - the time-order attacks (timeOrder.ts), each as hits end to end beside Σ 1 / GET's set and chance;
 * - per route, GET's set beside two observers' effective sets (posterior.ts, the bench's own code): the public-data
 *   likelihood attacker (candidates approved and aged before the withdrawal's epoch), and the gate-aware observer
 *   (candidates whose gate had opened by the withdrawal's exit epoch). The gate-aware observer stands for an analyst who
 *   knows every route's minimum and replays the published gate rule; the harness reads the gate times it would
 *   reconstruct from the database (pool_notes.gated_at, exit_epoch_at) instead. GET above it is OVERSTATED;
 * - latency (funded → COMPLETED, pool deposit → withdrawal).
 * The attacker's guesses come from public data only (attacker.ts, timeOrder.ts); the harness alone reads the
 * database, to know the truth and the gate times.
 */
import { and, eq, gte, inArray } from 'drizzle-orm';
import type { GateLog } from '../../src/domain/observations.ts';
import { classExitEpochs, poolNotes, transferStatuses } from '../../src/db/schema.ts';
import { attack, type Guesses } from './attacker.ts';
import type { Candidates } from './attacks.ts';
import {
  awaitTransfers,
  type BenchOptions,
  classInputs,
  type Created,
  createAndFund,
  groundTruth,
  planUsers,
  publicKnowledge,
  startBench,
  startHookReceiver,
  type TransferView,
} from './harness.ts';
import { observe } from './observe.ts';
import { effectiveSet, matchingPosterior } from './posterior.ts';
import type { OrderScore, RouteTruth } from './score.ts';
import { orderOf } from './score.ts';
import { fifoGuess, likelihoodGuess, nearestRankGuess, type TimeOrderGuess, type TimeOrderInput, waiterGuess } from './timeOrder.ts';
import { api } from '../support/stack.ts';

/** The done-when of issue 32, point 5, per round. */
const TAU_MAX = 0.35;
/** Of the round's users, at least this share must reach their minimum (15 of 16). */
const REACHED_SHARE = 15 / 16;

export interface AttackFigures {
  /** Routes of the round whose payout it named correctly, end to end (source deposit ↔ payout). */
  hits: number;
  routes: number;
  /** A uniformly random matching of the round's routes: 1 right on average. */
  chance: number;
  /** Routes whose own deposit its rule left out of what it chose among (its rule, not the service, was wrong). */
  misses: number | null;
  /** waiter: withdrawals for which its rule left nothing and it fell back to every public candidate. */
  fallbacks: number | null;
  /** likelihood: Σ over the round's routes of the probability its guess carries (what it expects to get right). */
  expected: number | null;
}

export interface UsersRouteRow {
  routeId: string;
  round: number;
  amount: string;
  client: string;
  status: string;
  get: number | null;
  minimum: number;
  leftAtMaxWait: boolean | null;
  /** pool_notes: why and when (seconds after its pool deposit) its gate opened, the exit epoch it left in, what the gate counted. */
  gateReason: string | null;
  gatedAfterSeconds: number | null;
  exitEpochAfterSeconds: number | null;
  gateLog: GateLog | null;
  /** The public-data likelihood attacker: its withdrawal's candidates and the route's effective set. */
  publicCandidates: number | null;
  publicSet: number | null;
  /** The gate-aware observer: the same with candidates whose gate opened by the withdrawal's exit epoch. */
  gateAwareCandidates: number | null;
  gateAwareSet: number | null;
  /** GET > the gate-aware observer's set (the report promises more than that observer leaves). */
  overstated: boolean;
  /** GET > the public-data attacker's set (allowed: that observer knows less). */
  abovePublic: boolean;
  /** Its own deposit is not among the gate-aware candidates (a gate time after its own exit epoch: bench or service wrong). */
  gateAwareMiss: boolean;
  publicMiss: boolean;
  /** Which time-order attacks named its payout right. */
  linkedBy: string[];
  fundedToCompletedSeconds: number | null;
  poolSeconds: number | null;
}

export interface Spread {
  n: number;
  median: number | null;
  p95: number | null;
}

export interface UsersRound {
  round: number;
  users: number;
  inputs: string[];
  classValue: string | null;
  completed: number;
  reachedSet: number;
  leftAtMaxWait: number;
  sets: number[];
  sumInverseReported: number;
  tau: { sourceToPayout: OrderScore; poolDepositToWithdrawal: OrderScore };
  attacks: { fifoPool: AttackFigures; fifoEnd: AttackFigures; nearestRank: AttackFigures; waiter: AttackFigures; likelihood: AttackFigures };
  effectiveSets: { public: Array<number | null>; gateAware: Array<number | null> };
  sumInversePublic: number;
  overstated: { gateAware: number; abovePublic: number; compared: number; gateAwareMisses: number; publicMisses: number; unsolved: number };
  latency: { fundedToCompleted: Spread; poolDepositToWithdrawal: Spread };
  lottery: {
    epochs: number;
    flushes: number;
    chance: [number, number] | null;
    entries: [number, number] | null;
    target: [number, number] | null;
    exitEpochs: number;
    /** Epochs from the round's first gate to its last exit epoch, and how many of them the class has a lottery row for. */
    span: number;
    drawnInSpan: number;
    /** The longest time from a route's gate to its exit epoch (s), and routes past the flush bound (flush + 2 epochs). */
    longestGateToExit: number | null;
    pastFlushBound: number;
    /** Every lottery row of the class while the round was in (class_exit_epochs). */
    rows: Array<{ startsAt: string; chance: number; flush: boolean; entries: number; target: number }>;
  };
  /** How the gates counted the sets (pool_notes.gate_log.method), per route. */
  gateMethods: Record<string, number>;
  gateReasons: Record<string, number>;
  doneWhen: { allComplete: boolean; reachedSet: boolean; noneOverstated: boolean; tau: boolean; fifo: boolean; met: boolean };
  seconds: { transfers: number; attack: number };
  routes: UsersRouteRow[];
}

export interface UsersResult {
  scenario: 'users';
  mode: 'relay' | 'cctp';
  settings: Record<string, string | number | boolean>;
  notes: string[];
  rounds: UsersRound[];
  seconds: { stack: number; total: number };
}

function shuffled<T>(items: readonly T[]): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

function spread(values: number[]): Spread {
  const sorted = [...values].sort((a, b) => a - b);
  if (sorted.length === 0) return { n: 0, median: null, p95: null };
  const mid = Math.floor(sorted.length / 2);
  const median = sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
  return { n: sorted.length, median: Math.round(median), p95: Math.round(sorted[Math.ceil(0.95 * sorted.length) - 1]!) };
}

const range = (xs: number[]): [number, number] | null => (xs.length ? [Math.min(...xs), Math.max(...xs)] : null);
const ms = (d: Date | null) => (d ? d.getTime() : null);

/** Runs the users scenario: R rounds of N users on one stack, each scored when it is done. */
export async function runUsers(bench: BenchOptions): Promise<{ result: UsersResult; failed: boolean }> {
  const t0 = Date.now();
  const secondsSince = (t: number) => Math.round((Date.now() - t) / 1000);
  bench.progress(`starting the local stack (${bench.mode} mode)`);
  const running = await startBench(bench);
  const rounds: UsersRound[] = [];
  const notes: string[] = [];
  let failed = false;
  let tStack = 0;
  try {
    const { stack } = running;
    tStack = secondsSince(t0);
    const known = publicKnowledge(stack, bench.mode);
    const { inputs, classValue } = await classInputs(stack, bench.classAmount, bench.users);
    notes.push(
      classValue
        ? `inputs ${inputs.join(', ')} USDC all quote the class ${classValue} (found through the quote's suggestions); each round assigns them to new users at random`
        : `the quote has no amount classes; inputs ${inputs.join(', ')} USDC`,
    );
    if (inputs.length < bench.users) notes.push(`only ${inputs.length} distinct inputs of ${bench.users} found in one class: some users share an input`);
    notes.push(
      'gate-aware observer: the gate times an analyst who knows every route’s minimum would reconstruct from the published rule; the harness reads them from pool_notes.gated_at and exit_epoch_at as a stand-in',
    );
    const receiver = await startHookReceiver();
    const everyone: Created[] = [];
    try {
      for (let round = 1; round <= bench.rounds; round++) {
        const t1 = Date.now();
        bench.progress(`round ${round}/${bench.rounds}: ${bench.users} new users`);
        const created = await createAndFund(stack, planUsers(bench, round, shuffled(inputs)), bench, receiver.base);
        everyone.push(...created);
        await awaitTransfers(stack, created, bench);
        // GET again once everything is mined: reports are counted again whenever a withdrawal of the class is mined.
        const views = new Map(
          await Promise.all(created.map(async (t) => [t.routeId, await api<TransferView>(stack, 'GET', `/api/private-route/${t.routeId}`)] as const)),
        );
        const routes = await groundTruth(stack, created, views);
        const tTransfers = secondsSince(t1);
        const unfinished = routes.filter((r) => r.status !== 'COMPLETED');
        if (unfinished.length > 0) {
          failed = true;
          bench.progress(
            `WARNING: round ${round}: ${unfinished.length} transfers did not complete (${unfinished.map((r) => `${r.routeId}: ${r.status}`).join(', ')})`,
          );
        }
        const t2 = Date.now();
        const guesses = await attack(known, await observe(known), { samples: null, sampledInput: null, own: [] });
        const everyTruth = await groundTruth(
          stack,
          everyone,
          new Map(everyone.map((c) => [c.routeId, views.get(c.routeId) ?? ({ status: 'COMPLETED', error: null, privacy: null } as TransferView)])),
        );
        const scored = await scoreRound(stack, bench, round, classValue, created, routes, everyTruth, guesses);
        scored.seconds = { transfers: tTransfers, attack: secondsSince(t2) };
        rounds.push(scored);
        bench.progress(`round ${round}: scored (${scored.doneWhen.met ? 'done-when met' : 'done-when NOT met'})`);
      }
    } finally {
      await receiver.close();
    }
  } finally {
    const tStop = Date.now();
    bench.progress('stopping the local stack');
    await running.close();
    bench.progress(`stopped in ${secondsSince(tStop)} s`);
  }
  const settings: UsersResult['settings'] = {
    users: `${bench.users} per round, one class around ${bench.classAmount} USDC`,
    rounds: bench.rounds,
    'min set': bench.minAnonymitySet,
    'max wait s': bench.maxWaitSeconds,
    'exit epoch s': bench.exitEpochSeconds,
    'exit mean s': `${bench.exitMeanMinSeconds}–${bench.exitMeanMaxSeconds}`,
    'flush s': bench.flushSeconds,
    'traffic window s': bench.trafficWindowSeconds,
    'min peer age s': bench.minPeerAgeSeconds,
    'gap s': `0–${bench.gapMaxSeconds}`,
  };
  return { result: { scenario: 'users', mode: bench.mode, settings, notes, rounds, seconds: { stack: tStack, total: secondsSince(t0) } }, failed };
}

type Stack = Awaited<ReturnType<typeof startBench>>['stack'];

/** One round's figures. `routes`: the round's truth; `everyTruth`: every route so far (to map pool deposits to routes). */
async function scoreRound(
  stack: Stack,
  bench: BenchOptions,
  round: number,
  classValue: string | null,
  created: Created[],
  routes: RouteTruth[],
  everyTruth: RouteTruth[],
  g: Guesses,
): Promise<UsersRound> {
  const db = stack.service.db;
  const allIds = everyTruth.map((r) => r.routeId);
  const notes = new Map((await db.select().from(poolNotes).where(inArray(poolNotes.routeId, allIds))).map((n) => [n.routeId, n]));
  const completedAt = new Map(
    (
      await db
        .select()
        .from(transferStatuses)
        .where(
          and(
            inArray(
              transferStatuses.routeId,
              routes.map((r) => r.routeId),
            ),
            eq(transferStatuses.status, 'COMPLETED'),
          ),
        )
    ).map((s) => [s.routeId, s.reachedAt.getTime()]),
  );

  // The public-data likelihood attacker (attacker.ts: gateTimingCandidates) and the gate-aware observer.
  const routeOfEntry = new Map(everyTruth.flatMap((r) => (r.shieldTx ? [[r.shieldTx, r.routeId] as const] : [])));
  const routeOfExit = new Map(everyTruth.flatMap((r) => (r.unshieldTx ? [[r.unshieldTx, r.routeId] as const] : [])));
  const gateAware = new Map<string, Candidates>();
  for (const x of g.exits) {
    const c = g.byPool.get(x.id);
    if (!c) continue;
    const exitEpoch = ms(notes.get(routeOfExit.get(x.id) ?? '')?.exitEpochAt ?? null);
    const ids =
      exitEpoch === null
        ? c.ids
        : c.ids.filter((id) => {
            const gated = ms(notes.get(routeOfEntry.get(id) ?? '')?.gatedAt ?? null);
            return gated !== null && gated <= exitEpoch;
          });
    gateAware.set(x.id, { ...c, ids });
  }
  const ownByExit = new Map([...g.own].map(([e, x]) => [x, e]));
  const gatePosterior = matchingPosterior(new Map([...gateAware].map(([x, c]) => [x, c.ids])), ownByExit);

  // The time-order attacks, from public data.
  const input: TimeOrderInput = {
    entries: g.entries,
    exits: g.exits,
    classes: g.classes,
    candidates: g.candidates,
    approvedAt: g.approvedAt,
    rules: { exitEpochSeconds: stack.config.PRIVACY_EXIT_EPOCH_SECONDS, minPeerAgeSeconds: stack.config.PRIVACY_MIN_PEER_AGE_SECONDS },
    own: g.own,
  };
  const attacks = {
    fifoPool: fifoGuess(input, 'pool'),
    fifoEnd: fifoGuess(input, 'end'),
    nearestRank: nearestRankGuess(input),
    waiter: waiterGuess(input),
    likelihood: likelihoodGuess(input, g.posterior),
  };

  const exitByPayout = new Map(g.exits.flatMap((x) => (x.payout ? [[x.payout.id, x] as const] : [])));
  const entryById = new Map(g.entries.map((e) => [e.id, e]));
  const depositById = new Map(g.deposits.map((d) => [d.id, d]));
  const withdrawalById = new Map(g.withdrawals.map((w) => [w.id, w]));
  const completed = routes.filter((r) => r.status === 'COMPLETED');
  const hit = (a: TimeOrderGuess, r: RouteTruth) => {
    const x = r.payoutTx ? exitByPayout.get(r.payoutTx) : undefined;
    const e = x ? entryById.get(a.guess.get(x.id) ?? '') : undefined;
    return !!e?.source && e.source.id === r.depositAddress;
  };
  const figures = (name: keyof typeof attacks): AttackFigures => {
    const a = attacks[name];
    const considered = name === 'fifoPool' || name === 'fifoEnd' ? null : a.considered;
    return {
      hits: completed.filter((r) => hit(a, r)).length,
      routes: completed.length,
      chance: completed.length > 0 ? 1 : 0,
      misses: considered ? completed.filter((r) => r.unshieldTx && r.shieldTx && !(considered.get(r.unshieldTx) ?? []).includes(r.shieldTx)).length : null,
      fallbacks: name === 'waiter' ? a.fallbacks : null,
      expected:
        name === 'likelihood'
          ? completed.reduce((sum, r) => {
              const guess = r.unshieldTx ? a.guess.get(r.unshieldTx) : undefined;
              return sum + (guess ? (g.posterior.byWithdrawal.get(r.unshieldTx!)?.get(guess) ?? 0) : 0);
            }, 0)
          : null,
    };
  };

  const rows: UsersRouteRow[] = routes.map((r) => {
    const note = notes.get(r.routeId);
    const deposited = ms(note?.depositedAt ?? null);
    const after = (d: Date | null | undefined) => (d && deposited !== null ? Math.round((d.getTime() - deposited) / 1000) : null);
    const publicSet = r.unshieldTx ? effectiveSet(g.posterior, r.unshieldTx, r.shieldTx) : null;
    const gateAwareSet = r.unshieldTx ? effectiveSet(gatePosterior, r.unshieldTx, r.shieldTx) : null;
    const d = r.shieldTx ? depositById.get(r.shieldTx) : undefined;
    const w = r.unshieldTx ? withdrawalById.get(r.unshieldTx) : undefined;
    const fundedAt = created.find((c) => c.routeId === r.routeId)?.fundedAt ?? null;
    const doneAt = completedAt.get(r.routeId);
    return {
      routeId: r.routeId,
      round,
      amount: r.amount,
      client: r.client,
      status: r.status,
      get: r.anonymitySet,
      minimum: bench.minAnonymitySet,
      leftAtMaxWait: r.leftAtMaxWait,
      gateReason: note?.gateReason ?? null,
      gatedAfterSeconds: after(note?.gatedAt),
      exitEpochAfterSeconds: after(note?.exitEpochAt),
      gateLog: note?.gateLog ?? null,
      publicCandidates: r.unshieldTx ? (g.candidates.get(r.unshieldTx)?.ids.length ?? null) : null,
      publicSet,
      gateAwareCandidates: r.unshieldTx ? (gateAware.get(r.unshieldTx)?.ids.length ?? null) : null,
      gateAwareSet,
      overstated: r.anonymitySet !== null && gateAwareSet !== null && r.anonymitySet > gateAwareSet,
      abovePublic: r.anonymitySet !== null && publicSet !== null && r.anonymitySet > publicSet,
      gateAwareMiss: !!r.unshieldTx && !!r.shieldTx && !(gateAware.get(r.unshieldTx)?.ids ?? []).includes(r.shieldTx),
      publicMiss: !!r.unshieldTx && !!r.shieldTx && !(g.candidates.get(r.unshieldTx)?.ids ?? []).includes(r.shieldTx),
      linkedBy: (Object.keys(attacks) as Array<keyof typeof attacks>).filter((name) => r.status === 'COMPLETED' && hit(attacks[name], r)),
      fundedToCompletedSeconds: fundedAt !== null && doneAt !== undefined ? Math.round((doneAt - fundedAt) / 1000) : null,
      poolSeconds: d && w ? w.timestamp - d.timestamp : null,
    };
  });

  // Orders: source deposit → payout (end to end), pool deposit → withdrawal.
  const sourceById = new Map(g.entered.map((s) => [s.id, s]));
  const payoutById = new Map(g.paid.map((p) => [p.id, p]));
  const endPairs = completed.flatMap((r) => {
    const s = sourceById.get(r.depositAddress);
    const p = r.payoutTx ? payoutById.get(r.payoutTx) : undefined;
    return s && p ? [{ entry: s.order, exit: p.order }] : [];
  });
  const poolPairs = completed.flatMap((r) => {
    const d = r.shieldTx ? depositById.get(r.shieldTx) : undefined;
    const w = r.unshieldTx ? withdrawalById.get(r.unshieldTx) : undefined;
    return d && w ? [{ entry: d.order, exit: w.order }] : [];
  });

  // The class's lottery while the round was in the pool.
  const classKeys = [...new Set(routes.flatMap((r) => (notes.get(r.routeId)?.amountClass ? [notes.get(r.routeId)!.amountClass!] : [])))];
  const since = new Date(Math.min(...created.map((c) => c.createdAt)));
  const epochs = classKeys.length
    ? await db
        .select()
        .from(classExitEpochs)
        .where(and(inArray(classExitEpochs.amountClass, classKeys), gte(classExitEpochs.startsAt, since)))
    : [];
  const roundRows = rows.filter((r) => r.status === 'COMPLETED');
  const exitEpochs = new Set(routes.flatMap((r) => (notes.get(r.routeId)?.exitEpochAt ? [notes.get(r.routeId)!.exitEpochAt!.getTime()] : [])));
  const gateReasons: Record<string, number> = {};
  for (const r of rows) gateReasons[r.gateReason ?? 'none'] = (gateReasons[r.gateReason ?? 'none'] ?? 0) + 1;
  const gateMethods: Record<string, number> = {};
  for (const r of rows) gateMethods[r.gateLog?.method ?? 'none'] = (gateMethods[r.gateLog?.method ?? 'none'] ?? 0) + 1;
  const epochMs = stack.config.PRIVACY_EXIT_EPOCH_SECONDS * 1000;
  const gates = routes.flatMap((r) => (notes.get(r.routeId)?.gatedAt ? [notes.get(r.routeId)!.gatedAt!.getTime()] : []));
  const firstGate = gates.length ? Math.min(...gates) : null;
  const lastExit = exitEpochs.size ? Math.max(...exitEpochs) : null;
  const span = firstGate !== null && lastExit !== null ? Math.round((lastExit - firstGate) / epochMs) + 1 : 0;
  const drawnInSpan =
    firstGate !== null && lastExit !== null ? epochs.filter((e) => e.startsAt.getTime() >= firstGate && e.startsAt.getTime() <= lastExit).length : 0;
  const gateToExit = routes.flatMap((r) => {
    const n = notes.get(r.routeId);
    return n?.gatedAt && n.exitEpochAt ? [(n.exitEpochAt.getTime() - n.gatedAt.getTime()) / 1000] : [];
  });

  const compared = roundRows.filter((r) => r.get !== null && r.gateAwareSet !== null);
  const sumInverseReported = roundRows.reduce((sum, r) => sum + (r.get ? 1 / r.get : 0), 0);
  const tau = { sourceToPayout: orderOf(endPairs), poolDepositToWithdrawal: orderOf(poolPairs) };
  const attackFigures = {
    fifoPool: figures('fifoPool'),
    fifoEnd: figures('fifoEnd'),
    nearestRank: figures('nearestRank'),
    waiter: figures('waiter'),
    likelihood: figures('likelihood'),
  };
  const reachedSet = roundRows.filter((r) => r.get !== null && r.get >= r.minimum).length;
  const overstated = compared.filter((r) => r.overstated).length;
  const doneWhen = {
    allComplete: completed.length === routes.length,
    reachedSet: reachedSet >= Math.ceil(routes.length * REACHED_SHARE),
    noneOverstated: overstated === 0 && compared.length === completed.length,
    tau: tau.sourceToPayout.kendallTau <= TAU_MAX && tau.poolDepositToWithdrawal.kendallTau <= TAU_MAX,
    fifo: Math.max(attackFigures.fifoPool.hits, attackFigures.fifoEnd.hits) <= sumInverseReported + 1,
  };
  const roundIds = routes.map((r) => r.routeId);
  return {
    round,
    users: routes.length,
    inputs: [...new Set(routes.map((r) => r.amount))].sort((a, b) => Number(a) - Number(b)),
    classValue,
    completed: completed.length,
    reachedSet,
    leftAtMaxWait: roundRows.filter((r) => r.leftAtMaxWait).length,
    sets: roundRows.flatMap((r) => (r.get !== null ? [r.get] : [])).sort((a, b) => a - b),
    sumInverseReported,
    tau,
    attacks: attackFigures,
    effectiveSets: {
      public: roundRows.map((r) => r.publicSet).sort((a, b) => (a ?? 0) - (b ?? 0)),
      gateAware: roundRows.map((r) => r.gateAwareSet).sort((a, b) => (a ?? 0) - (b ?? 0)),
    },
    sumInversePublic: roundRows.reduce((sum, r) => sum + (r.publicSet ? 1 / r.publicSet : 0), 0),
    overstated: {
      gateAware: overstated,
      abovePublic: compared.filter((r) => r.abovePublic).length,
      compared: compared.length,
      gateAwareMisses: roundRows.filter((r) => r.gateAwareMiss).length,
      publicMisses: roundRows.filter((r) => r.publicMiss).length,
      unsolved: [...gatePosterior.unsolved, ...g.posterior.unsolved].filter((x) => roundIds.includes(routeOfExit.get(x) ?? '')).length,
    },
    latency: {
      fundedToCompleted: spread(roundRows.flatMap((r) => (r.fundedToCompletedSeconds !== null ? [r.fundedToCompletedSeconds] : []))),
      poolDepositToWithdrawal: spread(roundRows.flatMap((r) => (r.poolSeconds !== null ? [r.poolSeconds] : []))),
    },
    lottery: {
      epochs: epochs.length,
      flushes: epochs.filter((e) => e.flush).length,
      chance: range(epochs.filter((e) => !e.flush).map((e) => e.chance)),
      entries: range(epochs.map((e) => e.entries)),
      target: range(epochs.map((e) => e.target)),
      exitEpochs: exitEpochs.size,
      span,
      drawnInSpan,
      longestGateToExit: gateToExit.length ? Math.max(...gateToExit) : null,
      pastFlushBound: gateToExit.filter((t) => t > bench.flushSeconds + 2 * stack.config.PRIVACY_EXIT_EPOCH_SECONDS).length,
      rows: epochs
        .sort((a, b) => a.startsAt.getTime() - b.startsAt.getTime())
        .map((e) => ({ startsAt: e.startsAt.toISOString(), chance: e.chance, flush: e.flush, entries: e.entries, target: e.target })),
    },
    gateReasons,
    gateMethods,
    doneWhen: { ...doneWhen, met: Object.values(doneWhen).every(Boolean) },
    seconds: { transfers: 0, attack: 0 },
    routes: rows,
  };
}

// ------------------------------------------------------------------ report

const pad = (text: string | number, width: number) => String(text).padEnd(width);
const yes = (b: boolean) => (b ? 'YES' : 'NO');
const secs = (s: Spread) => (s.n ? `median ${s.median} s, p95 ${s.p95} s (n ${s.n})` : 'n/a');

function attackLine(label: string, a: AttackFigures, sumInverse: number, extra = ''): string {
  return `  ${label}: ${a.hits}/${a.routes} (Σ 1/reported ${sumInverse.toFixed(1)}, chance ${a.chance.toFixed(1)})${a.misses !== null ? `; true deposit outside what it chose among: ${a.misses}` : ''}${extra}`;
}

function roundLines(r: UsersRound, rounds: number): string[] {
  const t = r.tau;
  const lines = [
    `--- round ${r.round} of ${rounds}: ${r.users} users, inputs ${r.inputs[0] ?? '-'}–${r.inputs.at(-1) ?? '-'} USDC (${r.inputs.length} distinct), class ${r.classValue ?? '-'}; transfers ${r.seconds.transfers} s, attack ${r.seconds.attack} s ---`,
    `routes completed ${r.completed}/${r.users}; GET set ≥ minimum ${r.reachedSet}/${r.users}; leftAtMaxWait ${r.leftAtMaxWait}; gates: ${Object.entries(
      r.gateReasons,
    )
      .map(([k, v]) => `${k} ${v}`)
      .join(', ')}`,
    `GET sets (sorted): [${r.sets.join(', ')}]`,
    `exit lottery (class_exit_epochs while the round was in): ${r.lottery.epochs} epochs drawn, ${r.lottery.flushes} flush(es); chance per epoch ${r.lottery.chance ? `${r.lottery.chance[0].toFixed(3)}–${r.lottery.chance[1].toFixed(3)}` : '-'}, entries in the window ${r.lottery.entries ? r.lottery.entries.join('–') : '-'}, target ${r.lottery.target ? r.lottery.target.join('–') : '-'}; the round's withdrawals left in ${r.lottery.exitEpochs} distinct exit epochs`,
    `  from the round's first gate to its last exit epoch: ${r.lottery.span} epochs, of which ${r.lottery.drawnInSpan} have a lottery row (an epoch without one drew no exits); longest gate → exit epoch ${r.lottery.longestGateToExit ?? '-'} s; routes past the flush bound (flush + 2 epochs after their gate) ${r.lottery.pastFlushBound}; gate counts by method: ${Object.entries(
      r.gateMethods,
    )
      .map(([k, v]) => `${k} ${v}`)
      .join(', ')}`,
    `Kendall tau (chance 0 ± ${(Math.sqrt((2 * (2 * r.users + 5)) / (9 * r.users * Math.max(1, r.users - 1))) || 0).toFixed(2)}): source deposit order → payout order ${t.sourceToPayout.kendallTau.toFixed(2)}; pool deposit order → withdrawal order ${t.poolDepositToWithdrawal.kendallTau.toFixed(2)}`,
    `  payout positions by source deposit order: [${t.sourceToPayout.exitPositions.join(', ')}]`,
    'time-order attacks: routes whose payout the attack named (end to end), beside Σ 1/GET set (what the reports allow) and chance',
    attackLine('(a) FIFO, pool order (i-th withdrawal of the class ↔ i-th pool deposit)', r.attacks.fifoPool, r.sumInverseReported),
    attackLine('(a) FIFO, end order (i-th payout of the class ↔ i-th source deposit)', r.attacks.fifoEnd, r.sumInverseReported),
    attackLine('(b) nearest rank (each withdrawal ↔ the unused public candidate whose deposit rank is nearest)', r.attacks.nearestRank, r.sumInverseReported),
    attackLine(
      '(c) waiter (old rule: a note that could have left in an epoch its class withdrew in, and stayed, is no later candidate; unsound under the exit lottery)',
      r.attacks.waiter,
      r.sumInverseReported,
      `; fell back to every public candidate ${r.attacks.waiter.fallbacks ?? 0} time(s)`,
    ),
    attackLine(
      '(d) likelihood (exact posterior over candidates approved and aged before the mined epoch; guess: the most likely deposit)',
      r.attacks.likelihood,
      r.sumInverseReported,
      `; its own expectation Σ max p ${r.attacks.likelihood.expected?.toFixed(1) ?? '-'}; Σ 1/its effective set ${r.sumInversePublic.toFixed(1)}`,
    ),
    `effective sets (sorted): public-data likelihood attacker [${r.effectiveSets.public.map((x) => x ?? '-').join(', ')}]; gate-aware observer [${r.effectiveSets.gateAware.map((x) => x ?? '-').join(', ')}]`,
    `routes overstated against the gate-aware observer (GET > its set; gate times read from pool_notes as a stand-in): ${r.overstated.gateAware}/${r.overstated.compared} (target 0); GET above the public-data attacker's set: ${r.overstated.abovePublic}/${r.overstated.compared} (allowed: it knows less); own deposit outside the candidates: gate-aware ${r.overstated.gateAwareMisses}, public ${r.overstated.publicMisses}; unsolved ${r.overstated.unsolved}`,
    `latency: funded → COMPLETED ${secs(r.latency.fundedToCompleted)}; pool deposit → withdrawal ${secs(r.latency.poolDepositToWithdrawal)}`,
    `  ${pad('routeId', 14)} ${pad('input', 7)} ${pad('GET', 4)} ${pad('min', 4)} ${pad('maxWait', 8)} ${pad('gate', 12)} ${pad('gated +s', 9)} ${pad('exit +s', 8)} ${pad('public', 7)} ${pad('gate-aware', 11)} ${pad('done s', 7)} ${pad('pool s', 7)} flags / linked by`,
    ...r.routes.map(
      (x) =>
        `  ${pad(`${x.routeId.slice(0, 11)}…`, 14)} ${pad(x.amount, 7)} ${pad(x.get ?? '-', 4)} ${pad(x.minimum, 4)} ${pad(x.leftAtMaxWait === null ? '-' : x.leftAtMaxWait ? 'yes' : 'no', 8)} ${pad(x.gateReason ?? '-', 12)} ${pad(x.gatedAfterSeconds ?? '-', 9)} ${pad(x.exitEpochAfterSeconds ?? '-', 8)} ${pad(`${x.publicSet ?? '-'}/${x.publicCandidates ?? '-'}`, 7)} ${pad(`${x.gateAwareSet ?? '-'}/${x.gateAwareCandidates ?? '-'}`, 11)} ${pad(x.fundedToCompletedSeconds ?? '-', 7)} ${pad(x.poolSeconds ?? '-', 7)} ${[
          x.status !== 'COMPLETED' ? x.status : '',
          x.overstated ? 'OVERSTATED' : '',
          x.gateAwareMiss ? 'GATE-MISS' : '',
          x.publicMiss ? 'MISS' : '',
          x.abovePublic ? '>public' : '',
          ...x.linkedBy,
        ]
          .filter(Boolean)
          .join(' ')}`,
    ),
    '  (public, gate-aware: effective set / candidates of its withdrawal; gated +s, exit +s: its gate epoch and exit epoch, seconds after its pool deposit)',
    `done when: every route completes ${yes(r.doneWhen.allComplete)}; ≥ ${Math.ceil(r.users * REACHED_SHARE)}/${r.users} reach the set ${yes(r.doneWhen.reachedSet)} (${r.reachedSet}); 0 overstated against the gate-aware observer ${yes(r.doneWhen.noneOverstated)}; tau ≤ ${TAU_MAX} ${yes(r.doneWhen.tau)}; FIFO hits ${Math.max(r.attacks.fifoPool.hits, r.attacks.fifoEnd.hits)} ≤ Σ 1/reported + 1 = ${(r.sumInverseReported + 1).toFixed(1)} ${yes(r.doneWhen.fifo)} → ${r.doneWhen.met ? 'MET' : 'NOT MET'}`,
  ];
  return lines;
}

export function usersReport(r: UsersResult): string {
  const lines = [
    `=== linkability: scenario users (${r.mode === 'cctp' ? 'burn-and-mint, CCTP' : 'deposit-address, Relay'}) ===`,
    `settings: ${Object.entries(r.settings)
      .map(([k, v]) => `${k} ${v}`)
      .join(', ')}`,
    ...r.notes.map((n) => `note: ${n}`),
    `time: stack ${r.seconds.stack} s, total ${r.seconds.total} s`,
    '',
  ];
  for (const round of r.rounds) lines.push(...roundLines(round, r.rounds.length), '');
  lines.push(
    `summary of ${r.rounds.length} round(s):`,
    `  ${pad('round', 6)} ${pad('done', 6)} ${pad('≥min', 6)} ${pad('maxWait', 8)} ${pad('tau e2e', 8)} ${pad('tau pool', 9)} ${pad('FIFO', 5)} ${pad('near', 5)} ${pad('waiter', 7)} ${pad('lik.', 5)} ${pad('Σ1/GET', 7)} ${pad('overst.', 8)} ${pad('>public', 8)} ${pad('funded→done med/p95', 20)} ${pad('pool med/p95', 13)} done-when`,
    ...r.rounds.map(
      (x) =>
        `  ${pad(x.round, 6)} ${pad(`${x.completed}/${x.users}`, 6)} ${pad(x.reachedSet, 6)} ${pad(x.leftAtMaxWait, 8)} ${pad(x.tau.sourceToPayout.kendallTau.toFixed(2), 8)} ${pad(x.tau.poolDepositToWithdrawal.kendallTau.toFixed(2), 9)} ${pad(Math.max(x.attacks.fifoPool.hits, x.attacks.fifoEnd.hits), 5)} ${pad(x.attacks.nearestRank.hits, 5)} ${pad(x.attacks.waiter.hits, 7)} ${pad(x.attacks.likelihood.hits, 5)} ${pad(x.sumInverseReported.toFixed(1), 7)} ${pad(`${x.overstated.gateAware}/${x.overstated.compared}`, 8)} ${pad(x.overstated.abovePublic, 8)} ${pad(`${x.latency.fundedToCompleted.median ?? '-'}/${x.latency.fundedToCompleted.p95 ?? '-'} s`, 20)} ${pad(`${x.latency.poolDepositToWithdrawal.median ?? '-'}/${x.latency.poolDepositToWithdrawal.p95 ?? '-'} s`, 13)} ${x.doneWhen.met ? 'MET' : 'NOT MET'}`,
    ),
    `  (FIFO: the better of pool and end order; near: nearest rank; lik.: likelihood attacker; overst.: GET > the gate-aware observer's set)`,
    `overall: done-when met in ${r.rounds.filter((x) => x.doneWhen.met).length}/${r.rounds.length} round(s); routes overstated against the gate-aware observer ${r.rounds.reduce((a, x) => a + x.overstated.gateAware, 0)}/${r.rounds.reduce((a, x) => a + x.overstated.compared, 0)}`,
  );
  return `${lines.join('\n')}\n`;
}
