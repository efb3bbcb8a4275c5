import { sleep } from '@temporalio/activity';
import { and, eq, isNull } from 'drizzle-orm';
import { poolNotes, transfers } from '../src/db/schema.ts';
import { notesOfRoutes, setsNow } from './anonymitySets.ts';
import { type ActivityDeps, requireNotifier } from './deps.ts';

/** Notes looked at per pass (the oldest first); the rest wait for the next pass. */
const NOTES_PER_PASS = 5_000;

/**
 * The privacy gate of every shielded transfer at once, instead of each route asking the pool on a timer: one
 * pass reads the notes still in the pool (SHIELDED routes), asks the ASP about them and their class's peers in one
 * read, counts each one's anonymity set (src/privacy/anonymitySet.ts), and signals a route when what it waits for
 * changes: its review, or whether its set reached its minimum. The ASP sees one request per pass
 * (PRIVACY_POLL_SECONDS) whatever the number of routes, and a route that waits an hour for its review costs one
 * signal, not a check every few seconds.
 */
export function privacyWatcherActivities(deps: ActivityDeps) {
  /** The notes of SHIELDED routes still in the pool (oldest first), with their route's minimum set. */
  async function shieldedNotes() {
    const rows = await deps.db
      .select({ routeId: poolNotes.routeId, minAnonymitySet: transfers.minAnonymitySet })
      .from(poolNotes)
      .innerJoin(transfers, eq(transfers.routeId, poolNotes.routeId))
      .where(and(isNull(poolNotes.withdrawnAt), isNull(poolNotes.ragequitAt), eq(transfers.status, 'SHIELDED')))
      .orderBy(poolNotes.depositedAt)
      .limit(NOTES_PER_PASS);
    const minimums = new Map(rows.map((r) => [r.routeId, r.minAnonymitySet ?? 1]));
    const notes = await notesOfRoutes(
      deps.db,
      rows.map((r) => r.routeId),
    );
    return { notes, minimums };
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
        const { notes, minimums } = await shieldedNotes();
        const { reviews, sizes } = await setsNow(deps.db, deps.pool, notes, deps.exitRules);
        for (const note of notes) {
          const review = reviews.get(note.routeId) ?? 'pending';
          const anonymitySet = sizes.get(note.routeId) ?? 1;
          // A route starts out assuming `pending`: only a decision, and then its set's verdict, is news to it.
          if (review === 'pending') continue;
          const gate = `${review}:${anonymitySet >= (minimums.get(note.routeId) ?? 1)}`;
          if (told.get(note.routeId) === gate) continue;
          await requireNotifier(deps).privacyObserved(note.routeId, { review, anonymitySet });
          told.set(note.routeId, gate);
        }
        for (const routeId of told.keys()) if (!minimums.has(routeId)) told.delete(routeId);
        if (Date.now() >= stopAt) return { routes: notes.length };
        await sleep(Math.min((deps.privacyPollSeconds ?? 30) * 1000, Math.max(0, stopAt - Date.now())));
      }
    },
  };
}
