/**
 * The exit rules on a virtual clock: arrivals of one class, the privacy watcher's passes (approvals, gates, the
 * class's lottery and each gated note's draw, through the service's own pure code: src/privacy/gate.ts,
 * exitLottery.ts, classSets.ts), withdrawals at their drawn moments (counted at proof like activities/pool.ts does)
 * and the reports GET would show at the end. No chain, no Temporal: what it measures is the rules, fast enough to run
 * a day of traffic per class level in seconds (bench/exits/run.ts); the linkability bench plays the same rules on the
 * real stack.
 */
import { randomBytes } from 'node:crypto';
import type { CountMethod } from '../../src/domain/observations.ts';
import type { PoolStateView } from '../../src/privacy/anonymitySet.ts';
import { asIdentities, type ClassNote, oldestOpenGate, reportedCount, setIfLeaving } from '../../src/privacy/classSets.ts';
import { epochStart, nextEpochStart } from '../../src/privacy/exitEpochs.ts';
import { classEpoch, classTarget, type ClassEpoch, drawExit, type ExitLotteryRules, trafficWindow } from '../../src/privacy/exitLottery.ts';
import { decideGates, type GateRules } from '../../src/privacy/gate.ts';

export interface SimRules extends ExitLotteryRules, GateRules {
  /** Seconds between two passes of the privacy watcher. */
  pollSeconds: number;
  /** Seconds from a note's pool entry until the ASP's root approves it. */
  reviewSeconds: number;
  /** Seconds from a drawn exit until the withdrawal is mined (proof and block). */
  proofSeconds: number;
}

/** One route of the class: when its note enters the pool, its client (distinct users: distinct clients) and its minimum. */
export interface Arrival {
  at: number;
  client: string;
  minimum: number;
  /** The note's value (default 100): a withdrawal takes `withdrawalAmount` of it, and a note worth less is nobody's candidate. */
  value?: bigint;
}

export interface SimRoute {
  routeId: string;
  client: string;
  minimum: number;
  enteredAt: number;
  gatedAt: number | null;
  gate: 'set-reached' | 'max-wait' | null;
  withdrawnAt: number | null;
  /** GET's set once withdrawn (recounted at the end, as the service recounts a class on every withdrawal), and how it was counted. */
  reported: number | null;
  method: CountMethod | null;
  deferrals: number;
}

export interface SimResult {
  routes: SimRoute[];
  /** Withdrawals in the order they were mined, each with its candidates (the gated notes it could have spent). */
  withdrawals: Array<{ routeId: string; at: number; epochAt: number; candidates: string[] }>;
  epochs: ClassEpoch[];
}

const CLASS = 'sim:class';
const approvedEverything: PoolStateView = { inState: () => true, approved: () => true };

/** Runs the class until every route has left (or `until`), with the watcher passing every pollSeconds. */
export function simulate(
  rules: SimRules,
  arrivals: readonly Arrival[],
  options: { until?: number; withdrawalAmount?: (now: number) => bigint } = {},
): SimResult {
  const notes = new Map<string, ClassNote>();
  const routes = new Map<string, SimRoute>();
  const seeds = new Map<string, string>();
  const epochs = new Map<number, ClassEpoch>();
  const withdrawals: SimResult['withdrawals'] = [];
  const pending = [...arrivals].sort((a, b) => a.at - b.at);
  const start = pending[0]?.at ?? 0;
  // Every route has left by its longest wait and a flush after it, unless the rules fail to let it out.
  const until = options.until ?? start + (rules.maxWaitSeconds + 3 * rules.flushSeconds + 60) * 1000 + (pending.at(-1)?.at ?? start) - start;
  let nextId = 0;

  const proofs: Array<{ routeId: string; at: number; epochAt: number; gate: 'set-reached' | 'max-wait' }> = [];
  for (let now = start; now <= until; now += rules.pollSeconds * 1000) {
    while (pending.length > 0 && pending[0]!.at <= now) {
      const arrival = pending.shift()!;
      const routeId = `r${String(nextId++).padStart(4, '0')}`;
      notes.set(routeId, {
        routeId,
        amountClass: CLASS,
        commitment: routeId,
        label: routeId,
        value: arrival.value ?? 100n,
        client: arrival.client,
        sender: null,
        ragequit: false,
        depositedAt: arrival.at,
        approvedAt: null,
        gatedAt: null,
        withdrawnAt: null,
        members: null,
        provedLeaves: null,
        exitEpochAt: null,
        exitAt: null,
      });
      routes.set(routeId, {
        routeId,
        client: arrival.client,
        minimum: arrival.minimum,
        enteredAt: arrival.at,
        gatedAt: null,
        gate: null,
        withdrawnAt: null,
        reported: null,
        method: null,
        deferrals: 0,
      });
      seeds.set(routeId, randomBytes(16).toString('hex'));
    }
    // Withdrawals due by now: counted at proof against the exact epoch, deferred below the route's minimum.
    for (const proof of proofs.filter((p) => p.at <= now)) {
      proofs.splice(proofs.indexOf(proof), 1);
      const note = notes.get(proof.routeId)!;
      const route = routes.get(proof.routeId)!;
      const all = asIdentities([...notes.values()]);
      const amount = options.withdrawalAmount?.(proof.at) ?? 0n;
      const { members, count } = setIfLeaving(note, all, approvedEverything, { exitEpochAt: proof.epochAt, amount });
      // Past its longest wait a route leaves whatever its set (as the gate would have let it).
      const pastLongestWait = epochStart(note.depositedAt, rules.epochSeconds) + rules.maxWaitSeconds * 1000 <= proof.epochAt;
      const required = proof.gate === 'set-reached' && !pastLongestWait ? route.minimum : 1;
      if (count.size < required) {
        route.deferrals += 1;
        notes.set(note.routeId, { ...note, exitAt: null, exitEpochAt: null });
        continue;
      }
      const minedAt = proof.at + rules.proofSeconds * 1000;
      notes.set(note.routeId, { ...note, withdrawnAt: minedAt, members, exitEpochAt: proof.epochAt, exitAt: null });
      route.withdrawnAt = minedAt;
      withdrawals.push({ routeId: note.routeId, at: minedAt, epochAt: proof.epochAt, candidates: [note.routeId, ...members.map((m) => m.routeId)] });
    }
    // The watcher's pass: approvals, gates, the class's lottery for the next epoch, draws.
    for (const note of notes.values()) {
      if (note.approvedAt === null && note.depositedAt + rules.reviewSeconds * 1000 <= now) notes.set(note.routeId, { ...note, approvedAt: now });
    }
    const identities = asIdentities([...notes.values()]);
    for (const decision of decideGates({ notes: identities, state: approvedEverything, now, rules, minimumOf: (id) => routes.get(id)!.minimum })) {
      if (!decision.opens) continue;
      notes.set(decision.routeId, { ...notes.get(decision.routeId)!, gatedAt: decision.epochAt });
      Object.assign(routes.get(decision.routeId)!, { gatedAt: decision.epochAt, gate: decision.opens });
    }
    const epochAt = nextEpochStart(now, rules.epochSeconds);
    if (!epochs.has(epochAt)) {
      const window = trafficWindow(rules, epochAt);
      const entries = [...notes.values()].filter((n) => n.depositedAt >= window.from && n.depositedAt < window.to).length;
      const waitingMinimums = [...notes.values()].filter((n) => n.withdrawnAt === null).map((n) => routes.get(n.routeId)!.minimum);
      epochs.set(
        epochAt,
        classEpoch(rules, CLASS, epochAt, { entries, target: classTarget(waitingMinimums), oldestOpenGateAt: oldestOpenGate([...notes.values()]) }),
      );
    }
    const epoch = epochs.get(epochAt)!;
    for (const note of notes.values()) {
      if (note.withdrawnAt !== null || note.gatedAt === null || note.gatedAt > epochAt || note.exitAt !== null) continue;
      const exit = drawExit(epoch, seeds.get(note.routeId)!, rules.epochSeconds);
      if (!exit) continue;
      notes.set(note.routeId, { ...note, exitAt: exit.at, exitEpochAt: epochAt });
      proofs.push({ routeId: note.routeId, at: exit.at, epochAt, gate: routes.get(note.routeId)!.gate! });
    }
    if (pending.length === 0 && [...routes.values()].every((r) => r.withdrawnAt !== null)) break;
  }
  if (options.until === undefined && [...routes.values()].some((r) => r.withdrawnAt === null) && pending.length === 0) {
    throw new Error(
      `routes still in the pool after their longest wait and three flush periods: ${[...routes.values()]
        .filter((r) => r.withdrawnAt === null)
        .map((r) => r.routeId)
        .join(', ')}`,
    );
  }
  const final = asIdentities([...notes.values()]);
  for (const route of routes.values()) {
    const note = final.find((n) => n.routeId === route.routeId)!;
    if (note.withdrawnAt === null) continue;
    const { size, method } = reportedCount(note, final);
    Object.assign(route, { reported: size, method });
  }
  return { routes: [...routes.values()], withdrawals: withdrawals.sort((a, b) => a.at - b.at), epochs: [...epochs.values()] };
}

/** Kendall's tau between two orders of the same items (1: same order, 0: unrelated, −1: reversed). */
export function kendallTau(first: readonly string[], second: readonly string[]): number {
  const rank = new Map(second.map((id, i) => [id, i]));
  const items = first.filter((id) => rank.has(id));
  let concordant = 0;
  let discordant = 0;
  for (let i = 0; i < items.length; i++) {
    for (let j = i + 1; j < items.length; j++) {
      if (rank.get(items[i]!)! < rank.get(items[j]!)!) concordant++;
      else discordant++;
    }
  }
  const pairs = concordant + discordant;
  return pairs === 0 ? 0 : (concordant - discordant) / pairs;
}
