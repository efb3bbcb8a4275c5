import { sleep } from '@temporalio/activity';
import { sql } from 'drizzle-orm';
import type { Address } from 'viem';
import type { NoteReview, PoolNote } from '../src/providers/privacyPool.ts';
import type { ActivityDeps, WorkflowNotifier } from './deps.ts';

/** Notes looked at per pass (the oldest first); the rest wait for the next pass. */
const NOTES_PER_PASS = 5_000;

type ShieldedNote = {
  route_id: string;
  asset: string;
  label: string;
  commitment: string;
  value: string;
  tx_hash: string;
  block_number: string;
  deposited_at: Date | string;
  min_anonymity_set: number | null;
  later: string | number;
};

/**
 * The privacy gate of every shielded transfer at once, instead of each route asking the pool on a timer: one
 * pass reads the notes still in the pool (SHIELDED routes), asks the ASP about all of them in one read, counts
 * each one's anonymity set (src/privacy/anonymitySet.ts: the service's later same-bucket deposits), and signals
 * a route when what it waits for changes: its review, or whether its set reached its minimum. The ASP sees one
 * request per pass (PRIVACY_POLL_SECONDS) whatever the number of routes, and a route that waits an hour for its
 * review costs one signal, not a check every few seconds.
 */
export function privacyWatcherActivities(deps: ActivityDeps) {
  function notifier(): WorkflowNotifier {
    if (!deps.notifier) throw new Error('the privacy watcher needs a WorkflowNotifier (startTransferWorker provides one)');
    return deps.notifier;
  }

  async function shieldedNotes(): Promise<ShieldedNote[]> {
    return [
      ...(await deps.db.execute<ShieldedNote>(sql`
        select n.route_id, n.asset, n.label, n.commitment, n.value, n.tx_hash, n.block_number, n.deposited_at, t.min_anonymity_set,
          (select count(*) from pool_notes o
            where o.bucket = n.bucket and o.asset = n.asset and o.route_id <> n.route_id and o.ragequit_at is null
              and o.block_number::numeric > n.block_number::numeric) as later
        from pool_notes n join transfers t on t.route_id = n.route_id
        where n.withdrawn_at is null and n.ragequit_at is null and t.status = 'SHIELDED'
        order by n.deposited_at
        limit ${NOTES_PER_PASS}`)),
    ];
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
        const notes: PoolNote[] = rows.map((r) => ({
          asset: r.asset as Address,
          label: r.label,
          commitment: r.commitment,
          value: BigInt(r.value),
          txHash: r.tx_hash as `0x${string}`,
          blockNumber: BigInt(r.block_number),
          timestamp: Math.floor(new Date(r.deposited_at).getTime() / 1000),
        }));
        const reviews: NoteReview[] = notes.length > 0 ? await deps.pool.reviewMany(notes) : [];
        const current = new Set<string>();
        for (const [i, row] of rows.entries()) {
          const review = reviews[i] ?? 'pending';
          const anonymitySet = 1 + Number(row.later);
          current.add(row.route_id);
          // A route starts out assuming `pending`: only a decision, and then its set's verdict, is news to it.
          if (review === 'pending') continue;
          const gate = `${review}:${anonymitySet >= (row.min_anonymity_set ?? 1)}`;
          if (told.get(row.route_id) === gate) continue;
          await notifier().privacyObserved(row.route_id, { review, anonymitySet });
          told.set(row.route_id, gate);
        }
        for (const routeId of told.keys()) if (!current.has(routeId)) told.delete(routeId);
        if (Date.now() >= stopAt) return { routes: rows.length };
        await sleep(Math.min((deps.privacyPollSeconds ?? 30) * 1000, Math.max(0, stopAt - Date.now())));
      }
    },
  };
}
