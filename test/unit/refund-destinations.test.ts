import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { destinationRefusal, RECOVER_SIDES_APART_MS, recoverDestinationRefusal, recoverTooSoon } from '../../src/operators/audit.ts';

const REFUND = '0x1111111111111111111111111111111111111111';
const RECIPIENT = '0x2222222222222222222222222222222222222222';
const TREASURY = '0x3333333333333333333333333333333333333333';
const STRANGER = '0x4444444444444444444444444444444444444444';
const route = { routeId: 'rt_test', refundAddress: REFUND, userDestinationAddress: RECIPIENT };

describe('where an operator may send a route’s funds (src/operators/audit.ts)', { timeout: 10_000 }, () => {
  const refunds: Array<[string, string, string | undefined, RegExp | null]> = [
    ['its refundAddress', REFUND, undefined, null],
    ['its refundAddress, in another case', REFUND.toUpperCase().replace('0X', '0x'), undefined, null],
    ['an allowlisted address', TREASURY, undefined, null],
    [
      'its recipient: the deposit side to the payout’s address links the two',
      RECIPIENT,
      undefined,
      /is route rt_test's recipient; .*links the deposit to the payout.*--override/,
    ],
    ['its recipient with an override (recorded)', RECIPIENT, 'the user lost the refund key; confirmed by support', null],
    ['its recipient with a blank override', RECIPIENT, '  ', /recipient/],
    ['a stranger', STRANGER, undefined, /is not an allowed destination/],
    ['a stranger with an override', STRANGER, 'exchange deposit the user named in ticket 4411', null],
  ];
  for (const [name, to, override, refused] of refunds) {
    test(`refund (deposit side) to ${name}`, () => {
      const answer = destinationRefusal(route, to, [TREASURY], override);
      if (refused) assert.match(answer ?? '', refused);
      else assert.equal(answer, null);
    });
  }

  test('a route without a refundAddress: only the allowlist, or an override', () => {
    const none = { ...route, refundAddress: null };
    assert.match(destinationRefusal(none, RECIPIENT, []) ?? '', /refundAddress \(none\)/);
    assert.equal(destinationRefusal(none, TREASURY, [TREASURY]), null);
  });

  test('recover keeps each side to its own address', () => {
    assert.equal(recoverDestinationRefusal(route, 'deposit', REFUND, [], undefined), null);
    assert.match(recoverDestinationRefusal(route, 'deposit', RECIPIENT, [], undefined) ?? '', /links both ends/);
    assert.equal(recoverDestinationRefusal(route, 'exit', RECIPIENT, [], undefined), null);
    assert.match(recoverDestinationRefusal(route, 'exit', REFUND, [], undefined) ?? '', /--override/);
  });

  test('the two sides of a route are recovered at least an hour apart, unless overridden (routectl and the worker)', () => {
    const now = Date.parse('2026-11-28T12:00:00Z');
    const done = (side: string, minutesAgo: number, outcome = 'done') => ({
      action: 'recover',
      outcome,
      params: { side },
      finishedAt: new Date(now - minutesAgo * 60_000),
    });
    assert.match(
      recoverTooSoon([done('exit', 10)], 'rt_test', 'deposit', undefined, now) ?? '',
      /exit side of rt_test was recovered at .*at least an hour later/,
    );
    assert.equal(recoverTooSoon([done('exit', 10)], 'rt_test', 'deposit', 'the user is waiting; agreed with support', now), null);
    assert.equal(recoverTooSoon([done('exit', RECOVER_SIDES_APART_MS / 60_000 + 1)], 'rt_test', 'deposit', undefined, now), null, 'over an hour ago');
    assert.equal(recoverTooSoon([done('deposit', 10)], 'rt_test', 'deposit', undefined, now), null, 'the same side again is not the other side');
    assert.equal(recoverTooSoon([done('exit', 10, 'refused')], 'rt_test', 'deposit', undefined, now), null, 'a refused recovery moved nothing');
  });
});
