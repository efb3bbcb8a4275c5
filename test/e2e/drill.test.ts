import assert from 'node:assert/strict';
import { test } from 'node:test';
import { formatDrillReport, runDrill, shortPlan } from '../../devnet/drill.ts';

// The short form of `npm run drill`: two transfers (USDC → USDC, USDC → WETH); the worker is killed with SIGKILL
// after a send is signed and recorded but not broadcast, after a broadcast whose outcome is not recorded, and
// after a pool withdrawal before Temporal hears of it; then Temporal is restarted under a running worker.
test('crash drill: SIGKILLs inside sends and after a withdrawal, a Temporal restart; every transfer COMPLETES exactly, nothing paid twice', {
  timeout: 360_000,
}, async () => {
  const report = await runDrill({
    plan: shortPlan(),
    pointTimeoutMs: 60_000,
    finishTimeoutMs: 180_000,
    log: (line) => process.stderr.write(`[drill] ${line}\n`),
  });
  const text = formatDrillReport(report);
  process.stderr.write(`${text}\n`);
  assert.deepEqual(report.problems, [], text);
  assert.equal(report.passed, true);

  // Every transfer completed with exactly the quoted payout, paid once, deposited and withdrawn once.
  assert.equal(report.transfers.length, 2);
  for (const t of report.transfers) {
    assert.equal(t.status, 'COMPLETED', `${t.routeId}: ${t.error}`);
    assert.equal(t.received, t.quoted, `${t.routeId}: the recipient holds exactly the quote`);
    assert.equal(t.payouts, 1, `${t.routeId}: one payment to the recipient`);
    assert.equal(t.depositSends, 1, `${t.routeId}: the deposit address sent once`);
    assert.equal(t.depositSent, t.amount);
    assert.equal(t.poolDeposits, 1);
    assert.ok(t.withdrawalFound);
  }
  assert.deepEqual(report.pool, { deposits: 2, withdrawals: 2 });

  // The worker really died inside the sends (tx:signed, tx:broadcast), and Temporal was restarted under a live worker.
  const kills = Object.fromEntries(report.kills.map((k) => [k.point, k.kills]));
  assert.equal(kills['tx:signed'], 1, 'killed after a send was recorded, before its broadcast');
  assert.equal(kills['tx:broadcast'], 1, 'killed after a broadcast, before its outcome was recorded');
  assert.ok(
    report.workers.some((w) => w.end === 'hit' && w.interrupted.length > 0),
    'a kill interrupted an activity of a transfer',
  );
  assert.equal(report.restarts.length, 1);
  assert.equal(report.restarts[0]!.server, 'temporal');
  assert.equal(report.restarts[0]!.workerSurvived, true, 'the worker reconnected to the restarted Temporal by itself');
  assert.notEqual(report.restarts[0]!.apiReadySeconds, null, 'the API reconnected to the restarted Temporal');
});
