/**
 * The privacy gate (docs/privacy.md, "Timing: gates and the exit lottery"): when a note in the pool may start to
 * leave. A note's gate opens, during one exit epoch and for the next, once
 * 1. the ASP approved it (the service saw its label in the root on chain),
 * 2. it has been in the pool PRIVACY_MIN_PEER_AGE_SECONDS by the next epoch's start, and
 * 3. its anonymity set, were it to leave in the next epoch with the notes whose gates open with it (its cohort), has
 *    reached the minimum its route asked for; or its longest wait (PRIVACY_MAX_WAIT_SECONDS from the start of the
 *    epoch it entered the pool in) has passed by then, and it leaves with what it has.
 * Exits drawn but not made yet count as made (they will be, before the note could leave). A gate never closes again:
 * from then on the note faces the class's exit lottery (src/privacy/exitLottery.ts) like every other gated note.
 * A note whose gate is closed is nobody's candidate, so notes that wait for larger sets of their own (waiters) are
 * never counted in anyone's set. Pure: activities/anonymitySets.ts applies the decisions.
 */
import type { GateLog, GateReason } from '../domain/observations.ts';
import type { PoolStateView } from './anonymitySet.ts';
import { type ClassNote, setIfLeaving } from './classSets.ts';
import { epochStart, nextEpochStart } from './exitEpochs.ts';

/** The gate's public rules (configuration). */
export interface GateRules {
  epochSeconds: number;
  maxWaitSeconds: number;
  minPeerAgeSeconds: number;
}

/** One waiting note's gate after a pass. */
export interface GateDecision {
  routeId: string;
  /** Why the gate opens now (the note may leave from `epochAt` on); null: it stays closed. */
  opens: GateReason | null;
  /** The start (ms) of the exit epoch the decision was for. */
  epochAt: number;
  log: GateLog;
}

/**
 * The gates of one class's waiting notes at `now`: which open (for the next exit epoch), and what each counted.
 * `notes` are all of the class's notes with their client identities (src/privacy/classSets.ts asIdentities);
 * `state` says which labels the ASP's latest root approves.
 */
export function decideGates(input: {
  notes: readonly ClassNote[];
  state: PoolStateView;
  now: number;
  rules: GateRules;
  minimumOf: (routeId: string) => number;
}): GateDecision[] {
  const { notes, state, rules, minimumOf } = input;
  const epochAt = nextEpochStart(input.now, rules.epochSeconds);
  const waiting = notes.filter((n) => n.withdrawnAt === null && !n.ragequit && n.gatedAt === null);
  const ready = waiting.filter((n) => n.approvedAt !== null && state.approved(n.label) && n.depositedAt + rules.minPeerAgeSeconds * 1000 <= epochAt);
  const due = new Set(ready.filter((n) => epochStart(n.depositedAt, rules.epochSeconds) + rules.maxWaitSeconds * 1000 <= epochAt).map((n) => n.routeId));

  // The cohort: the largest group of ready notes that each reach their minimum if they all open together (the due ones
  // open whatever they reach). Dropping a note can only lower the others' sets, so drop the short ones until none is.
  let cohort = new Set(ready.map((n) => n.routeId));
  let counted: Map<string, ReturnType<typeof setIfLeaving>>;
  for (;;) {
    const open = cohort;
    // Each ready note counted as if its gate opened with the cohort's (a note dropped from it: as if it alone joined).
    const gatedWith = (id: string) => notes.map((n) => (open.has(n.routeId) || n.routeId === id ? { ...n, gatedAt: epochAt } : n));
    counted = new Map(ready.map((n) => [n.routeId, setIfLeaving(n, gatedWith(n.routeId), state, { exitEpochAt: epochAt, amount: 0n, countDrawn: true })]));
    const short = [...cohort].filter((id) => !due.has(id) && counted.get(id)!.count.size < minimumOf(id));
    if (short.length === 0) break;
    cohort = new Set([...cohort].filter((id) => !short.includes(id)));
  }

  const stillWaiting = ready.length - cohort.size + (waiting.length - ready.length);
  return ready.map((n) => {
    const { members, count, withdrawals } = counted.get(n.routeId)!;
    const opens = !cohort.has(n.routeId) ? null : due.has(n.routeId) && count.size < minimumOf(n.routeId) ? 'max-wait' : 'set-reached';
    return {
      routeId: n.routeId,
      opens,
      epochAt,
      log: {
        epoch: new Date(epochAt).toISOString(),
        set: count.size,
        minimum: minimumOf(n.routeId),
        method: count.method,
        candidates: members.length,
        clients: new Set([0, ...members.map((m) => m.client)]).size,
        cohort: cohort.has(n.routeId) ? cohort.size : 0,
        withdrawals: withdrawals.before,
        settled: withdrawals.settled,
        waiting: stillWaiting,
      },
    };
  });
}
