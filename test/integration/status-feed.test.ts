/**
 * The status feed behind the API's server-sent events (src/transfers/statusFeed.ts) over a real Postgres, with
 * statuses written by the worker's own projection write (activities/projection.ts `writeStatus`). Queries are
 * counted with postgres.js's `debug` hook: however many subscribers, one query per poll.
 */
import assert from 'node:assert/strict';
import { setMaxListeners } from 'node:events';
import { after, before, describe, test } from 'node:test';
import { sql } from 'drizzle-orm';
import { drizzle } from 'drizzle-orm/postgres-js';
import postgresJs from 'postgres';
import { writeStatus } from '../../activities/projection.ts';
import { connectDatabase, type Database, type DatabaseHandle } from '../../src/db/client.ts';
import * as schema from '../../src/db/schema.ts';
import { createStatusFeed, type StatusChange } from '../../src/transfers/statusFeed.ts';
import type { TransferStatus } from '../../src/domain/status.ts';
import { startTestPostgres, type TestPostgres, transferRow } from '../support/database.ts';

let postgres: TestPostgres;
let database: DatabaseHandle;
let nextIndex = 1;

const POLL_MS = 100;

before(async () => {
  postgres = await startTestPostgres('status-feed-test');
  database = connectDatabase(postgres.url);
  const [max] = await database.db.execute<{ max: string | null }>(sql`select max(account_index) as max from transfers`);
  nextIndex = Number(max?.max ?? 0) + 2_000_000;
});

after(async () => {
  await database?.close();
  await postgres?.stop();
});

/** A database handle that counts the feed's polls (selects of transfers' status by route id). */
function countingDatabase(): { db: Database; polls: () => number; close: () => Promise<void> } {
  let polls = 0;
  const client = postgresJs(postgres.url, {
    max: 2,
    onnotice: () => {},
    debug: (_connection, query) => {
      if (/from "transfers" where "transfers"\."route_id" = any\(/.test(query)) polls++;
    },
  });
  return { db: drizzle(client, { schema }), polls: () => polls, close: () => client.end({ timeout: 5 }) };
}

async function newRoute(): Promise<string> {
  const row = transferRow(nextIndex++);
  await database.db.insert(schema.transfers).values(row);
  return row.routeId;
}

const write = (routeId: string, seq: number, status: TransferStatus) => writeStatus({ db: database.db }, { routeId, seq, status });
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function collect(iterable: AsyncIterable<StatusChange>, onChange: (change: StatusChange) => Promise<void> = async () => {}): Promise<StatusChange[]> {
  const seen: StatusChange[] = [];
  for await (const change of iterable) {
    seen.push(change);
    await onChange(change);
  }
  return seen;
}

const LIFE: TransferStatus[] = ['BRIDGING_IN', 'RECEIVED_ON_HUB', 'SHIELDED', 'UNSHIELD_SENT', 'BRIDGING_OUT', 'COMPLETED'];

describe('status feed: every status change of a route, one shared poll', { timeout: 120_000 }, () => {
  test("a route's life, status by status, ends at COMPLETED; a late subscriber starts from the current status", { timeout: 30_000 }, async () => {
    const feed = createStatusFeed(database.db, { pollIntervalMs: POLL_MS });
    const routeId = await newRoute();
    let seq = 0;
    // The next status is written only once the previous one was yielded: no change is overwritten between polls.
    const seen = collect(feed.changes(routeId, 0, new AbortController().signal), async () => {
      const status = LIFE[seq];
      if (status) await write(routeId, ++seq, status);
    });
    await sleep(3 * POLL_MS);
    await write(routeId, ++seq, LIFE[0]!);
    assert.deepEqual(
      await seen,
      LIFE.map((status, i) => ({ status, statusSeq: i + 1 })),
      'AWAITING_DEPOSIT (seq 0) is not newer than afterSeq 0',
    );

    // Reconnecting with Last-Event-ID 3: the current status (COMPLETED, seq 6), then the end.
    assert.deepEqual(await collect(feed.changes(routeId, 3, new AbortController().signal)), [{ status: 'COMPLETED', statusSeq: 6 }]);
    // A client that saw COMPLETED: nothing more, and the stream ends instead of hanging.
    assert.deepEqual(await collect(feed.changes(routeId, 6, new AbortController().signal)), []);
    await feed.close();
  });

  test('a status that lasts a moment is still yielded: the projection notifies, the feed listens', { timeout: 30_000 }, async () => {
    // Polls every minute: whatever arrives in time arrived by notification.
    const feed = createStatusFeed(database.db, { pollIntervalMs: 60_000 });
    const routeId = await newRoute();
    const seen = collect(feed.changes(routeId, 0, new AbortController().signal));
    await sleep(500); // the listener's LISTEN is in place
    // The whole life written back to back, far faster than any poll.
    for (const [i, status] of LIFE.entries()) await write(routeId, i + 1, status);
    assert.deepEqual(
      await seen,
      LIFE.map((status, i) => ({ status, statusSeq: i + 1 })),
    );
    await feed.close();
  });

  test('without notifications (listen: false) the polls alone yield the latest status', { timeout: 30_000 }, async () => {
    const feed = createStatusFeed(database.db, { pollIntervalMs: POLL_MS, listen: false });
    const routeId = await newRoute();
    const seen = collect(feed.changes(routeId, 0, new AbortController().signal));
    await sleep(2 * POLL_MS);
    for (const [i, status] of LIFE.entries()) await write(routeId, i + 1, status);
    const changes = await seen;
    assert.deepEqual(changes.at(-1), { status: 'COMPLETED', statusSeq: 6 });
    await feed.close();
  });

  test('FAILED ends the feed; an older write (lower seq) is never yielded; an unknown route ends at once', { timeout: 30_000 }, async () => {
    const feed = createStatusFeed(database.db, { pollIntervalMs: POLL_MS });
    const routeId = await newRoute();
    await write(routeId, 2, 'BRIDGING_IN');
    const seen = collect(feed.changes(routeId, 0, new AbortController().signal), async (change) => {
      if (change.statusSeq === 2) {
        await write(routeId, 1, 'AWAITING_DEPOSIT');
        await sleep(3 * POLL_MS);
        await writeStatus({ db: database.db }, { routeId, seq: 3, status: 'FAILED', error: 'no deposit before the deadline' });
      }
    });
    assert.deepEqual(await seen, [
      { status: 'BRIDGING_IN', statusSeq: 2 },
      { status: 'FAILED', statusSeq: 3 },
    ]);
    assert.deepEqual(await collect(feed.changes('rt_ffffffffffffffffffffffffffffffff', 0, new AbortController().signal)), []);
    await feed.close();
  });

  test('abort ends a waiting subscriber promptly, and with no subscriber left the polls stop', { timeout: 30_000 }, async () => {
    const counting = countingDatabase();
    const feed = createStatusFeed(counting.db, { pollIntervalMs: POLL_MS, listen: false });
    try {
      const routeId = await newRoute();
      await write(routeId, 1, 'BRIDGING_IN');
      const controller = new AbortController();
      const seen = collect(feed.changes(routeId, 0, controller.signal));
      await sleep(3 * POLL_MS);
      assert.ok(counting.polls() >= 2, `polled while subscribed (${counting.polls()})`);
      const abortedAt = Date.now();
      controller.abort();
      assert.deepEqual(await seen, [{ status: 'BRIDGING_IN', statusSeq: 1 }]);
      assert.ok(Date.now() - abortedAt < POLL_MS, 'the subscriber ends without waiting for a poll');

      const pollsAfterAbort = counting.polls();
      await sleep(5 * POLL_MS);
      assert.ok(counting.polls() <= pollsAfterAbort + 1, `no polls without subscribers (${counting.polls() - pollsAfterAbort} after the abort)`);

      // An already aborted signal yields nothing; breaking out of the loop also unsubscribes.
      assert.deepEqual(await collect(feed.changes(routeId, 0, AbortSignal.abort())), []);
      for await (const change of feed.changes(routeId, 0, new AbortController().signal)) {
        assert.equal(change.status, 'BRIDGING_IN');
        break;
      }
      const pollsAfterBreak = counting.polls();
      await sleep(5 * POLL_MS);
      assert.ok(counting.polls() <= pollsAfterBreak + 1, 'no polls after the last subscriber broke off');
    } finally {
      await feed.close();
      await counting.close();
    }
  });

  test('200 subscribers on 100 routes: one query per poll interval, and each of them sees its own route', { timeout: 60_000 }, async () => {
    const counting = countingDatabase();
    const feed = createStatusFeed(counting.db, { pollIntervalMs: POLL_MS, listen: false });
    try {
      const routes = await Promise.all(Array.from({ length: 100 }, () => newRoute()));
      const controller = new AbortController();
      setMaxListeners(0, controller.signal);
      const subscribers = [...routes, ...routes].map((routeId) => collect(feed.changes(routeId, 0, controller.signal)));
      const startedAt = Date.now();
      await sleep(2 * POLL_MS);
      await Promise.all(routes.map((routeId, i) => write(routeId, 1, i % 2 === 0 ? 'BRIDGING_IN' : 'RECEIVED_ON_HUB')));
      await sleep(10 * POLL_MS);
      const polls = counting.polls();
      const intervals = (Date.now() - startedAt) / POLL_MS;
      assert.ok(polls >= 5, `it polls (${polls} polls)`);
      assert.ok(polls <= intervals + 2, `${polls} queries in ${intervals.toFixed(1)} intervals for 200 subscribers`);

      controller.abort();
      const seen = await Promise.all(subscribers);
      seen.forEach((changes, i) => {
        const route = i % 100;
        assert.deepEqual(changes, [{ status: route % 2 === 0 ? 'BRIDGING_IN' : 'RECEIVED_ON_HUB', statusSeq: 1 }], `subscriber ${i}`);
      });
    } finally {
      await feed.close();
      await counting.close();
    }
  });

  test('subscribers joining one by one still cost at most two queries per interval', { timeout: 60_000 }, async () => {
    const counting = countingDatabase();
    const feed = createStatusFeed(counting.db, { pollIntervalMs: POLL_MS, listen: false });
    try {
      const routeId = await newRoute();
      const controller = new AbortController();
      setMaxListeners(0, controller.signal);
      const subscribers: Promise<StatusChange[]>[] = [];
      const startedAt = Date.now();
      for (let i = 0; i < 100; i++) {
        subscribers.push(collect(feed.changes(routeId, 0, controller.signal)));
        await sleep(POLL_MS / 10);
      }
      const intervals = (Date.now() - startedAt) / POLL_MS;
      assert.ok(counting.polls() <= 2 * intervals + 2, `${counting.polls()} queries in ${intervals.toFixed(1)} intervals for 100 joining subscribers`);
      controller.abort();
      await Promise.all(subscribers);
    } finally {
      await feed.close();
      await counting.close();
    }
  });

  test('close ends every subscriber; a failed poll is thrown to the subscribers', { timeout: 30_000 }, async () => {
    const feed = createStatusFeed(database.db, { pollIntervalMs: POLL_MS });
    const routeId = await newRoute();
    const seen = collect(feed.changes(routeId, 0, new AbortController().signal));
    await sleep(2 * POLL_MS);
    await feed.close();
    assert.deepEqual(await seen, []);
    assert.deepEqual(await collect(feed.changes(routeId, 0, new AbortController().signal)), [], 'a closed feed yields nothing');

    const broken = countingDatabase();
    const failing = createStatusFeed(broken.db, { pollIntervalMs: POLL_MS, listen: false });
    // The rejection is expected as soon as the connection closes: handled from the start.
    const failed = assert.rejects(collect(failing.changes(routeId, 0, new AbortController().signal)));
    await sleep(2 * POLL_MS);
    await broken.close();
    await failed;
    await failing.close();
  });
});
