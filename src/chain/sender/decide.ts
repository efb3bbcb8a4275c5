/**
 * The transaction sender's decisions, as pure functions: given what is known of an intent (its record, the nonce the
 * chain reports for its sender, the receipts found, the time), each says what to do next. The rest of
 * src/chain/sender/ gathers those facts (database and chain reads) and carries out the moves (writes, broadcasts);
 * this file reads nothing and writes nothing, so every decision is tested without a chain
 * (test/unit/tx-sender-core.test.ts).
 *
 * An intent is one recorded send of a (route, step) at one nonce of its sender. Its states:
 *
 *   pending ── an attempt's receipt is found ─────────────────────────────▶ mined
 *   pending ── re-signed at the same nonce with higher fees ──────────────▶ pending, attempt n+1 ("replaced")
 *   pending ── nonce used by another intent of ours / operator void / ────▶ voided
 *              route ended before any node had it
 *   voided  ── one of its attempts mined after all ───────────────────────▶ mined (only the hash is recorded if
 *                                                                             the step has signed anew meanwhile)
 *   mined   ── a reorg took its block: nonce unused, no receipt ──────────▶ pending (broadcast again, the same bytes;
 *                                                                             its mined hash kept: it is never voided)
 *
 * A fact that costs a call (a receipt, a sibling intent, the chain's nonce) is fetched only when a decision needs
 * it, in the order the decisions need it: a move named `look-…` asks for the next fact, and the caller decides
 * again with it.
 */
import type { Hex } from 'viem';

/** Attempts of one intent, the first included; after that it waits for an operator (`routectl senders`). */
export const MAX_ATTEMPTS = 10;

/** Looks at the chain before deciding "not mined" or "never reached a node": a load-balanced RPC may ask a node that lags. */
export const LOOKS = 3;

/** Replacements one push makes while the node keeps rejecting the fees, before it leaves the rest to the next try. */
export const MAX_UNDERPRICED_REPLACEMENTS = 3;

/** The longest a waiting send goes without looking at the head of its sender's queue. */
export const HEAD_LOOK_INTERVAL_MS = 10_000;

/** What the decisions read of a recorded intent (a row of `tx_intents`). */
export interface IntentRecord {
  id: number;
  step: string;
  chainId: number;
  fromAddress: string;
  nonce: number;
  /** The latest attempt: the only bytes broadcast from now on. */
  txHash: string;
  /** pending (until a send saw its nonce used) | mined | voided. */
  status: string;
  /** 1, then one more for each replacement with higher fees. */
  attempt: number;
  /** The hashes of the earlier attempts, oldest first. */
  earlierTxHashes: string[];
  lastAttemptAt: Date;
  /** The attempt that mined, once seen (on a voided intent: it mined after all). */
  minedTxHash: string | null;
}

/** What the decisions read of a receipt. */
export interface MinedReceipt {
  transactionHash: Hex;
  status: 'success' | 'reverted';
}

/** The timings a sender is configured with (TxSenderOptions, with their defaults applied). */
export interface SenderTimings {
  /** How long one send waits for its transaction before it gives up for this try. */
  receiptTimeoutMs: number;
  /** How long the head of a sender's queue may wait unmined before it is replaced with higher fees. */
  replaceAfterMs: number;
  pollIntervalMs: number;
}

// ---------------------------------------------------------------------------------------------------------------
// Settling an intent: one round of a send's wait for its intent.

/** What a waiting send knows at the start of a round. */
export interface IntentFacts {
  intent: IntentRecord;
  /** How many transactions of the sender the chain has mined (its latest nonce count). */
  usedNonce: number;
  /** Whether this send has broadcast the intent yet. */
  pushed: boolean;
  now: number;
  /** When this send last looked at the head of its sender's queue (or started waiting). */
  headLookedAt: number;
}

export type NextMove =
  /** The intent's nonce is used: find out by which transaction (`usedNonceMove`). */
  | { kind: 'resolve-used-nonce' }
  /** Voided while unmined (its route ended, or an operator voided it): it is never broadcast again. */
  | { kind: 'refuse-voided' }
  /** Broadcast it (replacing it while the node rejects its fees: `afterBroadcast`). */
  | { kind: 'push' }
  /** Keep the sender's queue moving: push, or replace, whatever waits at its head (`headMove`). */
  | { kind: 'move-head' }
  /** Recorded mined, yet the chain reports its nonce unused: a node that lags, or a reorg that took its block (`reorgMove`). */
  | { kind: 'confirm-reorged' }
  | { kind: 'wait' };

export function nextMove(facts: IntentFacts, timings: Pick<SenderTimings, 'replaceAfterMs'>): NextMove {
  if (facts.usedNonce > facts.intent.nonce) return { kind: 'resolve-used-nonce' };
  if (facts.intent.status === 'voided') return { kind: 'refuse-voided' };
  if (facts.intent.status === 'mined') return { kind: 'confirm-reorged' };
  if (!facts.pushed) return { kind: 'push' };
  if (facts.now - facts.headLookedAt >= Math.min(timings.replaceAfterMs, HEAD_LOOK_INTERVAL_MS)) return { kind: 'move-head' };
  return { kind: 'wait' };
}

/**
 * One look at an intent recorded mined whose nonce the chain reports unused. A receipt of its mined attempt: the
 * node asked for the nonce lags, it is mined. None over LOOKS looks: a reorg took the block, and the intent is
 * pending again (its signed bytes are still valid at that nonce, so broadcasting them again pays nothing twice).
 */
export type ReorgMove<R extends MinedReceipt = MinedReceipt> = { kind: 'finish-mined'; receipt: R } | { kind: 'look-again' } | { kind: 'reopen' };

export function reorgMove<R extends MinedReceipt>(facts: { look: number; receipt: R | null }): ReorgMove<R> {
  if (facts.receipt) return { kind: 'finish-mined', receipt: facts.receipt };
  return facts.look + 1 < LOOKS ? { kind: 'look-again' } : { kind: 'reopen' };
}

/** After a round's move: give up for this try once the send has waited its time, else poll again. */
export type RoundEnd = { kind: 'time-out' /** Earlier transactions of the sender still unmined before this one. */; behind: number } | { kind: 'poll' };

export function roundEnd(facts: { intent: IntentRecord; usedNonce: number; now: number; deadline: number }): RoundEnd {
  if (facts.now < facts.deadline) return { kind: 'poll' };
  return { kind: 'time-out', behind: facts.usedNonce < facts.intent.nonce ? facts.intent.nonce - facts.usedNonce : 0 };
}

/** One look at an intent whose nonce the chain reports used. */
export interface UsedNonceFacts<R extends MinedReceipt = MinedReceipt> {
  /** As re-read at this look (another process may have replaced it, or recorded it mined). */
  intent: IntentRecord;
  /** 0 for the first look. */
  look: number;
  /** The receipt of one of its attempts; null: the node asked has none. */
  receipt: R | null;
  /** Another intent of ours at its nonce whose transaction mined; undefined until looked for. */
  minedSibling?: { id: number; step: string } | null;
}

export type UsedNonceMove<R extends MinedReceipt = MinedReceipt> =
  | { kind: 'finish-mined'; receipt: R }
  /** Recorded as mined too: the nonce is spent, and re-sending the same transaction cannot help. */
  | { kind: 'finish-reverted'; receipt: R }
  | { kind: 'look-for-mined-sibling' }
  /** It can never mine: voided, and the step's next try signs anew. */
  | { kind: 'void-for-sibling'; sibling: { id: number; step: string } }
  | { kind: 'look-again' }
  /** Voided earlier and never mined: a transaction that is not ours used its nonce. */
  | { kind: 'refuse-voided' }
  /** A transaction that is not ours used its nonce: an operator must look (NonceConsumedError). */
  | { kind: 'refuse-stranger' };

export function usedNonceMove<R extends MinedReceipt>(facts: UsedNonceFacts<R>): UsedNonceMove<R> {
  if (facts.receipt) return { kind: facts.receipt.status === 'success' ? 'finish-mined' : 'finish-reverted', receipt: facts.receipt };
  if (facts.minedSibling === undefined) return { kind: 'look-for-mined-sibling' };
  if (facts.minedSibling) return { kind: 'void-for-sibling', sibling: facts.minedSibling };
  if (facts.look + 1 < LOOKS) return { kind: 'look-again' };
  return { kind: facts.intent.status === 'voided' ? 'refuse-voided' : 'refuse-stranger' };
}

// ---------------------------------------------------------------------------------------------------------------
// Broadcasting and replacing.

/** What to do with a broadcast, given the intent as re-read under its sender's lock (null: the row is gone). */
export type BroadcastMove = { kind: 'skip-voided' } | { kind: 'skip-mined' } | { kind: 'broadcast' };

export function broadcastMove(current: IntentRecord | null): BroadcastMove {
  if (!current || current.status === 'voided') return { kind: 'skip-voided' };
  if (current.status === 'mined') return { kind: 'skip-mined' };
  return { kind: 'broadcast' };
}

/**
 * What a node's refusal of a broadcast means. `sent`: it already has the transaction or has used the nonce (the
 * chain decides later); `underpriced`: it wants higher fees; `underfunded`: the sender cannot pay; `unknown`: thrown.
 */
export type BroadcastRefusal = 'sent' | 'underpriced' | 'underfunded' | 'unknown';

export function classifyBroadcastError(message: string): BroadcastRefusal {
  const lower = message.toLowerCase();
  if (/already known|already imported|known transaction|nonce too low|replacement transaction underpriced/.test(lower)) return 'sent';
  if (/base fee|fee cap|underpriced|fee too low|gas price too low/.test(lower)) return 'underpriced';
  if (/insufficient funds/.test(lower)) return 'underfunded';
  return 'unknown';
}

export type BroadcastOutcome = 'sent' | 'underpriced' | 'voided';

/** After one broadcast of a push: done, replace with higher fees (the node wants them), or give up for this try. */
export type PushMove = { kind: 'done' } | { kind: 'replace' } | { kind: 'give-up' };

export function afterBroadcast(outcome: BroadcastOutcome, replacementsSoFar: number): PushMove {
  if (outcome !== 'underpriced') return { kind: 'done' };
  if (replacementsSoFar >= MAX_UNDERPRICED_REPLACEMENTS) return { kind: 'give-up' };
  return { kind: 'replace' };
}

/** Whether a replacement signed a new attempt (it leaves the intent as it was when it does not apply). */
export const replacementSigned = (before: Pick<IntentRecord, 'attempt'>, after: Pick<IntentRecord, 'attempt'>): boolean => after.attempt !== before.attempt;

/** Whether to replace an intent, decided under its sender's lock from the intent as it is now. */
export interface ReplaceFacts {
  /** As re-read under the lock; null: the row is gone. */
  current: IntentRecord | null;
  /** The attempt the caller saw: another process may have replaced it meanwhile. */
  seenAttempt: number;
  /** Whether an operator's cancel of it (`cancel:<id>`) is pending at its nonce; undefined until looked for. */
  cancelPending?: boolean;
}

export type ReplaceMove =
  /** Leave it as it is: settled, replaced by another process meanwhile, or superseded by a cancel. */
  | { kind: 'keep' }
  | { kind: 'look-for-cancel' }
  /** It had its MAX_ATTEMPTS: an operator looks (TransactionPendingError). */
  | { kind: 'refuse-max-attempts' }
  /** Sign a new attempt at the same nonce with bumped fees (`bumpedFees`/`bumpedGasPrice`) and record it. */
  | { kind: 're-sign' };

export function replaceMove(facts: ReplaceFacts): ReplaceMove {
  if (facts.current?.status !== 'pending' || facts.current.attempt !== facts.seenAttempt) return { kind: 'keep' };
  if (facts.cancelPending === undefined) return { kind: 'look-for-cancel' };
  if (facts.cancelPending) return { kind: 'keep' };
  if (facts.current.attempt >= MAX_ATTEMPTS) return { kind: 'refuse-max-attempts' };
  return { kind: 're-sign' };
}

/** A replacement pays at least 12.5 % more (nodes require 10 %), and always at least 1 wei more. */
export function bump(fee: bigint): bigint {
  const raised = (fee * 1125n + 999n) / 1000n;
  return raised > fee ? raised : fee + 1n;
}

const maxOf = (...values: bigint[]) => values.reduce((a, b) => (a > b ? a : b));

export interface Eip1559Fees {
  maxFeePerGas: bigint;
  maxPriorityFeePerGas: bigint;
}

/** The fees of a replacement: both fields bumped from the last attempt's, at least what the chain asks now, the cap at least the tip. */
export function bumpedFees(last: Eip1559Fees, chainNow: Eip1559Fees): Eip1559Fees {
  const maxPriorityFeePerGas = maxOf(bump(last.maxPriorityFeePerGas), chainNow.maxPriorityFeePerGas);
  const maxFeePerGas = maxOf(bump(last.maxFeePerGas), chainNow.maxFeePerGas, maxPriorityFeePerGas);
  return { maxFeePerGas, maxPriorityFeePerGas };
}

/** The gas price of a replacement on a chain without a base fee: bumped from the last attempt's, at least the chain's now. */
export const bumpedGasPrice = (last: bigint, chainNow: bigint): bigint => maxOf(bump(last), chainNow);

/** The head of a sender's queue, as a waiting send finds it: nothing there, push it, or replace it (it waited too long). */
export type HeadMove = { kind: 'none' } | { kind: 'push' } | { kind: 'replace' };

export function headMove(head: Pick<IntentRecord, 'lastAttemptAt'> | null, now: number, timings: Pick<SenderTimings, 'replaceAfterMs'>): HeadMove {
  if (!head) return { kind: 'none' };
  return now - head.lastAttemptAt.getTime() >= timings.replaceAfterMs ? { kind: 'replace' } : { kind: 'push' };
}

// ---------------------------------------------------------------------------------------------------------------
// Finding a step's transaction.

/** The step's one live intent (pending or mined) among all it ever recorded, oldest first. */
export const liveIntent = <I extends IntentRecord>(rows: I[]): I | null => rows.find((row) => row.status !== 'voided') ?? null;

/** Where a voided intent's mined attempt is found: as recorded, nowhere (a sibling at its nonce mined), or on chain. */
export type MinedAfterVoidMove = { kind: 'recorded'; hash: string } | { kind: 'look-at-siblings' } | { kind: 'none' } | { kind: 'look-on-chain' };

export function minedAfterVoidMove(voided: IntentRecord, siblings?: Pick<IntentRecord, 'minedTxHash'>[]): MinedAfterVoidMove {
  if (voided.minedTxHash) return { kind: 'recorded', hash: voided.minedTxHash };
  if (siblings === undefined) return { kind: 'look-at-siblings' };
  if (siblings.some((sibling) => sibling.minedTxHash !== null)) return { kind: 'none' };
  return { kind: 'look-on-chain' };
}

/** A voided intent of the step mined after all; what becomes of the step's live intent. */
export type VoidedMinedMove =
  /** The step has no live intent: the mined one is the step's (recorded as mined). */
  | { kind: 'take-voided' }
  /** The live intent is at the same nonce and can never mine: voided, and the mined one is the step's. */
  | { kind: 'void-live-take-voided' }
  /** The live intent is at another nonce and could pay a second time: an operator cancels it (IntentConflictError). */
  | { kind: 'conflict' };

export function voidedMinedMove(live: IntentRecord | null, voided: IntentRecord): VoidedMinedMove {
  if (!live) return { kind: 'take-voided' };
  if (live.chainId !== voided.chainId || live.fromAddress !== voided.fromAddress || live.nonce !== voided.nonce) return { kind: 'conflict' };
  return { kind: 'void-live-take-voided' };
}

/** The hash `TxSender.intent` answers for a step's intent; `minedAttemptHash` is undefined until its receipts are looked at. */
export type StepTransactionMove = { kind: 'none' } | { kind: 'hash'; txHash: string } | { kind: 'look-for-mined-attempt' };

export function stepTransactionMove(intent: IntentRecord | null, minedAttemptHash?: string | null): StepTransactionMove {
  if (!intent) return { kind: 'none' };
  if (intent.minedTxHash) return { kind: 'hash', txHash: intent.minedTxHash };
  // After a replacement the earlier attempt may be the one that mined.
  if (intent.earlierTxHashes.length > 0 && minedAttemptHash === undefined) return { kind: 'look-for-mined-attempt' };
  return { kind: 'hash', txHash: minedAttemptHash ?? intent.txHash };
}

// ---------------------------------------------------------------------------------------------------------------
// Signing a new intent, and the operator's and ending routes' moves.

/** The nonce of a new intent: after what the node has (its pending count) and after our queued intents. */
export const nextNonce = (pendingCount: number, lastQueuedNonce: number | null): number =>
  lastQueuedNonce == null ? pendingCount : Math.max(pendingCount, lastQueuedNonce + 1);

/** An operator's void of intent #id, before any look at receipts. `usedNonce` is undefined until the chain is asked. */
export type VoidRequestMove =
  | { kind: 'refuse-unknown' }
  | { kind: 'already-voided' }
  | { kind: 'look-at-nonce' }
  /** Its nonce is unused, so it may still mine: it must be replaced first (`routectl void <id> --cancel`). */
  | { kind: 'refuse-may-still-mine' }
  /** Its nonce is used: confirm over several looks that none of its attempts mined (`voidLookMove`). */
  | { kind: 'confirm-unmined' };

export function voidRequestMove(intent: IntentRecord | null, usedNonce?: number): VoidRequestMove {
  if (!intent) return { kind: 'refuse-unknown' };
  if (intent.status === 'voided') return { kind: 'already-voided' };
  if (usedNonce === undefined) return { kind: 'look-at-nonce' };
  if (usedNonce <= intent.nonce) return { kind: 'refuse-may-still-mine' };
  return { kind: 'confirm-unmined' };
}

/** One look of an operator's void at an intent whose nonce is used, the intent re-read at that look. */
export type VoidLookMove<R extends MinedReceipt = MinedReceipt> =
  /** One of its attempts mined: recorded as mined, and the void refused. */
  | { kind: 'refuse-mined'; receipt: R }
  | { kind: 'look-again' }
  /** Another process recorded it mined meanwhile: the void is refused. */
  | { kind: 'refuse-recorded-mined' }
  | { kind: 'void' };

export function voidLookMove<R extends MinedReceipt>(facts: { intent: IntentRecord; look: number; receipt: R | null }): VoidLookMove<R> {
  if (facts.receipt) return { kind: 'refuse-mined', receipt: facts.receipt };
  // Once seen mined, never voided: reopened after a reorg it keeps its mined hash, and a node that lags behind its block
  // must not make the step sign anew.
  if (facts.intent.minedTxHash && facts.intent.status !== 'voided') return { kind: 'refuse-recorded-mined' };
  if (facts.intent.status === 'pending' && facts.look + 1 < LOOKS) return { kind: 'look-again' };
  return facts.intent.status === 'mined' ? { kind: 'refuse-recorded-mined' } : { kind: 'void' };
}

/**
 * An operator's cancel (a 0-value self-send at the intent's nonce). `replacementRecorded` is undefined until the
 * cancel step is looked up, `usedNonce` until the chain is asked.
 */
export type CancelMove =
  | { kind: 'refuse-not-pending' }
  | { kind: 'look-for-replacement' }
  /** Its cancel is recorded already: wait for it like any send. */
  | { kind: 'settle-replacement' }
  | { kind: 'look-at-nonce' }
  /** Its nonce is used already: there is nothing to replace, only to void (`routectl void <id>`). */
  | { kind: 'refuse-nonce-used' }
  | { kind: 'sign-replacement' };

export function cancelMove(facts: { original: IntentRecord | null; replacementRecorded?: boolean; usedNonce?: number }): CancelMove {
  if (facts.original?.status !== 'pending') return { kind: 'refuse-not-pending' };
  if (facts.replacementRecorded === undefined) return { kind: 'look-for-replacement' };
  if (facts.replacementRecorded) return { kind: 'settle-replacement' };
  if (facts.usedNonce === undefined) return { kind: 'look-at-nonce' };
  if (facts.usedNonce > facts.original.nonce) return { kind: 'refuse-nonce-used' };
  return { kind: 'sign-replacement' };
}

/**
 * The intents an ending route voids at one sender: its intents no node has, taken from the end of the sender's queue
 * (`tail`: pending intents at or above the node's pending nonce, highest first) and only up to the first intent of
 * another route: voiding one below another route's intent would leave a gap that blocks it.
 */
export function unsentTail<I extends { routeId: string }>(tail: I[], routeId: string): I[] {
  const end = tail.findIndex((row) => row.routeId !== routeId);
  return end === -1 ? tail : tail.slice(0, end);
}
