import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { mayHoldExit } from '../../activities/funds.ts';

describe('locateFunds reads the exit account only when the note may have left the pool', { timeout: 10_000 }, () => {
  test('mayHoldExit', () => {
    const cases: Array<[note: { withdrawnAt: Date | null } | null, pooled: bigint, reads: boolean, why: string]> = [
      [null, 0n, false, 'no note: the route never reached the pool'],
      [{ withdrawnAt: null }, 5n, false, 'the note is in the pool: the exit account was never paid'],
      [{ withdrawnAt: null }, 0n, true, 'gone from the pool, not booked: a withdrawal (or a ragequit) the route did not record'],
      [{ withdrawnAt: new Date() }, 0n, true, 'withdrawn'],
    ];
    for (const [note, pooled, reads, why] of cases) assert.equal(mayHoldExit(note, pooled), reads, why);
  });
});
