import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { PUBLIC_ERRORS, publicError } from '../../src/transfers/publicErrors.ts';

const ADDRESS = '0x000000000000000000000000000000000000bEEF';
const TX = `0x${'ab'.repeat(32)}`;

describe('the public view’s error: a fixed catalogue, never the stored words', { timeout: 10_000 }, () => {
  test('each stored error maps to its catalogue line', () => {
    const cases: Array<[stored: string | null, shown: string | null]> = [
      [null, null],
      ['no deposit received by the deadline 2026-11-23T01:02:03.456Z', PUBLIC_ERRORS.noDeposit],
      [`underpaid: received 5 of 10 by the deadline 2026-11-23T01:02:03.456Z; refunded 5 to ${ADDRESS} (tx ${TX})`, PUBLIC_ERRORS.underpaid],
      [
        `ADDRESS_REUSE_REFUSED: the deposit came from the recipient ${ADDRESS}, which links the payout to it for anyone; refunded 10 to ${ADDRESS} (tx ${TX}) before the pool.`,
        PUBLIC_ERRORS.addressReuse,
      ],
      [`deposit too small; refunded 1000000 to ${ADDRESS} (tx ${TX})`, PUBLIC_ERRORS.refunded],
      ['the transfer could not be started; do not deposit', PUBLIC_ERRORS.notStarted],
      ['failed by operator: customer Alice asked on ticket 4411 to stop it', PUBLIC_ERRORS.other],
      [`failed by operator: bridge down; refunded 5 to ${ADDRESS} (tx ${TX}) by hand`, PUBLIC_ERRORS.other],
      [`AspRejected: the ASP rejected label 123; the pool note (10) went back to the hub account (ragequit)`, PUBLIC_ERRORS.other],
      ['cancelled in Temporal; see heldFunds for where the money is', PUBLIC_ERRORS.other],
    ];
    for (const [stored, shown] of cases) assert.equal(publicError(stored), shown, String(stored));
  });

  test('no line of the catalogue names an address, amount, hash or time', () => {
    for (const line of Object.values(PUBLIC_ERRORS)) assert.doesNotMatch(line, /0x|\d/, line);
  });
});
