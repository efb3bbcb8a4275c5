/**
 * Where transfers wait, read from Postgres at scrape time, on the worker's /metrics (deploy/prometheus/alerts.yml
 * alerts on them; docs/observability.md, "Alerts"). One read of the tables per scrape window, shared by the gauges:
 *
 * - `private_route_deposit_watch_lag_seconds{chain_id}`: since the deposit watcher last moved its cursor on a chain
 *   (it moves with every range of blocks it reads, so a chain that makes blocks moves it within seconds);
 * - `private_route_withdrawals_due`: notes whose exit moment has come and that are not withdrawn yet (waiting for a
 *   proof slot, being proved, or relayed): the proof queue;
 * - `private_route_asp_approval_oldest_wait_seconds`: the longest a note in the pool has waited for the ASP's approval;
 * - `private_route_webhook_deliveries_retrying` / `_failed_24h`: deliveries whose last attempt failed and that are
 *   still retried, and those that ran out of retries in the last 24 hours.
 */
import { sql } from 'drizzle-orm';
import { Gauge, type Registry } from 'prom-client';
import type { Database } from '../db/client.ts';
import { depositWatchCursors, poolNotes, webhookDeliveries } from '../db/schema.ts';
import type { Logger } from '../logger.ts';
import { createTtlCache } from '../providers/ttlCache.ts';

interface Snapshot {
  watchLag: Array<{ chainId: number; seconds: number }>;
  withdrawalsDue: number;
  aspOldestWaitSeconds: number;
  webhooksRetrying: number;
  webhooksFailed24h: number;
}

const SNAPSHOT_TTL_MS = 15_000;

export function registerPipelineGauges(registry: Registry, deps: { db: Database; logger?: Logger }): void {
  const cache = createTtlCache<Snapshot>({ ttlMs: SNAPSHOT_TTL_MS });
  const read = async (): Promise<Snapshot> => {
    const { db } = deps;
    const [cursors, [notes], [webhooks]] = await Promise.all([
      db
        .select({
          chainId: depositWatchCursors.chainId,
          seconds: sql<number>`greatest(0, extract(epoch from now() - ${depositWatchCursors.updatedAt}))`.mapWith(Number),
        })
        .from(depositWatchCursors),
      db
        .select({
          due: sql<number>`count(*) filter (where ${poolNotes.exitAt} <= now())`.mapWith(Number),
          oldestUnapproved:
            sql<number>`coalesce(extract(epoch from now() - min(${poolNotes.depositedAt}) filter (where ${poolNotes.approvedAt} is null)), 0)`.mapWith(Number),
        })
        .from(poolNotes)
        .where(sql`${poolNotes.withdrawnAt} is null and ${poolNotes.ragequitAt} is null`),
      db
        .select({
          retrying: sql<number>`count(*) filter (where ${webhookDeliveries.state} = 'pending' and ${webhookDeliveries.attempts} > 0)`.mapWith(Number),
          failed:
            sql<number>`count(*) filter (where ${webhookDeliveries.state} = 'failed' and ${webhookDeliveries.lastAttemptAt} > now() - interval '24 hours')`.mapWith(
              Number,
            ),
        })
        .from(webhookDeliveries)
        .where(sql`${webhookDeliveries.state} in ('pending', 'failed')`),
    ]);
    return {
      watchLag: cursors.map((c) => ({ chainId: Number(c.chainId), seconds: Math.max(0, c.seconds) })),
      withdrawalsDue: notes?.due ?? 0,
      aspOldestWaitSeconds: Math.max(0, notes?.oldestUnapproved ?? 0),
      webhooksRetrying: webhooks?.retrying ?? 0,
      webhooksFailed24h: webhooks?.failed ?? 0,
    };
  };
  const snapshot = () => cache.get('pipeline', read);

  const gauge = (name: string, help: string, set: (gauge: Gauge<string>, snapshot: Snapshot) => void, labelNames: string[] = []) =>
    new Gauge({
      name,
      help,
      labelNames,
      registers: [registry],
      async collect() {
        this.reset();
        try {
          set(this, await snapshot());
        } catch (error) {
          deps.logger?.warn('metrics: reading the pipeline tables failed', { error: String(error) });
        }
      },
    });

  gauge(
    'private_route_deposit_watch_lag_seconds',
    'Seconds since the deposit watcher last moved its cursor on a chain, by chain_id',
    (g, s) => {
      for (const row of s.watchLag) g.set({ chain_id: String(row.chainId) }, row.seconds);
    },
    ['chain_id'],
  );
  gauge('private_route_withdrawals_due', 'Pool notes whose exit moment has come and that are not withdrawn yet (the proof queue)', (g, s) =>
    g.set(s.withdrawalsDue),
  );
  gauge('private_route_asp_approval_oldest_wait_seconds', 'The longest a note in the pool has waited for the ASP approval (0: none waits)', (g, s) =>
    g.set(s.aspOldestWaitSeconds),
  );
  gauge('private_route_webhook_deliveries_retrying', 'Webhook deliveries whose last attempt failed and that are still retried', (g, s) =>
    g.set(s.webhooksRetrying),
  );
  gauge('private_route_webhook_deliveries_failed_24h', 'Webhook deliveries that ran out of retries in the last 24 hours', (g, s) => g.set(s.webhooksFailed24h));
}
