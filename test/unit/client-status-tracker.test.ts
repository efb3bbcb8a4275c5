import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isNewerEventId, OnStatusFailure, statusTracker } from '../../src/client/actions/statusTracker.ts';
import type { View } from '../../src/client/actions/getTransfer.ts';

// How waitForCompletion decides what to report: once per status, in order, replays and older events ignored.

const view = (status: string) => ({ routeId: 'rt_x', status }) as unknown as View;

test('event ids: numbers by value (beyond 2^53 too), other ids by difference', { timeout: 5_000 }, () => {
  const rows: Array<[string, string | undefined, boolean]> = [
    ['1', undefined, true],
    ['2', '1', true],
    ['10', '9', true],
    ['9', '10', false],
    ['3', '3', false],
    ['9007199254740993', '9007199254740992', true],
    ['b', 'a', true],
    ['a', 'a', false],
  ];
  for (const [id, last, newer] of rows) assert.equal(isNewerEventId(id, last), newer, `${id} after ${last}`);
});

test('a replayed older event neither reports again nor makes the current status look new', { timeout: 5_000 }, () => {
  const reported: string[] = [];
  const tracker = statusTracker({ onStatus: (v) => reported.push(v.status) });
  assert.equal(tracker.seen(view('SHIELDED'), '3'), false);
  assert.equal(tracker.seen(view('UNSHIELD_SENT'), '4'), false);
  assert.equal(tracker.seen(view('SHIELDED'), '3'), false); // replayed by a proxy or a reconnect
  assert.equal(tracker.seen(view('UNSHIELD_SENT'), '5'), false); // newer, but the status reported already
  assert.equal(tracker.seen(view('COMPLETED'), '6'), true);
  assert.deepEqual(reported, ['SHIELDED', 'UNSHIELD_SENT', 'COMPLETED']);
  assert.equal(tracker.lastId, '6');
});

test('polled views (no id) report each status once', { timeout: 5_000 }, () => {
  const reported: string[] = [];
  const tracker = statusTracker({ onStatus: (v) => reported.push(v.status) });
  for (const status of ['BRIDGING_IN', 'BRIDGING_IN', 'SHIELDED', 'FAILED']) tracker.seen(view(status));
  assert.deepEqual(reported, ['BRIDGING_IN', 'SHIELDED', 'FAILED']);
  assert.equal(tracker.lastId, undefined);
});

test("an onStatus that throws comes out as OnStatusFailure carrying the caller's own error", { timeout: 5_000 }, () => {
  const own = new Error('the caller failed');
  const tracker = statusTracker({
    onStatus: () => {
      throw own;
    },
  });
  assert.throws(
    () => tracker.seen(view('BRIDGING_IN'), '1'),
    (error: unknown) => error instanceof OnStatusFailure && error.error === own,
  );
});
