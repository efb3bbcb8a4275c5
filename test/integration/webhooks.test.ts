/**
 * Webhook delivery end to end over real parts: embedded Postgres, a Temporal dev server with the real workflow
 * bundle (webhookDelivery) and activities (activities/webhooks.ts), and a local HTTP receiver. writeStatus is the
 * entry point, as in production. Retry intervals are shortened and the random delay is off (0 s).
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { DefaultLogger, Runtime, Worker } from '@temporalio/worker';
import { eq, sql } from 'drizzle-orm';
import type { ActivityDeps } from '../../activities/deps.ts';
import { writeStatus } from '../../activities/projection.ts';
import { startStalledWebhooks, webhookActivities } from '../../activities/webhooks.ts';
import { startTestPostgres, type TestPostgres, transferRow } from '../support/database.ts';
import { connectDatabase, type DatabaseHandle } from '../../src/db/client.ts';
import { apiKeys, transfers, webhookDeliveries } from '../../src/db/schema.ts';
import { createLogger } from '../../src/logger.ts';
import { bundleWorkflows } from '../../src/temporal/worker.ts';
import { workflowSpanSinks } from '../../src/observability/tracing.ts';
import type { WebhookSettings } from '../../src/webhooks/settings.ts';
import { verifyWebhook } from '../../src/webhooks/signature.ts';
import { Webhook } from 'standardwebhooks';
import { keylessWebhookSecret } from '../../src/webhooks/signingSecrets.ts';
import { publicClockOf, publicEndShownAt, publicProgressShownAt } from '../../src/transfers/publicView.ts';
import { taskQueues } from '../../workflows/types.ts';
import { temporalWebhookStarter } from '../../src/webhooks/starter.ts';
import { startTestTemporal } from '../support/temporalTestEnvironment.ts';

const TASK_QUEUE = 'webhooks-test';
const SECRET = randomBytes(32).toString('hex');
const KEYLESS_SECRET = keylessWebhookSecret(SECRET);
/** A path and query a client might put a secret of its own in: it must reach neither history nor the database rows. */
const URL_SECRET = 'hook-secret-4f1c9e';

let postgres: TestPostgres;
let database: DatabaseHandle;
let env: TestWorkflowEnvironment;
let workers: Worker[] = [];
let running: Promise<void>[] = [];
let receiver: http.Server;
let receiverBase: string;

const settings: WebhookSettings = {
  signingSecret: SECRET,
  allowPrivateTargets: true,
  maxDelaySeconds: 0,
  requestTimeoutMs: 2_000,
  retry: { initialIntervalMs: 200, backoffCoefficient: 2, maximumIntervalMs: 1_000, scheduleToCloseMs: 30_000 },
};

interface Received {
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
  receivedAt: number;
}
/** Requests per receiver path, and the answers each path gives in turn (the last one repeats). */
const received = new Map<string, Received[]>();
const answers = new Map<string, number[]>();

function deps(): Pick<ActivityDeps, 'db' | 'webhookStarter'> {
  return { db: database.db, webhookStarter: temporalWebhookStarter(env.client, TASK_QUEUE, settings) };
}

let nextIndex = 1;
/** The route of the first test, shown by routectl in a later one. */
let retriedRoute = '';
async function createRoute(webhookPath: string | null, base = receiverBase): Promise<string> {
  const row = transferRow(nextIndex++, {
    routeId: `rt_${randomBytes(16).toString('hex')}`,
    webhookUrl: webhookPath === null ? null : `${base}${webhookPath}?token=${URL_SECRET}`,
  });
  await database.db.insert(transfers).values(row);
  return row.routeId;
}

async function deliveryRow(eventId: string) {
  const [row] = await database.db.select().from(webhookDeliveries).where(eq(webhookDeliveries.eventId, eventId));
  return row;
}

/** Runs `routectl` (bin/routectl.mjs) against this test's Postgres and Temporal; resolves with its output. */
function routectl(...args: string[]): Promise<string> {
  const childEnv = {
    ...process.env,
    DATABASE_URL: postgres.url,
    TEMPORAL_ADDRESS: env.address,
    TEMPORAL_NAMESPACE: env.namespace ?? 'default',
    PAYLOAD_CODEC: 'off',
  };
  return new Promise((resolve, reject) => {
    execFile(process.execPath, ['bin/routectl.mjs', ...args], { env: childEnv, timeout: 60_000 }, (error, stdout, stderr) => {
      if (error) reject(new Error(`routectl ${args.join(' ')} failed: ${stderr || error.message}`));
      else resolve(stdout);
    });
  });
}

async function finished(eventId: string): Promise<void> {
  await env.client.workflow.getHandle(`webhook-${eventId}`).result();
}

before(
  async () => {
    postgres = await startTestPostgres('webhooks-test');
    database = connectDatabase(postgres.url);
    const [max] = await database.db.execute<{ max: string | null }>(sql`select max(account_index) as max from transfers`);
    nextIndex = Number(max?.max ?? 0) + 2_000_000;

    receiver = http.createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        const pathname = new URL(request.url ?? '/', 'http://x').pathname;
        const list = received.get(pathname) ?? [];
        list.push({ path: request.url ?? '', headers: request.headers, body: Buffer.concat(chunks).toString('utf8'), receivedAt: Date.now() });
        received.set(pathname, list);
        const queue = answers.get(pathname) ?? [200];
        const status = queue.length > 1 ? (queue.shift() as number) : (queue[0] ?? 200);
        response.writeHead(status, { 'content-type': 'text/plain' }).end('ok');
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    receiverBase = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;

    Runtime.install({ logger: new DefaultLogger('ERROR') });
    env = await startTestTemporal({ log: { format: 'pretty', level: 'error' } });
    const workflowBundle = await bundleWorkflows({ logger: createLogger({ level: 'warn' }) });
    // The workflow runs on the steps queue, its activities on the waits queue (taskQueues in workflows/types.ts).
    // Only the webhook activities: the others need chains.
    const activities = webhookActivities({ db: database.db, webhooks: settings } as ActivityDeps);
    workers = await Promise.all([
      Worker.create({
        connection: env.nativeConnection,
        namespace: env.namespace ?? 'default',
        taskQueue: TASK_QUEUE,
        workflowBundle,
        sinks: workflowSpanSinks(undefined),
      }),
      Worker.create({ connection: env.nativeConnection, namespace: env.namespace ?? 'default', taskQueue: taskQueues(TASK_QUEUE).waits, activities }),
    ]);
    running = workers.map((worker) => worker.run());
  },
  { timeout: 180_000 },
);

after(
  async () => {
    for (const worker of workers) if (worker.getState() === 'RUNNING') worker.shutdown();
    await Promise.allSettled(running);
    await env?.teardown();
    await new Promise<void>((resolve) => (receiver ? receiver.close(() => resolve()) : resolve()));
    await database?.close();
    await postgres?.stop();
  },
  { timeout: 60_000 },
);

describe('webhooks: enqueued by writeStatus, signed, retried, recorded', { timeout: 180_000 }, () => {
  test('a status written twice is delivered once; 500, 500, then 200: delivered after 3 attempts, signed, URL kept out of history', async () => {
    answers.set('/retry', [500, 500, 200]);
    const routeId = await createRoute('/retry');
    retriedRoute = routeId;
    const eventId = `${routeId}:2`;
    await writeStatus(deps(), { routeId, seq: 2, status: 'BRIDGING_IN' });
    // A retried projection (the same status again) starts nothing new.
    await writeStatus(deps(), { routeId, seq: 2, status: 'BRIDGING_IN' });
    const rows = await database.db.select().from(webhookDeliveries).where(eq(webhookDeliveries.routeId, routeId));
    assert.equal(rows.length, 1, 'one delivery row for one status change');
    await finished(eventId);

    const row = await deliveryRow(eventId);
    assert.ok(row);
    assert.equal(row.state, 'delivered');
    assert.equal(row.attempts, 3);
    assert.equal(row.lastResponseStatus, 200);
    assert.equal(row.lastError, null);
    assert.equal(row.status, 'BRIDGING_IN');
    assert.equal(row.statusSeq, 2);
    assert.ok(row.deliveredAt && row.lastAttemptAt);

    // Written again after the delivery ended: the row is no longer pending, nothing is sent.
    await writeStatus(deps(), { routeId, seq: 2, status: 'BRIDGING_IN' });
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const requests = received.get('/retry') ?? [];
    assert.equal(requests.length, 3, 'three attempts reached the receiver, no more');
    const runs = [];
    for await (const run of env.client.workflow.list({ query: `WorkflowId = 'webhook-${eventId}'` })) runs.push(run);
    assert.ok(runs.length <= 1, 'one workflow run for the event');

    const last = requests.at(-1)!;
    assert.equal(last.path, `/retry?token=${URL_SECRET}`);
    assert.equal(last.headers['content-type'], 'application/json');
    assert.equal(last.headers['webhook-id'], eventId);
    const body = JSON.parse(last.body) as Record<string, unknown>;
    assert.deepEqual(Object.keys(body).sort(), ['id', 'occurredAt', 'routeId', 'status', 'type']);
    assert.deepEqual({ ...body, occurredAt: undefined }, { id: eventId, type: 'transfer.status', routeId, status: 'BRIDGING_IN', occurredAt: undefined });
    assert.equal(new Date(body.occurredAt as string).toISOString(), body.occurredAt);
    // Every attempt carries the same event (same body), signed afresh.
    for (const request of requests) assert.equal(request.body, last.body);

    // A transfer created without an API key is signed with the keyless secret, derived from the worker's; every
    // attempt verifies with Standard Webhooks' own library, as an integrator's would.
    for (const request of requests)
      assert.deepEqual(new Webhook(KEYLESS_SECRET).verify(request.body, request.headers as Record<string, string>), JSON.parse(request.body));
    const verified = verifyWebhook(KEYLESS_SECRET, last.headers, last.body);
    assert.deepEqual(verified, { ok: true, eventId, timestamp: Number(last.headers['webhook-timestamp']) });
    assert.equal(verifyWebhook(KEYLESS_SECRET, last.headers, last.body.replace('BRIDGING_IN', 'COMPLETED')).ok, false, 'a tampered body fails');
    assert.equal(
      verifyWebhook(KEYLESS_SECRET, last.headers, last.body, { now: Number(last.headers['webhook-timestamp']) + 301 }).ok,
      false,
      'an old timestamp fails',
    );

    const history = JSON.stringify(await env.client.workflow.getHandle(`webhook-${eventId}`).fetchHistory());
    assert.ok(history.includes('the receiver answered 500'), 'the history holds the attempts (the check below is not vacuous)');
    assert.ok(!history.includes(URL_SECRET), 'the URL is not in the workflow history');
    assert.ok(!history.includes(receiverBase.replace('http://', '')), 'not even the host and port');
    assert.ok(!history.includes(SECRET), 'the signing secret is not in the history');
    const dbText = JSON.stringify(await database.db.select().from(webhookDeliveries));
    assert.ok(!dbText.includes(URL_SECRET));
  });

  test("routectl show lists the route's deliveries (status, state, attempts, last answer, times) and the URL's origin only", async () => {
    assert.ok(retriedRoute, 'runs after the first test');
    // Two processes of their own, each a second or two of start-up: run side by side.
    const [output, json] = await Promise.all([routectl('show', retriedRoute), routectl('show', retriedRoute, '--json')]);
    assert.match(output, new RegExp(`webhook deliveries \\(to ${receiverBase.replace(/[.]/g, '\\.')}/…\\):`));
    assert.match(output, /#2 BRIDGING_IN +delivered +attempts 3 +last answer 200 +created \S+, last attempt \S+, delivered \S+/);
    assert.ok(!output.includes(URL_SECRET), "the URL's path and query are not shown");
    assert.ok(!json.includes(URL_SECRET));
    const parsed = JSON.parse(json) as { webhookDeliveries: { eventId: string; state: string }[] };
    assert.deepEqual(
      parsed.webhookDeliveries.map((d) => [d.eventId, d.state]),
      [[`${retriedRoute}:2`, 'delivered']],
    );
  });

  test('a 400 answer stops the retries: failed after one attempt', async () => {
    answers.set('/reject', [400]);
    const routeId = await createRoute('/reject');
    const eventId = `${routeId}:3`;
    await writeStatus(deps(), { routeId, seq: 3, status: 'SHIELDED' });
    await finished(eventId);
    const row = await deliveryRow(eventId);
    assert.equal(row?.state, 'failed');
    assert.equal(row?.attempts, 1);
    assert.equal(row?.lastResponseStatus, 400);
    assert.equal(row?.lastError, 'the receiver answered 400');
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    assert.equal(received.get('/reject')?.length, 1, 'no retry after a 400');
  });

  test('429 is retried like a 5xx; retries that run out mark the delivery failed', async () => {
    answers.set('/busy', [429, 503]);
    const saved = settings.retry;
    settings.retry = { ...saved, scheduleToCloseMs: 2_500 };
    try {
      const routeId = await createRoute('/busy');
      const eventId = `${routeId}:4`;
      await writeStatus(deps(), { routeId, seq: 4, status: 'BRIDGING_OUT' });
      await finished(eventId);
      const row = await deliveryRow(eventId);
      assert.equal(row?.state, 'failed');
      assert.ok((row?.attempts ?? 0) >= 2, `retried after 429 (attempts: ${row?.attempts})`);
      assert.equal(row?.lastResponseStatus, 503);
    } finally {
      settings.retry = saved;
    }
  });

  test('the random delay: a timer of at most WEBHOOK_MAX_DELAY_SECONDS before the first attempt', async () => {
    const saved = settings.maxDelaySeconds;
    settings.maxDelaySeconds = 2;
    try {
      const routeId = await createRoute('/delayed');
      const eventId = `${routeId}:5`;
      await writeStatus(deps(), { routeId, seq: 5, status: 'UNSHIELD_SENT' });
      await finished(eventId);
      assert.equal((await deliveryRow(eventId))?.state, 'delivered');
      const history = await env.client.workflow.getHandle(`webhook-${eventId}`).fetchHistory();
      const timers = (history.events ?? []).filter((e) => e.timerStartedEventAttributes).map((e) => e.timerStartedEventAttributes!.startToFireTimeout!);
      // One timer unless the draw was 0 ms (1 in 2001).
      assert.ok(timers.length <= 1);
      for (const timer of timers) assert.ok(Number(timer.seconds ?? 0) + (timer.nanos ?? 0) / 1e9 <= 2, 'at most 2 s');
      const started = new Date((await env.client.workflow.getHandle(`webhook-${eventId}`).describe()).startTime).getTime();
      const request = received.get('/delayed')?.[0];
      assert.ok(request && request.receivedAt - started < 2_000 + 1_500, 'delivered within the delay and a little');
    } finally {
      settings.maxDelaySeconds = saved;
    }
  });

  test('with the public view’s clock, pool-phase statuses are held and go out with the end when the public view shows it; a deposit’s when the view shows it', async () => {
    const EPOCH_S = 2;
    const DELAY_MAX_S = 3;
    const HOLD_S = 6;
    const clocked = { ...settings, publicView: { epochSeconds: EPOCH_S, endDelayMaxSeconds: DELAY_MAX_S, holdSeconds: HOLD_S } };
    const clockDeps = () => ({ ...deps(), webhooks: clocked });
    const routeId = await createRoute('/held');
    await writeStatus(clockDeps(), { routeId, seq: 2, status: 'BRIDGING_IN' });
    await writeStatus(clockDeps(), { routeId, seq: 3, status: 'RECEIVED_ON_HUB' });
    await writeStatus(clockDeps(), { routeId, seq: 4, status: 'SHIELDED' });
    await finished(`${routeId}:2`);
    assert.deepEqual(
      (received.get('/held') ?? []).map((r) => (JSON.parse(r.body) as { status: string }).status),
      ['BRIDGING_IN'],
      'the deposit’s status goes out before the end',
    );
    const reached = async (seq: number) => {
      const [row] = await database.db.execute<{ reached_at: Date }>(
        sql`select reached_at from transfer_statuses where route_id = ${routeId} and status_seq = ${seq}`,
      );
      return new Date(row!.reached_at).getTime();
    };
    const [token] = await database.db.select({ hash: transfers.statusTokenHash }).from(transfers).where(eq(transfers.routeId, routeId));
    const funded = await reached(2);
    // Issue 33: not at once (that dates the funding), but when the public view shows BRIDGING_IN: the route's own delay
    // after the funding, at an epoch start.
    const clock = publicClockOf({ statusTokenHash: token?.hash ?? null }, clocked.publicView);
    const progressShownAt = publicProgressShownAt(funded, clock);
    assert.equal((await deliveryRow(`${routeId}:2`))?.deliverAfter?.getTime(), progressShownAt);
    const deposited = received.get('/held')![0]!.receivedAt;
    assert.ok(deposited >= progressShownAt && deposited < progressShownAt + 1_500, `went out when the view showed it (${deposited - progressShownAt} ms)`);
    await assert.rejects(env.client.workflow.getHandle(`webhook-${routeId}:4`).describe(), 'a pool-phase delivery has no workflow before the end');
    assert.equal((await deliveryRow(`${routeId}:4`))?.deliverAfter, null, 'held: no deliver_after yet');
    // The sweep leaves a held delivery alone however old it is.
    const swept = { db: database.db, webhookStarter: temporalWebhookStarter(env.client, TASK_QUEUE, settings) };
    await startStalledWebhooks(swept, { stalledAfterSeconds: 0 });
    await assert.rejects(env.client.workflow.getHandle(`webhook-${routeId}:3`).describe(), 'the sweep did not start a held delivery');
    assert.match(await routectl('show', routeId), /#4 SHIELDED +pending +attempts 0 +not tried yet +created \S+, held until the route ends/);

    await writeStatus(clockDeps(), { routeId, seq: 5, status: 'UNSHIELD_SENT' });
    await writeStatus(clockDeps(), { routeId, seq: 7, status: 'COMPLETED' });
    // A retried end changes nothing: same moment, no second delivery.
    await writeStatus(clockDeps(), { routeId, seq: 7, status: 'COMPLETED' });
    const shownAt = publicEndShownAt(await reached(7), { ...clock, fundedAt: funded });
    assert.ok(shownAt >= funded + HOLD_S * 1000, 'not before the hold after the funding has passed');
    await Promise.all([3, 4, 5, 7].map((seq) => finished(`${routeId}:${seq}`)));
    for (const seq of [3, 4, 5, 7])
      assert.equal((await deliveryRow(`${routeId}:${seq}`))?.deliverAfter?.getTime(), shownAt, `seq ${seq} released for the public moment`);
    const later = (received.get('/held') ?? []).slice(1).map((r) => ({ status: (JSON.parse(r.body) as { status: string }).status, at: r.receivedAt }));
    assert.deepEqual(later.map((r) => r.status).sort(), ['COMPLETED', 'RECEIVED_ON_HUB', 'SHIELDED', 'UNSHIELD_SENT']);
    for (const r of later) {
      assert.ok(r.at >= shownAt, `${r.status} waited for the public view to show the end (${r.at - shownAt} ms)`);
      assert.ok(r.at < shownAt + 1_500, `${r.status} went out then (maxDelaySeconds 0 here)`);
    }
    assert.equal(shownAt % (EPOCH_S * 1000), 0, 'at an epoch start');
  });

  test('Temporal refusing the start fails no money step: the delivery waits as pending and the sweep starts it', async () => {
    const routeId = await createRoute('/swept');
    const eventId = `${routeId}:3`;
    const unreachable = { start: async () => Promise.reject(new Error('14 UNAVAILABLE: Temporal is unreachable')) };
    // writeStatus runs inside the money steps: it must not fail because the delivery could not be started.
    await writeStatus({ db: database.db, webhookStarter: unreachable }, { routeId, seq: 3, status: 'RECEIVED_ON_HUB' });
    assert.equal((await database.db.select().from(transfers).where(eq(transfers.routeId, routeId)))[0]?.status, 'RECEIVED_ON_HUB');
    const row = await deliveryRow(eventId);
    assert.equal(row?.state, 'pending');
    assert.equal(row?.attempts, 0);
    await assert.rejects(env.client.workflow.getHandle(`webhook-${eventId}`).describe(), 'no workflow was started');

    const swept = { db: database.db, webhookStarter: temporalWebhookStarter(env.client, TASK_QUEUE, settings) };
    // Too fresh to be called stalled (its workflow could still be in its random delay): left alone.
    assert.equal(await startStalledWebhooks(swept, { stalledAfterSeconds: 3600 }), 0);
    assert.ok((await startStalledWebhooks(swept, { stalledAfterSeconds: 0 })) >= 1);
    await finished(eventId);
    assert.equal((await deliveryRow(eventId))?.state, 'delivered');
    assert.equal(received.get('/swept')?.length, 1);
    // A sweep after the delivery ended asks nothing of it.
    assert.equal(await startStalledWebhooks(swept, { stalledAfterSeconds: 0 }), 0);
  });

  test("each partner's transfers are signed with its own secret (routectl hands it out), never verifiable with another's; a rotation signs with both for its overlap", async () => {
    // routectl derives the secrets from WEBHOOK_SIGNING_SECRET, as the worker does.
    const routectlWithSecret = (...args: string[]) =>
      new Promise<string>((resolve, reject) =>
        execFile(
          process.execPath,
          ['bin/routectl.mjs', ...args],
          { env: { ...process.env, DATABASE_URL: postgres.url, WEBHOOK_SIGNING_SECRET: SECRET }, timeout: 60_000 },
          (error, stdout, stderr) => (error ? reject(new Error(stderr || error.message)) : resolve(stdout)),
        ),
      );
    const secretIn = (output: string) => /^(whsec_[A-Za-z0-9+/]{43}=)$/m.exec(output)?.[1];
    const names = [`wh-a-${randomBytes(3).toString('hex')}`, `wh-b-${randomBytes(3).toString('hex')}`];
    // The routectl runs that do not depend on each other (a second or two of start-up each) run side by side.
    const [created, keylessOutput] = await Promise.all([
      Promise.all(names.map((name) => routectlWithSecret('apikey', 'create', '--name', name))),
      routectlWithSecret('webhook-secret'),
    ]);
    const secrets = created.map(secretIn);
    assert.ok(secrets[0] && secrets[1] && secrets[0] !== secrets[1], 'each partner gets a secret of its own');
    assert.notEqual(secrets[0], SECRET);
    const ids = await Promise.all(names.map(async (name) => (await database.db.select({ id: apiKeys.id }).from(apiKeys).where(eq(apiKeys.name, name)))[0]!.id));

    const deliver = async (webhookPath: string, partnerId: number | null) => {
      const routeId = await createRoute(webhookPath);
      await database.db.update(transfers).set({ partnerId }).where(eq(transfers.routeId, routeId));
      await writeStatus(deps(), { routeId, seq: 2, status: 'BRIDGING_IN' });
      await finished(`${routeId}:2`);
      return received.get(webhookPath)!.at(-1)!;
    };
    const [toA, toB, toNone] = await Promise.all([deliver('/partner-a', ids[0]!), deliver('/partner-b', ids[1]!), deliver('/partner-none', null)]);
    const verifies = (secret: string, delivery: Received) => verifyWebhook(secret, delivery.headers, delivery.body).ok;
    const keyless = secretIn(keylessOutput);
    assert.equal(keyless, KEYLESS_SECRET, 'routectl webhook-secret hands out the keyless secret');
    assert.deepEqual(
      [toA, toB, toNone].map((delivery) => [secrets[0]!, secrets[1]!, KEYLESS_SECRET, SECRET].map((secret) => verifies(secret, delivery))),
      [
        [true, false, false, false],
        [false, true, false, false],
        [false, false, true, false],
      ],
      "a delivery verifies with its own partner's secret only, one without a key with the keyless secret only; the worker's own secret signs nothing directly",
    );

    const rotated = secretIn(await routectlWithSecret('apikey', 'rotate-webhook-secret', '--name', names[0]!, '--overlap-hours', '1'));
    assert.ok(rotated && rotated !== secrets[0]);
    const during = await deliver('/partner-a-rotating', ids[0]!);
    assert.equal(String(during.headers['webhook-signature']).split(' ').length, 2, 'two signatures during the overlap');
    assert.ok(verifies(rotated, during) && verifies(secrets[0]!, during), 'the old and the new secret both verify during the overlap');
    assert.ok(!verifies(secrets[1]!, during));
    await database.db
      .update(apiKeys)
      .set({ webhookPreviousValidUntil: new Date(Date.now() - 1_000) })
      .where(eq(apiKeys.id, ids[0]!));
    const afterOverlap = await deliver('/partner-a-rotated', ids[0]!);
    assert.ok(verifies(rotated, afterOverlap), 'the new secret verifies');
    assert.ok(!verifies(secrets[0]!, afterOverlap), 'the old one no longer does once the overlap ended');
  });

  test('a route without a webhook URL enqueues nothing', async () => {
    const routeId = await createRoute(null);
    await writeStatus(deps(), { routeId, seq: 2, status: 'BRIDGING_IN' });
    assert.equal((await database.db.select().from(webhookDeliveries).where(eq(webhookDeliveries.routeId, routeId))).length, 0);
  });

  test('the SSRF guard: a loopback target is refused (no request, failed, no retry) unless private targets are allowed', async () => {
    settings.allowPrivateTargets = false;
    try {
      // A literal address (connected to without a lookup) and a name that resolves to loopback (checked in the lookup).
      const bases = [receiverBase, receiverBase.replace('127.0.0.1', 'localhost')];
      for (const base of bases) {
        const routeId = await createRoute('/private', base);
        const eventId = `${routeId}:2`;
        await writeStatus(deps(), { routeId, seq: 2, status: 'BRIDGING_IN' });
        await finished(eventId);
        const row = await deliveryRow(eventId);
        assert.equal(row?.state, 'failed', base);
        assert.equal(row?.attempts, 1, base);
        assert.equal(row?.lastResponseStatus, null);
        assert.match(row?.lastError ?? '', /private, loopback or link-local/);
        assert.ok(!(row?.lastError ?? '').includes('127.0.0.1') && !(row?.lastError ?? '').includes('localhost'), 'the stored error names no host');
      }
      assert.equal(received.get('/private'), undefined, 'nothing reached the receiver');
    } finally {
      settings.allowPrivateTargets = true;
    }
  });
});
