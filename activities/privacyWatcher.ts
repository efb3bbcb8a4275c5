import { sleep } from '@temporalio/activity';
import { and, eq, isNull, sql } from 'drizzle-orm';
import { poolNotes, transfers } from '../src/db/schema.ts';
import type { NoteReview } from '../src/providers/privacyPool.ts';
import { type ActivityDeps, requireNotifier } from './deps.ts';
import { poolNoteOf } from './pool.ts';

/** Notes looked at per pass (the oldest first); the rest wait for the next pass. */
const NOTES_PER_PASS = 5_000;

/**
 * The privacy gate of every shielded transfer at once, instead of each route asking the pool on a timer: one
 * pass reads the notes still in the pool (SHIELDED routes), asks the ASP about all of them in one read, counts
 * each one's anonymity set (src/privacy/anonymitySet.ts: the service's later same-bucket deposits), and signals
 * a route when what it waits for changes: its review, or whether its set reached its minimum. The ASP sees one
 * request per pass (PRIVACY_POLL_SECONDS) whatever the number of routes, and a route that waits an hour for its
 * review costs one signal, not a check every few seconds.
 */
export function privacyWatcherActivities(deps: ActivityDeps) {
  /** The notes still in the pool (SHIELDED routes, oldest first), with their route's minimum set and the later same-bucket deposits. */
  function shieldedNotes() {
    return deps.db
      .select({
        note: poolNotes,
        minAnonymitySet: transfers.minAnonymitySet,
        later: sql<number>`(select count(*) from pool_notes o
          where o.bucket = ${poolNotes.bucket} and o.asset = ${poolNotes.asset} and o.route_id <> ${poolNotes.routeId} and o.ragequit_at is null
            and o.block_number::numeric > ${poolNotes.blockNumber}::numeric)`.mapWith(Number),
      })
      .from(poolNotes)
      .innerJoin(transfers, eq(transfers.routeId, poolNotes.routeId))
      .where(and(isNull(poolNotes.withdrawnAt), isNull(poolNotes.ragequitAt), eq(transfers.status, 'SHIELDED')))
      .orderBy(poolNotes.depositedAt)
      .limit(NOTES_PER_PASS);
  }

  return {
    /**
     * Watches the pool's gates for `runForSeconds`, then returns (its workflow starts the next run). What a route
     * was last told is kept for the run only: a new run tells every route once more, which changes nothing.
     */
    async watchPrivacyGates(input: { runForSeconds: number }): Promise<{ routes: number }> {
      const stopAt = Date.now() + input.runForSeconds * 1000;
      const told = new Map<string, string>();
      for (;;) {
        const rows = await shieldedNotes();
        const reviews: NoteReview[] = rows.length > 0 ? await deps.pool.reviewMany(rows.map((r) => poolNoteOf(r.note))) : [];
        const current = new Set<string>();
        for (const [i, row] of rows.entries()) {
          const review = reviews[i] ?? 'pending';
          const anonymitySet = 1 + row.later;
          current.add(row.note.routeId);
          // A route starts out assuming `pending`: only a decision, and then its set's verdict, is news to it.
          if (review === 'pending') continue;
          const gate = `${review}:${anonymitySet >= (row.minAnonymitySet ?? 1)}`;
          if (told.get(row.note.routeId) === gate) continue;
          await requireNotifier(deps).privacyObserved(row.note.routeId, { review, anonymitySet });
          told.set(row.note.routeId, gate);
        }
        for (const routeId of told.keys()) if (!current.has(routeId)) told.delete(routeId);
        if (Date.now() >= stopAt) return { routes: rows.length };
        await sleep(Math.min((deps.privacyPollSeconds ?? 30) * 1000, Math.max(0, stopAt - Date.now())));
      }
    },
  };
}
