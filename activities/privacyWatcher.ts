import { sleep } from '@temporalio/activity';
import { and, eq, isNull } from 'drizzle-orm';
import { poolNotes, transfers } from '../src/db/schema.ts';
import { notesOfRoutes, passClasses } from './anonymitySets.ts';
import { type ActivityDeps, requireNotifier } from './deps.ts';

/** Notes looked at per pass (the oldest first); the rest wait for the next pass. */
const NOTES_PER_PASS = 5_000;

/**
 * The privacy gate and the exit lottery of every shielded transfer at once, instead of each route asking the pool on
 * a timer: one pass reads the notes still in the pool (SHIELDED routes), asks the ASP about them in one read, opens the
 * gates that may open and draws the exits of the next exit epoch (activities/anonymitySets.ts passClasses), and
 * signals a route when what it waits for changes: its review, or the exit drawn for it. The ASP sees one request per
 * pass (PRIVACY_POLL_SECONDS) whatever the number of routes; a route costs a signal when its review is decided and one
 * when its exit is drawn.
 */
export function privacyWatcherActivities(deps: ActivityDeps) {
  /** The notes of SHIELDED routes still in the pool (oldest first). */
  async function shieldedNotes() {
    const rows = await deps.db
      .select({ routeId: poolNotes.routeId })
      .from(poolNotes)
      .innerJoin(transfers, eq(transfers.routeId, poolNotes.routeId))
      .where(and(isNull(poolNotes.withdrawnAt), isNull(poolNotes.ragequitAt), eq(transfers.status, 'SHIELDED')))
      .orderBy(poolNotes.depositedAt)
      .limit(NOTES_PER_PASS);
    return notesOfRoutes(
      deps.db,
      rows.map((r) => r.routeId),
    );
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
        const notes = await shieldedNotes();
        const observed = await passClasses(deps.db, deps.pool, notes, deps.privacyRules);
        for (const [routeId, observation] of observed) {
          // A route starts out assuming `pending`: only a decision, and then an exit drawn, is news to it.
          if (observation.review === 'pending') continue;
          const news = `${observation.review}:${observation.exit?.at ?? ''}`;
          if (told.get(routeId) === news) continue;
          await requireNotifier(deps).privacyObserved(routeId, observation);
          told.set(routeId, news);
        }
        for (const routeId of told.keys()) if (!observed.has(routeId)) told.delete(routeId);
        if (Date.now() >= stopAt) return { routes: notes.length };
        await sleep(Math.min((deps.privacyPollSeconds ?? 30) * 1000, Math.max(0, stopAt - Date.now())));
      }
    },
  };
}
