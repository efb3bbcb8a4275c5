/** The listing's opaque cursor (src/transfers/listingCursor.ts): what it writes it reads back; nothing else passes. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { decodeCursor, encodeCursor } from '../../src/transfers/listingCursor.ts';

describe('the listing cursor', { timeout: 10_000 }, () => {
  test('round-trips a position and refuses anything it did not write', () => {
    const position = { createdAt: '2026-11-29T11:25:00.123456Z', routeId: `rt_${'a'.repeat(32)}` };
    assert.deepEqual(decodeCursor(encodeCursor(position)), position);
    const cases: Array<[string, string]> = [
      ['empty', ''],
      ['not base64url', 'djF8+/=='],
      ['another version', Buffer.from(`v2|${position.createdAt}|${position.routeId}`).toString('base64url')],
      ['milliseconds only', Buffer.from(`v1|2026-11-29T11:25:00.123Z|${position.routeId}`).toString('base64url')],
      ['a malformed routeId', Buffer.from(`v1|${position.createdAt}|rt_123`).toString('base64url')],
      ['an impossible date', Buffer.from(`v1|2026-13-45T11:25:00.123456Z|${position.routeId}`).toString('base64url')],
      ['a day the month has not', Buffer.from(`v1|2026-02-30T11:25:00.123456Z|${position.routeId}`).toString('base64url')],
      ['year 0', Buffer.from(`v1|0000-01-01T00:00:00.000000Z|${position.routeId}`).toString('base64url')],
      ['hour 24', Buffer.from(`v1|2026-02-03T24:00:00.000000Z|${position.routeId}`).toString('base64url')],
      ['cut short', encodeCursor(position).slice(0, 20)],
      ['too long', 'a'.repeat(200)],
    ];
    for (const [what, cursor] of cases) assert.equal(decodeCursor(cursor), null, what);
  });
});
