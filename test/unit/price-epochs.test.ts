import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { decideEpoch, type HeldPrice, holdBands, movedBeyond, newEpoch } from '../../src/quote/priceEpochs.ts';

const T = (iso: string) => new Date(`2026-11-28T${iso}Z`);
/** Exit epochs of 600 s, clock epochs of 3600 s, hold 50 bps, margin 100 bps: hard stop at 75 bps. */
const ALIGNED = { epochSeconds: 3600, marginBps: 100, holdBps: 50, alignSeconds: 600 };

describe('price epochs: when the market ends a held price', { timeout: 10_000 }, () => {
  test('the bands: the hold, and the hard stop halfway to the margin', () => {
    assert.deepEqual(holdBands(ALIGNED), { holdBps: 50, hardStopBps: 75 });
    assert.deepEqual(holdBands({ epochSeconds: 3600, marginBps: 50 }), { holdBps: 25, hardStopBps: 37.5 });
    const cases: Array<[held: string, live: string, bps: number, beyond: boolean]> = [
      ['3000', '3015', 50, false], // exactly 50 bps: not beyond
      ['3000', '3015.01', 50, true],
      ['3000', '2985', 50, false],
      ['3000', '2984.99', 50, true],
      ['3000', '3011.25', 37.5, false], // fractional bands
      ['3000', '3011.26', 37.5, true],
    ];
    for (const [held, live, bps, beyond] of cases) assert.equal(movedBeyond(held, live, bps), beyond, `${held} → ${live} at ${bps} bps`);
  });

  test('aligned: the band is checked once an exit epoch, at its first quote; only the hard stop ends an epoch between', () => {
    const held: HeldPrice = newEpoch('3000', T('10:02:00'), ALIGNED);
    assert.deepEqual(held, { usdPrice: '3000', startedAt: T('10:02:00'), endsAt: T('11:00:00'), checkedUntil: T('10:10:00') });
    const cases: Array<[at: string, live: string, action: 'keep' | 'checked' | 'start', why: string]> = [
      ['10:05:00', '3020', 'keep', '67 bps, past the hold, mid exit epoch: kept'],
      ['10:05:00', '3023', 'start', '77 bps: past the hard stop, at once'],
      ['10:05:00', '2977', 'start', 'the hard stop either way'],
      ['10:10:00', '3020', 'start', 'the first quote of the next exit epoch finds it past the hold'],
      ['10:10:00', '3010', 'checked', '33 bps at the check: kept, and checked for this exit epoch'],
      ['11:00:00', '3000', 'start', 'the clock epoch is over'],
    ];
    for (const [at, live, action, why] of cases) assert.equal(decideEpoch(held, live, T(at), ALIGNED).action, action, why);
    const checked = decideEpoch(held, '3010', T('10:10:00'), ALIGNED);
    assert.ok(checked.action === 'checked');
    assert.deepEqual(checked.held.checkedUntil, T('10:20:00'));
    assert.equal(decideEpoch(checked.held, '3020', T('10:15:00'), ALIGNED).action, 'keep', 'checked in this exit epoch: no check again');
  });

  test('not aligned (before issue 33, and tests): the band at every quote, nothing written for a kept price', () => {
    const settings = { epochSeconds: 3600, marginBps: 50 };
    const held = newEpoch('3000', T('10:02:00'), settings);
    assert.equal(held.checkedUntil, undefined);
    assert.equal(decideEpoch(held, '3007', T('10:03:00'), settings).action, 'keep');
    assert.equal(decideEpoch(held, '3008', T('10:03:00'), settings).action, 'start', '26.7 bps: past half the margin');
    assert.equal(decideEpoch(null, '3000', T('10:03:00'), settings).action, 'start');
  });
});
