/**
 * The exit lottery (docs/privacy.md, "Timing: gates and the exit lottery"): when a gated note leaves the pool.
 *
 * Time is cut into exit epochs of PRIVACY_EXIT_EPOCH_SECONDS on the clock. In every epoch, each note of a class whose
 * gate is open (src/privacy/gate.ts) leaves with the same chance, the class's for that epoch, at a uniformly random
 * moment of it; a note that stays faces the next epoch's chance like any other. The chance forgets how long a note
 * has waited (a geometric wait), so a note that stayed through many epochs is exactly as likely to be the one a
 * withdrawal spent as one gated just now: every matching of the class's withdrawals to gated notes is equally likely,
 * which is what the anonymity set counts (src/privacy/anonymitySet.ts), and the payout order forgets the deposit
 * order over the mean wait.
 *
 * The chance is the class's, never a note's own: it follows the class's public traffic (pool entries over the last
 * PRIVACY_TRAFFIC_WINDOW_SECONDS) and the sets its waiting routes asked for, so that a note stays about as long as it
 * takes K − 1 others to enter (mean wait (K − 1) / traffic, kept between PRIVACY_EXIT_MEAN_MIN_SECONDS and
 * PRIVACY_EXIT_MEAN_MAX_SECONDS). When a note gated PRIVACY_EXIT_FLUSH_SECONDS ago may still be in the pool (the
 * class's withdrawals do not yet account for it, as an observer counts them), the class flushes: its chance is 1 and
 * every gated note leaves in that epoch. That bounds every wait, settles the class's history, and is decided from public
 * facts only, so it treats every note alike.
 *
 * Each note's draws come from a random seed of its own (kept with the note): the coin and the moment of an epoch are a
 * hash of the seed and the epoch, so every pass and every replica draws the same for a note and an epoch. Pure.
 */
import { createHash } from 'node:crypto';
import type { GateRules } from './gate.ts';

/** The lottery's public rules (configuration; docs/privacy.md). */
export interface ExitLotteryRules {
  /** PRIVACY_EXIT_EPOCH_SECONDS. */
  epochSeconds: number;
  /** PRIVACY_EXIT_MEAN_MIN_SECONDS: the shortest mean wait of a class whose routes ask for more than themselves. */
  meanMinSeconds: number;
  /** PRIVACY_EXIT_MEAN_MAX_SECONDS: the longest mean wait, however quiet the class. */
  meanMaxSeconds: number;
  /** PRIVACY_EXIT_FLUSH_SECONDS: a class whose oldest open gate is this old flushes (every gated note leaves). */
  flushSeconds: number;
  /** PRIVACY_TRAFFIC_WINDOW_SECONDS: the class's traffic is its pool entries over this long. */
  trafficWindowSeconds: number;
}

/** The rules of the privacy gate and the exit lottery together (the worker's PRIVACY_* configuration). */
export type PrivacyRules = GateRules & ExitLotteryRules;

/** One class's lottery in one epoch, written once (table class_exit_epochs) and read by every draw in it. */
export interface ClassEpoch {
  amountClass: string;
  /** The epoch's start (ms). */
  startsAt: number;
  /** Every gated note of the class leaves in this epoch with this chance (1 in a flush epoch). */
  chance: number;
  flush: boolean;
  /** The class's pool entries in its traffic window, and the set its waiting routes asked for: what the chance was drawn from. */
  entries: number;
  target: number;
}

/**
 * The traffic window a class's chance for the epoch starting at `startsAt` counts entries in: it ends as the epoch
 * before begins, so every pass that draws for the epoch (they run during the epoch before) counts the same entries.
 */
export function trafficWindow(rules: ExitLotteryRules, startsAt: number): { from: number; to: number } {
  const to = startsAt - rules.epochSeconds * 1000;
  return { from: to - rules.trafficWindowSeconds * 1000, to };
}

/**
 * The set a class's lottery aims for: the median of the minimums its waiting routes asked for (gated or not, the
 * notes that may still be in the pool), 1 when none asked for more.
 */
export function classTarget(minimums: readonly number[]): number {
  if (minimums.length === 0) return 1;
  const sorted = [...minimums].sort((a, b) => a - b);
  return sorted[Math.floor((sorted.length - 1) / 2)]!;
}

/**
 * The mean wait (in epochs, at least 1) for a class that aims at `target` with `entries` pool entries in its traffic
 * window: (target − 1) / entries per epoch, between the configured bounds; 1 (leave in the next epoch) when the
 * routes ask for no one but themselves.
 */
export function meanWaitEpochs(rules: ExitLotteryRules, target: number, entries: number): number {
  if (target <= 1) return 1;
  const lowest = Math.max(1, rules.meanMinSeconds / rules.epochSeconds);
  const highest = Math.max(lowest, rules.meanMaxSeconds / rules.epochSeconds);
  const perEpoch = entries / (rules.trafficWindowSeconds / rules.epochSeconds);
  const wanted = perEpoch > 0 ? (target - 1) / perEpoch : highest;
  return Math.min(highest, Math.max(lowest, wanted));
}

/**
 * The class's lottery for the epoch starting at `startsAt`: its chance from its traffic and target, or a flush when the
 * oldest gate that may still be open (`oldestOpenGateAt`: the earliest gated note that the class's withdrawals do not
 * yet certainly account for, src/privacy/classSets.ts) is PRIVACY_EXIT_FLUSH_SECONDS old.
 */
export function classEpoch(
  rules: ExitLotteryRules,
  amountClass: string,
  startsAt: number,
  traffic: { entries: number; target: number; oldestOpenGateAt: number | null },
): ClassEpoch {
  const flush = traffic.oldestOpenGateAt !== null && traffic.oldestOpenGateAt + rules.flushSeconds * 1000 <= startsAt;
  const chance = flush ? 1 : 1 / meanWaitEpochs(rules, traffic.target, traffic.entries);
  return { amountClass, startsAt, chance, flush, entries: traffic.entries, target: traffic.target };
}

/** Two uniform numbers in [0, 1) from a note's seed and an epoch: the coin, and the moment within the epoch. */
function draws(seed: string, startsAt: number): { coin: number; moment: number } {
  const digest = createHash('sha256').update(`${seed}|${startsAt}`).digest();
  const unit = (offset: number) => Number(digest.readBigUInt64BE(offset) >> 11n) / 2 ** 53;
  return { coin: unit(0), moment: unit(8) };
}

/** Whether a gated note with this seed leaves in the class's epoch, and the moment (ms) it leaves at; null: it stays. */
export function drawExit(epoch: ClassEpoch, seed: string, epochSeconds: number): { at: number } | null {
  const { coin, moment } = draws(seed, epoch.startsAt);
  if (!epoch.flush && coin >= epoch.chance) return null;
  return { at: epoch.startsAt + Math.floor(moment * epochSeconds * 1000) };
}

/**
 * What a class's lottery costs in time, for etaSeconds and the docs: the expected wait from the moment a gate opens
 * until the withdrawal, in seconds. Half an epoch until the next one begins, then a geometric number of epochs (mean
 * M) with the exit at a uniform moment of the last: (1/2 + M − 1 + 1/2) epochs = M epochs.
 */
export function expectedLotterySeconds(rules: ExitLotteryRules, target: number, entries: number): number {
  return Math.round(meanWaitEpochs(rules, target, entries) * rules.epochSeconds);
}

/**
 * The expected wait in the pool after the ASP's approval, for etaSeconds: until the gate opens, then the lottery's mean
 * wait. A class with `entries` pool entries in its traffic window keeps about (entries per second × mean wait) gated
 * notes in the pool; a route that asks for `target` needs that many others from other clients (one of them may be the
 * observer), and waits for the missing ones to come at the class's rate, at most its longest wait.
 */
export function expectedPrivacyWaitSeconds(rules: PrivacyRules, target: number, entries: number): number {
  const lottery = expectedLotterySeconds(rules, target, entries);
  if (target <= 1) return lottery;
  const perSecond = entries / rules.trafficWindowSeconds;
  const inPool = perSecond * meanWaitEpochs(rules, target, entries) * rules.epochSeconds;
  const missing = Math.max(0, target - inPool);
  const gate = perSecond > 0 ? Math.min(rules.maxWaitSeconds, missing / perSecond) : rules.maxWaitSeconds;
  return Math.round(gate + lottery);
}
