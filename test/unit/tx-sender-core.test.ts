import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { leastQueued } from '../../src/chain/sender/pickAccount.ts';
import {
  afterBroadcast,
  broadcastMove,
  bump,
  bumpedFees,
  bumpedGasPrice,
  cancelMove,
  classifyBroadcastError,
  headMove,
  type IntentFacts,
  type IntentRecord,
  LOOKS,
  liveIntent,
  MAX_ATTEMPTS,
  type MinedReceipt,
  minedAfterVoidMove,
  nextMove,
  reorgMove,
  nextNonce,
  replaceMove,
  replacementSigned,
  roundEnd,
  stepTransactionMove,
  unsentTail,
  usedNonceMove,
  voidedMinedMove,
  voidLookMove,
  voidRequestMove,
} from '../../src/chain/sender/decide.ts';

/**
 * The transaction sender's decisions (src/chain/sender/decide.ts), without a chain or a database: one table row per
 * decision the sender makes, then properties that hold over any facts. The sender's actions on a real chain are
 * tested in test/e2e/senders.test.ts and test/integration/legs.test.ts.
 */

const NONCE = 5;
const intent = (change: Partial<IntentRecord> = {}): IntentRecord => ({
  id: 7,
  step: 'payout',
  chainId: 1,
  fromAddress: '0x00000000000000000000000000000000000000aa',
  nonce: NONCE,
  txHash: '0x02',
  status: 'pending',
  attempt: 1,
  earlierTxHashes: [],
  lastAttemptAt: new Date(0),
  minedTxHash: null,
  ...change,
});
const receipt = (status: MinedReceipt['status'] = 'success'): MinedReceipt => ({ transactionHash: '0x0b', status });
const timings = { replaceAfterMs: 60_000 };
const sibling = { id: 8, step: 'cancel:7' };

/** Runs each row as its own test: `decide(row.given)` must equal `row.expected`. */
function table<G, E>(name: string, decide: (given: G) => E, rows: Array<{ situation: string; given: G; expected: E }>) {
  describe(name, { timeout: 5_000 }, () => {
    for (const row of rows) test(row.situation, { timeout: 1_000 }, () => assert.deepEqual(decide(row.given), row.expected));
  });
}

const round = (change: Partial<IntentFacts>): IntentFacts => ({ intent: intent(), usedNonce: NONCE, pushed: true, now: 0, headLookedAt: 0, ...change });
table('settling: the next move of a waiting send', (facts: IntentFacts) => nextMove(facts, timings), [
  { situation: 'the nonce is used: find out by whom', given: round({ usedNonce: NONCE + 1 }), expected: { kind: 'resolve-used-nonce' } },
  {
    situation: 'the nonce is used and the intent was voided: the chain wins (it may have mined after all)',
    given: round({ usedNonce: NONCE + 1, intent: intent({ status: 'voided' }) }),
    expected: { kind: 'resolve-used-nonce' },
  },
  {
    situation: 'voided, nonce unused: never broadcast again',
    given: round({ intent: intent({ status: 'voided' }), pushed: false }),
    expected: { kind: 'refuse-voided' },
  },
  {
    situation: 'voided behind earlier transactions of its sender',
    given: round({ usedNonce: 2, intent: intent({ status: 'voided' }) }),
    expected: { kind: 'refuse-voided' },
  },
  { situation: 'pending, not broadcast by this send yet: push it', given: round({ pushed: false }), expected: { kind: 'push' } },
  {
    situation: 'recorded mined but the chain reports its nonce unused: a lagging node or a reorg, looked into',
    given: round({ pushed: false, intent: intent({ status: 'mined', minedTxHash: '0x02' }) }),
    expected: { kind: 'confirm-reorged' },
  },
  { situation: 'pushed, the head looked at 10 s ago: look at the head again', given: round({ now: 10_000 }), expected: { kind: 'move-head' } },
  { situation: 'pushed, the head looked at just under 10 s ago: wait', given: round({ now: 9_999 }), expected: { kind: 'wait' } },
]);
table('settling: a quick sender (replaceAfterMs 1 s) looks at the head every second', (facts: IntentFacts) => nextMove(facts, { replaceAfterMs: 1_000 }), [
  { situation: '1 s since the last look: look at the head', given: round({ now: 1_000 }), expected: { kind: 'move-head' } },
  { situation: 'just under 1 s: wait', given: round({ now: 999 }), expected: { kind: 'wait' } },
]);

const mined = { transactionHash: '0x02', status: 'success' } as const;
table('settling: a mined intent whose nonce the chain reports unused', reorgMove, [
  {
    situation: 'a receipt of its attempt: the node asked for the nonce lags, it is mined',
    given: { look: 0, receipt: mined },
    expected: { kind: 'finish-mined', receipt: mined },
  },
  { situation: 'no receipt at the first look: look again', given: { look: 0, receipt: null }, expected: { kind: 'look-again' } },
  { situation: 'no receipt at the last look: a reorg took it, pending again', given: { look: LOOKS - 1, receipt: null }, expected: { kind: 'reopen' } },
]);

table('voiding: an intent once seen mined is never voided', voidLookMove, [
  {
    situation: 'reopened after a reorg (pending, its mined hash kept), no receipt: refused',
    given: { intent: intent({ status: 'pending', minedTxHash: '0x02' }), look: LOOKS - 1, receipt: null },
    expected: { kind: 'refuse-recorded-mined' },
  },
]);

table('settling: after a round, give up for this try or poll again', roundEnd, [
  { situation: 'before the deadline: poll', given: { intent: intent(), usedNonce: NONCE, now: 99, deadline: 100 }, expected: { kind: 'poll' } },
  {
    situation: 'at the deadline, at the head of its queue',
    given: { intent: intent(), usedNonce: NONCE, now: 100, deadline: 100 },
    expected: { kind: 'time-out', behind: 0 },
  },
  {
    situation: 'past the deadline behind three earlier transactions of its sender',
    given: { intent: intent(), usedNonce: NONCE - 3, now: 200, deadline: 100 },
    expected: { kind: 'time-out', behind: 3 },
  },
]);

const used = (change: Partial<Parameters<typeof usedNonceMove>[0]>) => ({ intent: intent(), look: 0, receipt: null, ...change });
table('a used nonce: which transaction used it', usedNonceMove, [
  { situation: 'an attempt mined successfully: finish', given: used({ receipt: receipt() }), expected: { kind: 'finish-mined', receipt: receipt() } },
  {
    situation: 'an attempt mined and reverted: finish (recorded), reverted',
    given: used({ receipt: receipt('reverted') }),
    expected: { kind: 'finish-reverted', receipt: receipt('reverted') },
  },
  {
    situation: 'a voided intent whose attempt mined after all: finish',
    given: used({ intent: intent({ status: 'voided' }), receipt: receipt() }),
    expected: { kind: 'finish-mined', receipt: receipt() },
  },
  { situation: 'no receipt: look for a sibling of ours at the nonce', given: used({}), expected: { kind: 'look-for-mined-sibling' } },
  { situation: 'a sibling of ours mined at its nonce: void it', given: used({ minedSibling: sibling }), expected: { kind: 'void-for-sibling', sibling } },
  { situation: 'nothing found at the first look: look again', given: used({ minedSibling: null }), expected: { kind: 'look-again' } },
  { situation: 'nothing found at the second look: look again', given: used({ look: 1, minedSibling: null }), expected: { kind: 'look-again' } },
  {
    situation: 'nothing found after every look: a stranger used it',
    given: used({ look: LOOKS - 1, minedSibling: null }),
    expected: { kind: 'refuse-stranger' },
  },
  {
    situation: 'nothing found after every look at a voided intent: refused as voided',
    given: used({ look: LOOKS - 1, minedSibling: null, intent: intent({ status: 'voided' }) }),
    expected: { kind: 'refuse-voided' },
  },
]);

table('a broadcast, by the intent as re-read under its sender lock', broadcastMove, [
  { situation: 'the row is gone: not broadcast', given: null, expected: { kind: 'skip-voided' } },
  { situation: 'voided: never broadcast', given: intent({ status: 'voided' }), expected: { kind: 'skip-voided' } },
  { situation: 'mined: nothing to broadcast', given: intent({ status: 'mined' }), expected: { kind: 'skip-mined' } },
  { situation: 'pending: broadcast', given: intent(), expected: { kind: 'broadcast' } },
]);

table('a node refusing a broadcast', classifyBroadcastError, [
  { situation: 'already known', given: 'already known', expected: 'sent' },
  { situation: 'already imported (any case)', given: 'Transaction ALREADY IMPORTED', expected: 'sent' },
  { situation: 'known transaction', given: 'known transaction: 0x12', expected: 'sent' },
  { situation: 'nonce too low (the nonce is used: the chain decides)', given: 'nonce too low', expected: 'sent' },
  { situation: 'a replacement of ours is already there', given: 'replacement transaction underpriced', expected: 'sent' },
  { situation: 'below the base fee', given: 'max fee per gas less than block base fee', expected: 'underpriced' },
  { situation: 'fee cap too low', given: 'fee cap less than block base fee', expected: 'underpriced' },
  { situation: 'underpriced', given: 'transaction underpriced', expected: 'underpriced' },
  { situation: 'fee too low', given: 'fee too low', expected: 'underpriced' },
  { situation: 'gas price too low', given: 'gas price too low to replace', expected: 'underpriced' },
  { situation: 'the sender cannot pay', given: 'insufficient funds for gas * price + value', expected: 'underfunded' },
  { situation: 'anything else is thrown', given: 'execution reverted', expected: 'unknown' },
  { situation: 'no message', given: '', expected: 'unknown' },
]);

table(
  'a push, after one broadcast',
  ({ outcome, replacements }: { outcome: 'sent' | 'underpriced' | 'voided'; replacements: number }) => afterBroadcast(outcome, replacements),
  [
    { situation: 'sent: done', given: { outcome: 'sent', replacements: 0 }, expected: { kind: 'done' } },
    { situation: 'voided (not broadcast): done', given: { outcome: 'voided', replacements: 0 }, expected: { kind: 'done' } },
    { situation: 'the node wants higher fees: replace', given: { outcome: 'underpriced', replacements: 0 }, expected: { kind: 'replace' } },
    { situation: 'still underpriced after two replacements: replace again', given: { outcome: 'underpriced', replacements: 2 }, expected: { kind: 'replace' } },
    {
      situation: 'still underpriced after three replacements: give up for this try',
      given: { outcome: 'underpriced', replacements: 3 },
      expected: { kind: 'give-up' },
    },
  ],
);

table('a push, after a replacement', ({ before, after }: { before: number; after: number }) => replacementSigned({ attempt: before }, { attempt: after }), [
  { situation: 'a new attempt was signed: broadcast it', given: { before: 1, after: 2 }, expected: true },
  { situation: 'the replacement did not apply: stop', given: { before: 2, after: 2 }, expected: false },
]);

table('a replacement, decided under the sender lock', replaceMove, [
  { situation: 'the row is gone: keep', given: { current: null, seenAttempt: 1 }, expected: { kind: 'keep' } },
  { situation: 'mined meanwhile: keep', given: { current: intent({ status: 'mined' }), seenAttempt: 1 }, expected: { kind: 'keep' } },
  { situation: 'voided meanwhile: keep', given: { current: intent({ status: 'voided' }), seenAttempt: 1 }, expected: { kind: 'keep' } },
  { situation: 'another process replaced it meanwhile: keep', given: { current: intent({ attempt: 2 }), seenAttempt: 1 }, expected: { kind: 'keep' } },
  { situation: 'pending as seen: look for a cancel of it', given: { current: intent(), seenAttempt: 1 }, expected: { kind: 'look-for-cancel' } },
  {
    situation: 'a cancel of it is pending: keep (the cancel supersedes it)',
    given: { current: intent(), seenAttempt: 1, cancelPending: true },
    expected: { kind: 'keep' },
  },
  {
    situation: `at ${MAX_ATTEMPTS} attempts: refuse, an operator looks`,
    given: { current: intent({ attempt: MAX_ATTEMPTS }), seenAttempt: MAX_ATTEMPTS, cancelPending: false },
    expected: { kind: 'refuse-max-attempts' },
  },
  {
    situation: 'below the attempt limit: re-sign with bumped fees',
    given: { current: intent({ attempt: MAX_ATTEMPTS - 1 }), seenAttempt: MAX_ATTEMPTS - 1, cancelPending: false },
    expected: { kind: 're-sign' },
  },
]);

table('the fee bump: 12.5 % more, rounded up, at least 1 wei', bump, [
  { situation: 'zero', given: 0n, expected: 1n },
  { situation: '1 wei', given: 1n, expected: 2n },
  { situation: '8 wei (exactly 9)', given: 8n, expected: 9n },
  { situation: '1000 wei', given: 1000n, expected: 1125n },
  { situation: '1001 wei (rounded up)', given: 1001n, expected: 1127n },
]);

table(
  'replacement fees',
  ({ last, now }: { last: [bigint, bigint]; now: [bigint, bigint] }) =>
    bumpedFees({ maxFeePerGas: last[0], maxPriorityFeePerGas: last[1] }, { maxFeePerGas: now[0], maxPriorityFeePerGas: now[1] }),
  [
    {
      situation: 'the chain asks less now: both fields bumped',
      given: { last: [1000n, 100n], now: [500n, 50n] },
      expected: { maxFeePerGas: 1125n, maxPriorityFeePerGas: 113n },
    },
    {
      situation: 'the chain asks more now: what it asks',
      given: { last: [1000n, 100n], now: [5000n, 500n] },
      expected: { maxFeePerGas: 5000n, maxPriorityFeePerGas: 500n },
    },
    {
      situation: 'the tip rises above the cap: the cap follows the tip',
      given: { last: [100n, 100n], now: [50n, 400n] },
      expected: { maxFeePerGas: 400n, maxPriorityFeePerGas: 400n },
    },
  ],
);

table('replacement gas price (no base fee)', ({ last, now }: { last: bigint; now: bigint }) => bumpedGasPrice(last, now), [
  { situation: 'the chain asks less: bumped', given: { last: 1000n, now: 10n }, expected: 1125n },
  { situation: 'the chain asks more: what it asks', given: { last: 1000n, now: 2000n }, expected: 2000n },
]);

table('the head of the sender queue, as a waiting send finds it', ({ head, now }: { head: IntentRecord | null; now: number }) => headMove(head, now, timings), [
  { situation: 'no pending intent of ours at the head: nothing', given: { head: null, now: 0 }, expected: { kind: 'none' } },
  { situation: 'its last attempt is younger than replaceAfterMs: push it', given: { head: intent(), now: 59_999 }, expected: { kind: 'push' } },
  { situation: 'its last attempt waited replaceAfterMs: replace it', given: { head: intent(), now: 60_000 }, expected: { kind: 'replace' } },
]);

table('the live intent of a step', (rows: IntentRecord[]) => liveIntent(rows)?.id ?? null, [
  { situation: 'never signed', given: [], expected: null },
  { situation: 'only voided intents', given: [intent({ id: 1, status: 'voided' })], expected: null },
  { situation: 'voided, then signed anew', given: [intent({ id: 1, status: 'voided' }), intent({ id: 2 })], expected: 2 },
  { situation: 'mined', given: [intent({ id: 3, status: 'mined' })], expected: 3 },
]);

table(
  'a voided intent: did it mine after all?',
  ({ voided, siblings }: { voided: IntentRecord; siblings?: Array<{ minedTxHash: string | null }> }) => minedAfterVoidMove(voided, siblings),
  [
    {
      situation: 'its mined attempt is recorded',
      given: { voided: intent({ status: 'voided', minedTxHash: '0x0c' }) },
      expected: { kind: 'recorded', hash: '0x0c' },
    },
    { situation: 'not recorded: look at its nonce siblings first', given: { voided: intent({ status: 'voided' }) }, expected: { kind: 'look-at-siblings' } },
    {
      situation: 'a sibling mined at its nonce: it did not',
      given: { voided: intent({ status: 'voided' }), siblings: [{ minedTxHash: '0x0d' }] },
      expected: { kind: 'none' },
    },
    {
      situation: 'no sibling mined: look at the chain',
      given: { voided: intent({ status: 'voided' }), siblings: [{ minedTxHash: null }] },
      expected: { kind: 'look-on-chain' },
    },
  ],
);

const voidedMined = intent({ id: 1, status: 'voided', minedTxHash: '0x0c' });
table('a voided intent of the step mined after all', ({ live }: { live: IntentRecord | null }) => voidedMinedMove(live, voidedMined), [
  { situation: 'the step has no live intent: it is the step transaction', given: { live: null }, expected: { kind: 'take-voided' } },
  { situation: 'the step signed anew at the same nonce: that one is voided', given: { live: intent({ id: 2 }) }, expected: { kind: 'void-live-take-voided' } },
  { situation: 'the step signed anew at another nonce: conflict', given: { live: intent({ id: 2, nonce: NONCE + 1 }) }, expected: { kind: 'conflict' } },
  { situation: 'the step signed anew on another chain: conflict', given: { live: intent({ id: 2, chainId: 2 }) }, expected: { kind: 'conflict' } },
  { situation: 'the step signed anew from another sender: conflict', given: { live: intent({ id: 2, fromAddress: '0x01' }) }, expected: { kind: 'conflict' } },
]);

table('the hash TxSender.intent answers', ({ row, found }: { row: IntentRecord | null; found?: string | null }) => stepTransactionMove(row, found), [
  { situation: 'never signed', given: { row: null }, expected: { kind: 'none' } },
  { situation: 'the mined attempt is recorded', given: { row: intent({ minedTxHash: '0x01' }) }, expected: { kind: 'hash', txHash: '0x01' } },
  { situation: 'one attempt: its hash', given: { row: intent() }, expected: { kind: 'hash', txHash: '0x02' } },
  {
    situation: 'replaced: look for the attempt that mined',
    given: { row: intent({ earlierTxHashes: ['0x01'] }) },
    expected: { kind: 'look-for-mined-attempt' },
  },
  {
    situation: 'replaced, an earlier attempt mined: that one',
    given: { row: intent({ earlierTxHashes: ['0x01'] }), found: '0x01' },
    expected: { kind: 'hash', txHash: '0x01' },
  },
  {
    situation: 'replaced, none mined yet: the latest',
    given: { row: intent({ earlierTxHashes: ['0x01'] }), found: null },
    expected: { kind: 'hash', txHash: '0x02' },
  },
]);

table('the nonce of a new intent', ({ pending, last }: { pending: number; last: number | null }) => nextNonce(pending, last), [
  { situation: 'nothing of ours queued: the node pending count', given: { pending: 4, last: null }, expected: 4 },
  { situation: 'ours queued above it: after the last', given: { pending: 4, last: 6 }, expected: 7 },
  { situation: 'ours queued at it: after it', given: { pending: 4, last: 4 }, expected: 5 },
]);

table(
  "an operator's void, before looking at receipts",
  ({ row, usedNonce }: { row: IntentRecord | null; usedNonce?: number }) => voidRequestMove(row, usedNonce),
  [
    { situation: 'no such intent: refused', given: { row: null }, expected: { kind: 'refuse-unknown' } },
    { situation: 'already voided: returned as it is', given: { row: intent({ status: 'voided' }) }, expected: { kind: 'already-voided' } },
    { situation: 'pending: ask the chain for its nonce', given: { row: intent() }, expected: { kind: 'look-at-nonce' } },
    { situation: 'its nonce is next to mine: it may still mine', given: { row: intent(), usedNonce: NONCE }, expected: { kind: 'refuse-may-still-mine' } },
    {
      situation: 'behind earlier transactions: it may still mine',
      given: { row: intent(), usedNonce: NONCE - 1 },
      expected: { kind: 'refuse-may-still-mine' },
    },
    {
      situation: 'its nonce is used: confirm none of its attempts mined',
      given: { row: intent(), usedNonce: NONCE + 1 },
      expected: { kind: 'confirm-unmined' },
    },
  ],
);

table("an operator's void, one look at an intent whose nonce is used", voidLookMove, [
  {
    situation: 'an attempt mined: refused (recorded as mined)',
    given: { intent: intent(), look: 0, receipt: receipt() },
    expected: { kind: 'refuse-mined', receipt: receipt() },
  },
  { situation: 'pending, no receipt, looks remain: look again', given: { intent: intent(), look: 0, receipt: null }, expected: { kind: 'look-again' } },
  { situation: 'pending, no receipt after every look: void', given: { intent: intent(), look: LOOKS - 1, receipt: null }, expected: { kind: 'void' } },
  {
    situation: 'another process recorded it mined: refused',
    given: { intent: intent({ status: 'mined', minedTxHash: '0x02' }), look: 0, receipt: null },
    expected: { kind: 'refuse-recorded-mined' },
  },
  {
    situation: 'another process voided it: void (the row stays as it is)',
    given: { intent: intent({ status: 'voided' }), look: 0, receipt: null },
    expected: { kind: 'void' },
  },
]);

table("an operator's cancel", cancelMove, [
  { situation: 'no such intent: refused', given: { original: null }, expected: { kind: 'refuse-not-pending' } },
  { situation: 'mined: refused', given: { original: intent({ status: 'mined' }) }, expected: { kind: 'refuse-not-pending' } },
  { situation: 'voided: refused', given: { original: intent({ status: 'voided' }) }, expected: { kind: 'refuse-not-pending' } },
  { situation: 'pending: look for its recorded cancel', given: { original: intent() }, expected: { kind: 'look-for-replacement' } },
  { situation: 'its cancel is recorded: wait for it', given: { original: intent(), replacementRecorded: true }, expected: { kind: 'settle-replacement' } },
  {
    situation: 'no cancel recorded: ask the chain for the nonce',
    given: { original: intent(), replacementRecorded: false },
    expected: { kind: 'look-at-nonce' },
  },
  {
    situation: 'its nonce is used: refused (void it instead)',
    given: { original: intent(), replacementRecorded: false, usedNonce: NONCE + 1 },
    expected: { kind: 'refuse-nonce-used' },
  },
  {
    situation: 'its nonce is unused: sign the cancel',
    given: { original: intent(), replacementRecorded: false, usedNonce: NONCE },
    expected: { kind: 'sign-replacement' },
  },
]);

table(
  'an ending route voids its unsent intents from the end of the queue',
  (routes: string[]) =>
    unsentTail(
      routes.map((routeId) => ({ routeId })),
      'mine',
    ).length,
  [
    { situation: 'the whole tail is the route', given: ['mine', 'mine'], expected: 2 },
    { situation: 'up to the first intent of another route', given: ['mine', 'other', 'mine'], expected: 1 },
    { situation: "another route's intent ends the queue: nothing", given: ['other', 'mine'], expected: 0 },
    { situation: 'nothing unsent', given: [], expected: 0 },
  ],
);

// ---------------------------------------------------------------------------------------------------------------

const statusArb = fc.constantFrom('pending', 'mined', 'voided');
const intentArb = fc
  .record({
    nonce: fc.nat(1_000),
    status: statusArb,
    attempt: fc.integer({ min: 1, max: MAX_ATTEMPTS + 2 }),
    lastAttemptAt: fc.integer({ min: 0, max: 10_000_000 }),
    minedTxHash: fc.option(fc.constant('0x0c')),
  })
  .map(({ lastAttemptAt, ...change }) => intent({ ...change, lastAttemptAt: new Date(lastAttemptAt) }));
const roundArb = fc.record({
  intent: intentArb,
  usedDelta: fc.integer({ min: -5, max: 5 }),
  pushed: fc.boolean(),
  now: fc.integer({ min: 0, max: 20_000_000 }),
  sinceHeadLook: fc.nat(100_000),
  replaceAfterMs: fc.integer({ min: 1, max: 120_000 }),
});
const fee = fc.bigInt({ min: 0n, max: 10n ** 15n });

describe('properties of the decisions', { timeout: 30_000 }, () => {
  test('a used nonce is never pushed, replaced, or taken for voided before looking at receipts', { timeout: 10_000 }, () => {
    fc.assert(
      fc.property(roundArb, ({ intent, usedDelta, pushed, now, sinceHeadLook, replaceAfterMs }) => {
        const usedNonce = intent.nonce + usedDelta;
        const move = nextMove({ intent, usedNonce, pushed, now, headLookedAt: now - sinceHeadLook }, { replaceAfterMs });
        if (usedNonce > intent.nonce) assert.deepEqual(move, { kind: 'resolve-used-nonce' });
        else assert.notEqual(move.kind, 'resolve-used-nonce', 'never looks for who used a nonce the chain reports unused');
      }),
    );
  });

  test('a found receipt always finishes: no replacement and no void once an attempt is mined', { timeout: 10_000 }, () => {
    fc.assert(
      fc.property(
        intentArb,
        fc.nat(LOOKS - 1),
        fc.constantFrom<MinedReceipt['status']>('success', 'reverted'),
        fc.option(fc.constant(sibling), { nil: undefined }),
        (row, look, status, minedSibling) => {
          const move = usedNonceMove({ intent: row, look, receipt: receipt(status), minedSibling });
          assert.ok(move.kind === 'finish-mined' || move.kind === 'finish-reverted');
          assert.equal(voidLookMove({ intent: row, look, receipt: receipt(status) }).kind, 'refuse-mined');
        },
      ),
    );
  });

  test('only a pending intent at the attempt its caller saw is ever re-signed, and never beyond MAX_ATTEMPTS', { timeout: 10_000 }, () => {
    fc.assert(
      fc.property(
        fc.option(intentArb, { nil: null }),
        fc.integer({ min: 1, max: MAX_ATTEMPTS + 2 }),
        fc.option(fc.boolean(), { nil: undefined }),
        (current, seenAttempt, cancelPending) => {
          if (replaceMove({ current, seenAttempt, cancelPending }).kind !== 're-sign') return;
          assert.equal(current?.status, 'pending');
          assert.equal(current.attempt, seenAttempt);
          assert.equal(cancelPending, false, 'never while a cancel of it is pending');
          assert.ok(current.attempt < MAX_ATTEMPTS);
        },
      ),
    );
  });

  test('a void is only confirmed for a used nonce', { timeout: 10_000 }, () => {
    fc.assert(
      fc.property(intentArb, fc.integer({ min: -3, max: 3 }), (row, usedDelta) => {
        const move = voidRequestMove(row, row.nonce + usedDelta);
        if (move.kind === 'confirm-unmined') assert.ok(usedDelta > 0);
        if (usedDelta <= 0) assert.notEqual(move.kind, 'confirm-unmined');
      }),
    );
  });

  test("a replacement's fees are never lower than the last attempt's: ≥ 12.5 % more on both fields, ≥ the chain's now", { timeout: 10_000 }, () => {
    fc.assert(
      fc.property(fee, fee, fee, fee, (lastMax, lastTip, nowMax, nowTip) => {
        const next = bumpedFees({ maxFeePerGas: lastMax, maxPriorityFeePerGas: lastTip }, { maxFeePerGas: nowMax, maxPriorityFeePerGas: nowTip });
        for (const [last, now, bumped] of [
          [lastMax, nowMax, next.maxFeePerGas],
          [lastTip, nowTip, next.maxPriorityFeePerGas],
        ] as const) {
          assert.ok(bumped > last, 'strictly higher');
          assert.ok(bumped * 1000n >= last * 1125n, '12.5 % more (nodes require 10 %)');
          assert.ok(bumped >= now, "at least the chain's now");
        }
        assert.ok(next.maxFeePerGas >= next.maxPriorityFeePerGas, 'the cap covers the tip');
        const gasPrice = bumpedGasPrice(lastMax, nowMax);
        assert.ok(gasPrice > lastMax && gasPrice * 1000n >= lastMax * 1125n && gasPrice >= nowMax);
      }),
    );
  });

  test('a step never keeps two live intents at different nonces', { timeout: 10_000 }, () => {
    const where = fc.record({ chainId: fc.integer({ min: 1, max: 2 }), fromAddress: fc.constantFrom('0x01', '0x02'), nonce: fc.nat(3) });
    fc.assert(
      fc.property(fc.option(where, { nil: null }), where, (liveAt, voidedAt) => {
        const live = liveAt && intent({ id: 2, ...liveAt });
        const voided = intent({ id: 1, status: 'voided', minedTxHash: '0x0c', ...voidedAt });
        const move = voidedMinedMove(live, voided);
        // What stays live once the mined voided intent is taken (a conflict takes nothing: it stops for an operator).
        const liveAfter = move.kind === 'take-voided' ? [voided] : move.kind === 'void-live-take-voided' ? [voided] : [live];
        const nonces = new Set(liveAfter.filter((row) => row !== null).map((row) => `${row.chainId}:${row.fromAddress}:${row.nonce}`));
        assert.ok(nonces.size <= 1);
        if (move.kind === 'void-live-take-voided') assert.deepEqual({ ...liveAt }, { ...voidedAt }, 'only a live intent at the same nonce is voided for it');
      }),
    );
  });

  test('a simulated wait for one intent on a random chain: every attempt at one nonce, no replacement once it mined, no void while its nonce is unused', {
    timeout: 10_000,
  }, () => {
    const event = fc.record({
      elapsedMs: fc.nat(30_000),
      chain: fc.constantFrom('nothing', 'nothing', 'nothing', 'mine-latest', 'mine-earlier', 'sibling', 'stranger'),
      reverted: fc.boolean(),
      refusal: fc.constantFrom<'sent' | 'underpriced'>('sent', 'underpriced'),
      chainFees: fc.record({ maxFeePerGas: fee, maxPriorityFeePerGas: fee }),
    });
    fc.assert(
      fc.property(fc.array(event, { maxLength: 60 }), fc.integer({ min: 1_000, max: 60_000 }), (events, replaceAfterMs) => {
        let row = intent({ lastAttemptAt: new Date(0) });
        const attempts = [{ hash: row.txHash, nonce: row.nonce, fees: { maxFeePerGas: 100n, maxPriorityFeePerGas: 10n } }];
        let usedBy: { kind: 'attempt'; index: number; reverted: boolean } | { kind: 'sibling' | 'stranger' } | null = null;
        let pushed = false;
        let now = 0;
        let headLookedAt = 0;

        const tryReplace = (chainFees: { maxFeePerGas: bigint; maxPriorityFeePerGas: bigint }) => {
          const move = replaceMove({ current: row, seenAttempt: row.attempt, cancelPending: false });
          if (move.kind !== 're-sign') return false;
          assert.equal(usedBy, null, 'never replaced once the chain reported its nonce used');
          const last = attempts.at(-1)!;
          const fees = bumpedFees(last.fees, chainFees);
          assert.ok(fees.maxFeePerGas > last.fees.maxFeePerGas && fees.maxPriorityFeePerGas > last.fees.maxPriorityFeePerGas);
          attempts.push({ hash: `0x${attempts.length + 2}`, nonce: row.nonce, fees });
          row = {
            ...row,
            attempt: row.attempt + 1,
            earlierTxHashes: [...row.earlierTxHashes, row.txHash],
            txHash: attempts.at(-1)!.hash,
            lastAttemptAt: new Date(now),
          };
          return true;
        };

        for (const e of events) {
          now += e.elapsedMs;
          if (!usedBy && e.chain === 'mine-latest') usedBy = { kind: 'attempt', index: attempts.length - 1, reverted: e.reverted };
          if (!usedBy && e.chain === 'mine-earlier') usedBy = { kind: 'attempt', index: 0, reverted: e.reverted };
          if (!usedBy && (e.chain === 'sibling' || e.chain === 'stranger')) usedBy = { kind: e.chain };
          const usedNonce = usedBy ? row.nonce + 1 : row.nonce;
          const move = nextMove({ intent: row, usedNonce, pushed, now, headLookedAt }, { replaceAfterMs });
          if (move.kind === 'resolve-used-nonce') {
            const found = usedBy?.kind === 'attempt' ? receipt(usedBy.reverted ? 'reverted' : 'success') : null;
            for (let look = 0; look < LOOKS + 1; look++) {
              let resolved = usedNonceMove({ intent: row, look, receipt: found });
              if (resolved.kind === 'look-for-mined-sibling')
                resolved = usedNonceMove({ intent: row, look, receipt: found, minedSibling: usedBy?.kind === 'sibling' ? sibling : null });
              if (resolved.kind === 'look-again') continue;
              const expected = {
                attempt: found?.status === 'reverted' ? 'finish-reverted' : 'finish-mined',
                sibling: 'void-for-sibling',
                stranger: 'refuse-stranger',
              };
              assert.equal(resolved.kind, expected[usedBy!.kind]);
              return;
            }
            assert.fail('looked more than LOOKS times');
          }
          assert.equal(usedBy, null, 'only a used nonce ends the wait');
          if (move.kind === 'push') {
            pushed = true;
            for (let replacements = 0; ; replacements++) {
              const next = afterBroadcast(e.refusal, replacements);
              if (next.kind !== 'replace' || !tryReplace(e.chainFees)) break;
            }
          }
          if (move.kind === 'move-head') {
            headLookedAt = now;
            if (headMove(row, now, { replaceAfterMs }).kind === 'replace') tryReplace(e.chainFees);
          }
          assert.ok(row.attempt <= MAX_ATTEMPTS);
          assert.ok(
            attempts.every((attempt) => attempt.nonce === row.nonce),
            'every attempt at the intent nonce',
          );
        }
      }),
    );
  });
});

describe('several accounts taking turns (leastQueued)', () => {
  const cases: { queued: number[]; turn: number; chosen: number; why: string }[] = [
    { queued: [0, 0, 0], turn: 0, chosen: 0, why: 'all idle: the one in turn' },
    { queued: [0, 0, 0], turn: 2, chosen: 2, why: 'all idle, turn at the last' },
    { queued: [0, 0, 0], turn: 5, chosen: 2, why: 'a turn past the end wraps' },
    { queued: [1, 0, 0], turn: 0, chosen: 1, why: 'one stuck at its head: the next idle one' },
    { queued: [1, 0, 0], turn: 2, chosen: 2, why: 'stuck one skipped, turn kept' },
    { queued: [3, 2, 4], turn: 0, chosen: 1, why: 'all busy: the shortest queue' },
    { queued: [2, 2, 1], turn: 0, chosen: 2, why: 'shortest wins over the turn' },
    { queued: [7], turn: 3, chosen: 0, why: 'one account' },
  ];
  for (const { queued, turn, chosen, why } of cases)
    test(`${JSON.stringify(queued)} turn ${turn} → ${chosen}: ${why}`, () => assert.equal(leastQueued(queued, turn), chosen));
  test('no account is an error', () => assert.throws(() => leastQueued([], 0), /no account/));
  test('idle accounts chosen in turn take every one once per round', () => {
    const picks: number[] = [];
    let turn = 0;
    for (let i = 0; i < 6; i++) {
      const chosen = leastQueued([0, 0, 0], turn);
      picks.push(chosen);
      turn = chosen + 1;
    }
    assert.deepEqual(picks, [0, 1, 2, 0, 1, 2]);
  });
});
