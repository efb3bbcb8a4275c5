/** The drill's report as text: what `npm run drill` prints and the drill test shows. */
import type { DrillReport } from './types.ts';

const median = (xs: number[]) => {
  if (xs.length === 0) return null;
  const sorted = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : Math.round(((sorted[mid - 1]! + sorted[mid]!) / 2) * 10) / 10;
};
const fmt = (n: number | null | undefined) => (n === null || n === undefined ? '-' : String(n));
const pad = (text: string | number, width: number) => String(text).padEnd(width);

/** The drill's figures as text: kills per point, each worker's life, restarts, the transfers' exactness, times. */
export function formatDrillReport(r: DrillReport): string {
  const mode = r.bridge === 'cctp' ? 'burn-and-mint (CCTP)' : 'deposit-address (Relay)';
  const hits = r.workers.filter((w) => w.end === 'hit').length;
  return [
    `Crash drill: ${r.transfers.length} transfers, ${mode}; ${hits} SIGKILLs at crash points, ${r.restarts.length} server restarts; ${r.seconds.total} s in all`,
    '',
    'Kills per crash point (kills / workers that ran with it; 0 = not hit within the point timeout)',
    ...r.kills.map((k) => `  ${pad(k.point, 26)} ${k.kills} / ${k.tries}`),
    '',
    ...workerLines(r),
    '',
    ...restartLines(r),
    ...transferLines(r),
    `Time: stack start ${r.seconds.stack} s, crash steps ${r.seconds.crashes} s, clean finish ${r.seconds.finish} s, total ${r.seconds.total} s`,
    r.passed
      ? 'PASSED: every transfer COMPLETED with exactly its quoted payout (CCTP: at least it, at most the burn), and no second payment on any chain'
      : `FAILED:\n${r.problems.map((p) => `  - ${p}`).join('\n')}`,
  ].join('\n');
}

function workerLines(r: DrillReport): string[] {
  const lines = [
    "Workers (life, boot: s from spawn to its end, to /readyz 200; lost: transfers' activities running in it when it died;",
    '         recovery: of the activities lost before its spawn, s from its spawn until the first completed, and until all did)',
    `  ${pad('#', 3)} ${pad('ran with', 22)} ${pad('end', 8)} ${pad('life', 6)} ${pad('boot', 5)} ${pad('lost', 36)} recovery`,
  ];
  for (const w of r.workers) {
    const counts = new Map<string, number>();
    for (const x of w.interrupted) counts.set(x.activityType, (counts.get(x.activityType) ?? 0) + 1);
    const lost = [...counts].map(([t, n]) => (n > 1 ? `${t}×${n}` : t)).join(', ') || '-';
    const rec = w.recovery;
    const recovery = !rec
      ? '-'
      : rec.completed === 0
        ? `0 of ${rec.outstanding} before its end`
        : `first ${rec.first} s, ${rec.all === null ? `${rec.completed} of ${rec.outstanding} before its end` : `all ${rec.outstanding} by ${rec.all} s`}`;
    lines.push(`  ${pad(w.index, 3)} ${pad(w.role, 22)} ${pad(w.end, 8)} ${pad(w.lifeSeconds, 6)} ${pad(fmt(w.bootSeconds), 5)} ${pad(lost, 36)} ${recovery}`);
  }
  const boots = r.workers.flatMap((w) => (w.bootSeconds === null ? [] : [w.bootSeconds]));
  const firsts = r.workers.flatMap((w) => (w.recovery?.first == null ? [] : [w.recovery.first]));
  const alls = r.workers.flatMap((w) => (w.recovery?.all == null ? [] : [w.recovery.all]));
  lines.push(
    `  boot median ${fmt(median(boots))} s (max ${fmt(boots.length ? Math.max(...boots) : null)}); after a restart, the first lost activity completed after median ${fmt(median(firsts))} s ` +
      `(max ${fmt(firsts.length ? Math.max(...firsts) : null)}), the last after median ${fmt(median(alls))} s (max ${fmt(alls.length ? Math.max(...alls) : null)})`,
  );
  lines.push(
    `  the most attempts one lost activity had used: ${r.attempts.most} (the drill's STEP_MAX_ATTEMPTS: ${r.attempts.stepMaxAttempts}; the service's default is 8)`,
  );
  return lines;
}

/** Followed by an empty line; none without restarts. */
function restartLines(r: DrillReport): string[] {
  if (r.restarts.length === 0) return [];
  return [
    'Server restarts (seconds after the server was back)',
    ...r.restarts.map(
      (x) =>
        `  ${pad(x.server, 9)} down ${x.downSeconds} s; API /readyz after ${fmt(x.apiReadySeconds)} s; worker /readyz after ${fmt(x.workerReadySeconds)} s; ` +
        `next progress after ${fmt(x.progressSeconds)} s; worker ${x.workerSurvived ? 'reconnected by itself' : 'DIED'}`,
    ),
    '',
  ];
}

/** Followed by an empty line; none without transfers. */
function transferLines(r: DrillReport): string[] {
  if (r.transfers.length === 0) return [];
  const lines = [
    'Transfers (payouts: token transfers to the recipient; sends: transfers out of the deposit address)',
    `  ${pad('routeId', 36)} ${pad('route', 24)} ${pad('status', 10)} ${pad('quoted = received', 40)} payouts sends pool-deposits withdrawal`,
  ];
  for (const t of r.transfers) {
    const exact = `${t.quoted} ${t.quoted === t.received ? '=' : t.exact || t.received < t.quoted ? '≠' : '<'} ${t.received}`;
    lines.push(
      `  ${pad(t.routeId, 36)} ${pad(t.route, 24)} ${pad(t.status, 10)} ${pad(exact, 40)} ${pad(t.payouts, 7)} ${pad(t.depositSends, 5)} ${pad(t.poolDeposits, 13)} ${t.withdrawalFound ? 'yes' : 'NO'}`,
    );
  }
  if (r.transfers.some((t) => !t.exact))
    lines.push("  (CCTP to another chain: quote < received ≤ burn is by design, Circle's unused fee buffer is minted to the recipient; docs/money.md)");
  lines.push(`  pool: ${r.pool.deposits} deposits and ${r.pool.withdrawals} withdrawals for ${r.transfers.length} transfers`);
  lines.push('');
  return lines;
}
