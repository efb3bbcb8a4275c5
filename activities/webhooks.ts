import { Context } from '@temporalio/activity';
import { and, eq, isNotNull, isNull, lt, sql } from 'drizzle-orm';
import { apiKeys, transferStatuses, transfers, webhookDeliveries } from '../src/db/schema.ts';
import { fundedAt, type PublicViewSettings, publicClockOf, publicEndShownAt, publicProgressShownAt } from '../src/transfers/publicView.ts';
import { postWebhook } from '../src/webhooks/post.ts';
import { deliverySigningSecrets } from '../src/webhooks/signingSecrets.ts';
import { signWebhook } from '../src/webhooks/signature.ts';
import { HELD_UNTIL_END, type WebhookSettings, type WebhookStarter } from '../src/webhooks/settings.ts';
import type { StatusProjection } from '../src/domain/projection.ts';
import { failure } from '../src/failures.ts';
import type { ActivityDeps } from './deps.ts';
import { isTerminalStatus } from '../src/domain/status.ts';
import { transferOf } from '../src/transfers/transferStore.ts';

/** The body of a delivery: thin on purpose (no amounts, addresses or hashes); the client GETs the rest with its statusToken. */
export interface WebhookEvent {
  id: string;
  type: 'transfer.status';
  routeId: string;
  status: string;
  occurredAt: string;
}

export function webhookEventId(routeId: string, seq: number): string {
  return `${routeId}:${seq}`;
}

/**
 * Records the delivery of a status written to the projection and starts its workflow, when the route has a
 * webhook URL. Idempotent: the row is inserted once (ON CONFLICT DO NOTHING) and the workflow id is the event
 * id, so a retried projection never sends twice, and a crash between the insert and the start is healed by the
 * retry (the row is still pending, the start is repeated). A delivery that already ended is not started again.
 *
 * With the public view's clock (`webhooks.publicView`, always in the worker), a pool-phase status (HELD_UNTIL_END) is
 * recorded and held; the route's end releases it and the end's own delivery together, to go out when the public view
 * shows the end (releaseWithEnd). `BRIDGING_IN` goes out when the public view shows it (the route's own delay after its
 * funding): at once, it would date the funding, so name the deposit among the few of its moment. Without a starter (deps given by a test that writes statuses itself) nothing is
 * enqueued. In production every writeStatus runs in an activity of startTransferWorker, which always adds one.
 */
export async function enqueueWebhook(
  deps: Pick<ActivityDeps, 'db' | 'webhookStarter' | 'webhooks'>,
  input: Pick<StatusProjection, 'routeId' | 'seq' | 'status'>,
): Promise<void> {
  const starter = deps.webhookStarter;
  if (!starter) return;
  const clock = deps.webhooks?.publicView;
  const held = !!clock && (HELD_UNTIL_END.has(input.status) || isTerminalStatus(input.status));
  const eventId = webhookEventId(input.routeId, input.seq);
  const shownAt = clock && input.status === 'BRIDGING_IN' ? await progressShownAt(deps.db, input.routeId, clock) : null;
  // One statement: insert the row if the route has a URL, and read the row's state either way.
  const rows = await deps.db.execute<{ state: string }>(sql`
    with inserted as (
      insert into ${webhookDeliveries} (event_id, route_id, status, status_seq, deliver_after)
      select ${eventId}, ${transfers.routeId}, ${input.status}, ${input.seq}, ${held ? sql`null::timestamptz` : shownAt ? sql`${shownAt.toISOString()}::timestamptz` : sql`now()`} from ${transfers}
      where ${transfers.routeId} = ${input.routeId} and ${transfers.webhookUrl} is not null
      on conflict do nothing
      returning state
    )
    select state from inserted
    union all
    select state from ${webhookDeliveries} where event_id = ${eventId}`);
  if (rows.length === 0) return;
  const starts =
    clock && isTerminalStatus(input.status)
      ? await releaseWithEnd(deps.db, input, clock)
      : !held && rows[0]?.state === 'pending'
        ? [{ eventId, deliverAfter: shownAt }]
        : [];
  try {
    for (const start of starts) await starter.start(start.eventId, start.deliverAfter ?? undefined);
  } catch (error) {
    // Not the calling money step's failure: the delivery is recorded as pending, and the worker's sweep
    // (startStalledWebhooks) starts it once Temporal answers again. Failing here would spend the step's attempts.
    warnInActivity('webhook delivery not started yet; the sweep will start it', { eventId, error: String(error) });
  }
}

/** When the route's public view first shows `BRIDGING_IN` (src/transfers/publicView.ts), from its recorded funding. */
async function progressShownAt(db: ActivityDeps['db'], routeId: string, clock: PublicViewSettings): Promise<Date | null> {
  const history = await db
    .select({ status: transferStatuses.status, reachedAt: transferStatuses.reachedAt })
    .from(transferStatuses)
    .where(eq(transferStatuses.routeId, routeId));
  const funded = fundedAt(history);
  const route = await transferOf(db, routeId);
  if (funded === null || !route) return null;
  return new Date(publicProgressShownAt(funded, publicClockOf(route, clock)));
}

/**
 * The route ended: its held deliveries and the end's own get `deliver_after` = the moment its public view shows the end
 * (src/transfers/publicView.ts: the end's recorded time and the route's own delay, the hold after its funding, the next
 * epoch start), once, and are
 * returned to be started. A retried end finds the moment set and starts what is still pending again (a started one is
 * refused by its id).
 */
async function releaseWithEnd(
  db: ActivityDeps['db'],
  end: Pick<StatusProjection, 'routeId' | 'seq'>,
  clock: PublicViewSettings,
): Promise<Array<{ eventId: string; deliverAfter: Date | null }>> {
  const history = await db
    .select({ status: transferStatuses.status, statusSeq: transferStatuses.statusSeq, reachedAt: transferStatuses.reachedAt })
    .from(transferStatuses)
    .where(eq(transferStatuses.routeId, end.routeId));
  const ended = history.find((h) => h.statusSeq === end.seq);
  const route = await transferOf(db, end.routeId);
  if (!ended || !route) return [];
  const shownAt = publicEndShownAt(ended.reachedAt.getTime(), {
    ...publicClockOf(route, clock),
    fundedAt: fundedAt(history),
  });
  await db
    .update(webhookDeliveries)
    .set({ deliverAfter: new Date(shownAt) })
    .where(and(eq(webhookDeliveries.routeId, end.routeId), eq(webhookDeliveries.state, 'pending'), isNull(webhookDeliveries.deliverAfter)));
  return db
    .select({ eventId: webhookDeliveries.eventId, deliverAfter: webhookDeliveries.deliverAfter })
    .from(webhookDeliveries)
    .where(and(eq(webhookDeliveries.routeId, end.routeId), eq(webhookDeliveries.state, 'pending'), isNotNull(webhookDeliveries.deliverAfter)))
    .orderBy(webhookDeliveries.statusSeq);
}

/**
 * Starts the delivery workflows of deliveries still pending with no attempt `stalledAfterSeconds` after they could go
 * out: those whose start failed in enqueueWebhook (Temporal unreachable). Held ones (no `deliver_after` yet) wait for
 * their route's end. One whose workflow exists is refused by its workflow id and left alone. Returns how many starts
 * were asked.
 */
export async function startStalledWebhooks(
  deps: Pick<ActivityDeps, 'db'> & { webhookStarter: WebhookStarter },
  opts: { stalledAfterSeconds: number; limit?: number },
): Promise<number> {
  const stalled = await deps.db
    .select({ eventId: webhookDeliveries.eventId, deliverAfter: webhookDeliveries.deliverAfter })
    .from(webhookDeliveries)
    .where(
      and(
        // Literals, not parameters: the condition of the partial index webhook_deliveries_unstarted_idx.
        sql`${webhookDeliveries.state} = 'pending' and ${webhookDeliveries.attempts} = 0`,
        lt(webhookDeliveries.deliverAfter, sql`now() - make_interval(secs => ${opts.stalledAfterSeconds})`),
      ),
    )
    .orderBy(webhookDeliveries.deliverAfter)
    .limit(opts.limit ?? 100);
  for (const { eventId, deliverAfter } of stalled) await deps.webhookStarter.start(eventId, deliverAfter ?? undefined);
  return stalled.length;
}

/** A warning in the activity's log; silent outside an activity (a test calling writeStatus itself). */
function warnInActivity(message: string, fields: Record<string, unknown>): void {
  try {
    Context.current().log.warn(message, fields);
  } catch {
    // no activity context
  }
}

/** The webhook activities (workflows/webhooks.ts). */
export function webhookActivities(deps: ActivityDeps) {
  return {
    /**
     * One delivery attempt of an event: reads the route's URL from Postgres (it never enters Temporal history),
     * POSTs the signed event and records the attempt. 2xx: delivered. 4xx other than 408 and 429, or a refused
     * target: failed for good (non-retryable). Anything else: thrown for Temporal to retry.
     */
    async deliverWebhook(input: { eventId: string }): Promise<{ status: number }> {
      const settings = requireWebhookSettings(deps);
      const [row] = await deps.db
        .select({
          routeId: webhookDeliveries.routeId,
          status: webhookDeliveries.status,
          state: webhookDeliveries.state,
          createdAt: webhookDeliveries.createdAt,
          lastResponseStatus: webhookDeliveries.lastResponseStatus,
          url: transfers.webhookUrl,
          partnerId: apiKeys.id,
          secretGeneration: apiKeys.webhookSecretGeneration,
          previousValidUntil: apiKeys.webhookPreviousValidUntil,
        })
        .from(webhookDeliveries)
        .leftJoin(transfers, eq(transfers.routeId, webhookDeliveries.routeId))
        .leftJoin(apiKeys, eq(apiKeys.id, transfers.partnerId))
        .where(eq(webhookDeliveries.eventId, input.eventId));
      if (!row) throw failure('WebhookUnknown', `no webhook delivery ${input.eventId}`);
      if (row.state === 'delivered') return { status: row.lastResponseStatus ?? 200 };
      if (!row.url) {
        await recordAttempt(deps, input.eventId, { status: null, error: 'the route has no webhook URL' });
        throw failure('WebhookRefused', 'the route has no webhook URL');
      }
      const event: WebhookEvent = {
        id: input.eventId,
        type: 'transfer.status',
        routeId: row.routeId,
        status: row.status,
        occurredAt: row.createdAt.toISOString(),
      };
      const body = JSON.stringify(event);
      // A partner's transfer is signed with that partner's secret, so no other partner can forge its deliveries.
      const partner =
        row.partnerId === null || row.secretGeneration === null
          ? null
          : { partnerId: row.partnerId, generation: row.secretGeneration, previousValidUntil: row.previousValidUntil };
      const headers = signWebhook(deliverySigningSecrets(settings.signingSecret, partner, new Date()), input.eventId, body);
      const result = await postWebhook(row.url, { ...headers }, body, {
        timeoutMs: settings.requestTimeoutMs,
        allowPrivateTargets: settings.allowPrivateTargets,
      });
      if (result.kind === 'refused') {
        await recordAttempt(deps, input.eventId, { status: null, error: result.error });
        throw failure('WebhookRefused', result.error);
      }
      if (result.kind === 'unanswered') {
        await recordAttempt(deps, input.eventId, { status: null, error: result.error });
        throw failure('WebhookUnanswered', result.error);
      }
      const { status } = result;
      if (status >= 200 && status < 300) {
        await recordAttempt(deps, input.eventId, { status, error: null, delivered: true });
        return { status };
      }
      const error = `the receiver answered ${status}`;
      await recordAttempt(deps, input.eventId, { status, error });
      if (status >= 400 && status < 500 && status !== 408 && status !== 429) throw failure('WebhookRejected', error);
      throw failure('WebhookNotAccepted', error);
    },

    /** Marks a delivery failed for good (its retries ran out, or the receiver refused it); a delivered one stays delivered. */
    async markWebhookFailed(input: { eventId: string }): Promise<void> {
      await deps.db
        .update(webhookDeliveries)
        .set({ state: 'failed' })
        .where(and(eq(webhookDeliveries.eventId, input.eventId), eq(webhookDeliveries.state, 'pending')));
    },
  };
}

async function recordAttempt(
  deps: Pick<ActivityDeps, 'db'>,
  eventId: string,
  attempt: { status: number | null; error: string | null; delivered?: boolean },
): Promise<void> {
  await deps.db
    .update(webhookDeliveries)
    .set({
      attempts: sql`${webhookDeliveries.attempts} + 1`,
      lastAttemptAt: sql`now()`,
      lastResponseStatus: attempt.status,
      lastError: attempt.error,
      ...(attempt.delivered && { state: 'delivered', deliveredAt: sql`now()` }),
    })
    .where(eq(webhookDeliveries.eventId, eventId));
}

function requireWebhookSettings(deps: ActivityDeps): WebhookSettings {
  if (!deps.webhooks) throw failure('WebhookNotConfigured', 'the worker has no webhook settings: set WEBHOOK_SIGNING_SECRET');
  return deps.webhooks;
}
