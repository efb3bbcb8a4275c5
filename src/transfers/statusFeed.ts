import { sql } from 'drizzle-orm';
import type { Database } from '../db/client.ts';
import { transfers } from '../db/schema.ts';
import { isTerminalStatus } from '../domain/status.ts';

/**
 * Status changes of routes, for the API's server-sent events (GET /api/private-route/{routeId}/events).
 *
 * Every status change is announced: the worker's projection (activities/projection.ts `writeStatus`) sends a
 * Postgres notification on TRANSFER_STATUS_CHANNEL with the route, its statusSeq and the status it moved to, and
 * the feed listens on one connection per API process. A status that lasted a few milliseconds is therefore still
 * seen. Polling is the safety net: one query per interval for all watched routes together (`route_id = any(...)`),
 * only while someone is subscribed; it gives a new subscriber its current status and catches up after a lost
 * listener connection (then only the latest status of each route is seen).
 *
 * A subscriber starts with the current status if it is newer than `afterSeq` (an SSE client reconnecting with
 * Last-Event-ID gets only what it missed).
 */
export interface StatusChange {
  status: string;
  statusSeq: number;
}

export interface StatusFeed {
  /**
   * Every status with statusSeq > afterSeq, as seen by the polls. Ends after COMPLETED or FAILED (also when the
   * route is already there: a client that saw it gets nothing more), when the route does not exist, when `signal`
   * aborts, or when the feed closes. A failed poll is thrown to every current subscriber (the SSE client reconnects).
   */
  changes(routeId: string, afterSeq: number, signal: AbortSignal): AsyncIterable<StatusChange>;
  /** Ends every subscription and stops the poll loop. */
  close(): Promise<void>;
}

export interface StatusFeedOptions {
  /** Time between two polls (default 1000 ms; 5000 ms while notifications are listened to). */
  pollIntervalMs?: number;
  /** Listen to the projection's notifications (default true). Off: polling alone, and a brief status may be missed. */
  listen?: boolean;
}

/** The Postgres channel writeStatus notifies on; the payload is a StatusNotification as JSON. */
export const TRANSFER_STATUS_CHANNEL = 'transfer_status';

export interface StatusNotification {
  routeId: string;
  statusSeq: number;
  status: string;
}

interface Subscriber {
  routeId: string;
  lastSeq: number;
  queue: StatusChange[];
  ended: boolean;
  error: unknown;
  wake: (() => void) | null;
}

export function createStatusFeed(db: Database, options: StatusFeedOptions = {}): StatusFeed {
  const listening = options.listen ?? true;
  const pollIntervalMs = options.pollIntervalMs ?? (listening ? 5000 : 1000);
  const watched = new Map<string, Set<Subscriber>>();
  let closed = false;
  let timer: { handle: NodeJS.Timeout; at: number } | null = null;
  let polling: Promise<void> | null = null;
  let lastPollAt = Number.NEGATIVE_INFINITY;
  /** Someone subscribed after the last poll started: the next poll comes early (half an interval after the last). */
  let newcomers = false;

  const notify = (subscriber: Subscriber) => {
    const wake = subscriber.wake;
    subscriber.wake = null;
    wake?.();
  };

  /** Polls at `at` (or now), unless a poll is already due earlier. A timer, not a loop: nothing runs without subscribers. */
  function schedule(at: number): void {
    if (closed || polling || watched.size === 0) return;
    if (timer && timer.at <= at) return;
    if (timer) clearTimeout(timer.handle);
    timer = { handle: setTimeout(startPoll, Math.max(0, at - Date.now())), at };
  }

  function nextPollAt(): number {
    return lastPollAt + (newcomers ? pollIntervalMs / 2 : pollIntervalMs);
  }

  function startPoll(): void {
    timer = null;
    if (closed || watched.size === 0) return;
    polling = poll().finally(() => {
      polling = null;
      schedule(nextPollAt());
    });
  }

  async function poll(): Promise<void> {
    newcomers = false;
    lastPollAt = Date.now();
    const routeIds = [...watched.keys()];
    let rows: { routeId: string; status: string; statusSeq: number }[];
    try {
      rows = await db
        .select({ routeId: transfers.routeId, status: transfers.status, statusSeq: transfers.statusSeq })
        .from(transfers)
        .where(sql`${transfers.routeId} = any(${sql.param(routeIds)}::text[])`);
    } catch (error) {
      for (const routeId of routeIds) {
        for (const subscriber of watched.get(routeId) ?? []) {
          subscriber.error = error;
          notify(subscriber);
        }
      }
      return;
    }
    const found = new Map(rows.map((row) => [row.routeId, row]));
    for (const routeId of routeIds) {
      const row = found.get(routeId);
      for (const subscriber of watched.get(routeId) ?? []) {
        if (!row) subscriber.ended = true;
        else if (row.statusSeq > subscriber.lastSeq) {
          subscriber.lastSeq = row.statusSeq;
          subscriber.queue.push({ status: row.status, statusSeq: row.statusSeq });
        } else if (isTerminalStatus(row.status)) subscriber.ended = true;
        notify(subscriber);
      }
    }
  }

  /** A status the projection announced: queued for the route's subscribers that have not seen it. */
  function announced(payload: string): void {
    let change: StatusNotification;
    try {
      change = JSON.parse(payload) as StatusNotification;
    } catch {
      return;
    }
    for (const subscriber of watched.get(change.routeId) ?? []) {
      if (change.statusSeq <= subscriber.lastSeq) continue;
      subscriber.lastSeq = change.statusSeq;
      subscriber.queue.push({ status: change.status, statusSeq: change.statusSeq });
      notify(subscriber);
    }
  }

  // postgres.js keeps the listening connection and reconnects it by itself; the polls cover the gap.
  const listener = listening ? db.$client.listen(TRANSFER_STATUS_CHANNEL, announced).catch(() => null) : Promise.resolve(null);

  function subscribe(subscriber: Subscriber): void {
    let subscribers = watched.get(subscriber.routeId);
    if (!subscribers) watched.set(subscriber.routeId, (subscribers = new Set()));
    subscribers.add(subscriber);
    // Subscribers arriving together (the same tick, or the same half interval) share their first poll.
    newcomers = true;
    schedule(nextPollAt());
  }

  function unsubscribe(subscriber: Subscriber): void {
    const subscribers = watched.get(subscriber.routeId);
    subscribers?.delete(subscriber);
    if (subscribers?.size === 0) watched.delete(subscriber.routeId);
    if (watched.size === 0 && timer) {
      clearTimeout(timer.handle);
      timer = null;
    }
  }

  async function* changes(routeId: string, afterSeq: number, signal: AbortSignal): AsyncGenerator<StatusChange> {
    if (closed || signal.aborted) return;
    const subscriber: Subscriber = { routeId, lastSeq: afterSeq, queue: [], ended: false, error: undefined, wake: null };
    const onAbort = () => notify(subscriber);
    signal.addEventListener('abort', onAbort, { once: true });
    subscribe(subscriber);
    try {
      while (!signal.aborted && !closed) {
        const change = subscriber.queue.shift();
        if (change) {
          yield change;
          if (isTerminalStatus(change.status)) return;
          continue;
        }
        if (subscriber.error !== undefined) throw subscriber.error;
        if (subscriber.ended) return;
        await new Promise<void>((resolve) => {
          subscriber.wake = resolve;
        });
      }
    } finally {
      signal.removeEventListener('abort', onAbort);
      unsubscribe(subscriber);
    }
  }

  return {
    changes,
    async close() {
      closed = true;
      await (await listener)?.unlisten().catch(() => {});
      if (timer) clearTimeout(timer.handle);
      timer = null;
      for (const subscribers of watched.values()) for (const subscriber of subscribers) notify(subscriber);
      await polling;
    },
  };
}
