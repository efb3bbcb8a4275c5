import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { log as activityLog } from '@temporalio/activity';
import { MockActivityEnvironment } from '@temporalio/testing';
import { Runtime } from '@temporalio/worker';
import { connectDatabase } from '../../src/db/client.ts';
import { eq } from 'drizzle-orm';
import { txIntents } from '../../src/db/schema.ts';
import { createLogger } from '../../src/logger.ts';
import { activityInterceptors } from '../../src/observability/activityInterceptors.ts';
import { observabilityRoutes, postgresCheck } from '../../src/observability/http.ts';
import { instrumentBridge, metricsRegistry, processRegistry, providerErrors, stepDuration } from '../../src/observability/metrics.ts';
import { routeIdOfWorkflow } from '../../src/observability/routeId.ts';
import { installTemporalRuntime } from '../../src/observability/temporalRuntime.ts';
import { BridgeRouteError, BridgeUnavailableError, type DepositAddressBridge } from '../../src/providers/bridge.ts';
import { bundleWorkflows } from '../../src/temporal/worker.ts';
import { startTestStack, waitFor, type TestStack } from '../support/testStack.ts';

const DEMO_ROUTE = `rt_${'ab'.repeat(16)}`;

/** Every line the stack's logger wrote (level debug), parsed; the raw text is kept to prove each is one JSON object. */
const lines: string[] = [];
let stack: TestStack;
let routeId: string;
let deposit: { address: `0x${string}`; amount: bigint };

before(async () => {
  const echo = process.env.TEST_LOG_LEVEL === 'debug';
  stack = await startTestStack({
    logger: createLogger({
      level: 'debug',
      write: (line) => {
        lines.push(line);
        if (echo) process.stdout.write(`${line}\n`);
      },
    }),
  });
  const chainId = (role: string) => stack.manifest.chains.find((c) => c.role === role)!.chainId;
  const created = await stack.api<{ routeId: string; depositAddress: `0x${string}`; amount: string }>('POST', '/api/private-route', {
    sourceChainId: chainId('source'),
    destChainId: chainId('destination'),
    amount: '25',
    userDestinationAddress: '0x000000000000000000000000000000000000bEEF',
  });
  assert.equal(created.status, 200, JSON.stringify(created.body));
  routeId = created.body.data!.routeId;
  deposit = { address: created.body.data!.depositAddress, amount: BigInt(created.body.data!.amount) };
});
after(async () => stack?.close());

async function get(url: string): Promise<{ status: number; text: string; contentType: string | null }> {
  const response = await fetch(url);
  return { status: response.status, text: await response.text(), contentType: response.headers.get('content-type') };
}

/** The value of one Prometheus sample line `name{labels} value`, or undefined. */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe('health and readiness', () => {
  for (const [name, base] of [
    ['API', () => stack.apiUrl],
    ['worker', () => stack.workerUrl],
  ] as const) {
    test(`${name} GET /healthz answers 200 {success:true,data:{status:'ok'}}`, async () => {
      const { status, text } = await get(`${base()}/healthz`);
      assert.equal(status, 200);
      assert.deepEqual(JSON.parse(text), { success: true, data: { status: 'ok' } });
    });

    test(`${name} GET /readyz answers 200 when its dependencies answer`, async () => {
      const { status, text } = await get(`${base()}/readyz`);
      assert.equal(status, 200, text);
      const body = JSON.parse(text) as { success: boolean; data: { status: string; checks: Record<string, string> } };
      assert.equal(body.success, true);
      assert.equal(body.data.status, 'ready');
      assert.deepEqual(Object.keys(body.data.checks).sort(), name === 'API' ? ['postgres', 'temporal'] : ['postgres', 'worker']);
    });
  }

  test('/readyz answers 503 naming what is down (a closed database, a check that never answers)', async () => {
    const database = connectDatabase(stack.config.DATABASE_URL, { max: 1 });
    await database.close();
    const app = observabilityRoutes({
      checks: { postgres: postgresCheck(database.db), temporal: () => new Promise(() => {}), worker: async () => {} },
      registry: processRegistry,
      checkTimeoutMs: 300,
    });
    const response = await app.request('/readyz');
    assert.equal(response.status, 503);
    const body = (await response.json()) as { success: boolean; error: string; data?: unknown };
    assert.equal(body.success, false);
    assert.equal(body.data, undefined);
    assert.match(body.error, /postgres/);
    assert.match(body.error, /temporal \(no answer within 300 ms\)/);
    assert.doesNotMatch(body.error, /worker/);

    // The API's /readyz is public: it names what is down, not why (a reason can carry a host or address).
    const publicApp = observabilityRoutes({
      checks: { postgres: postgresCheck(database.db), temporal: () => new Promise(() => {}) },
      publicReadiness: true,
      checkTimeoutMs: 300,
    });
    const publicAnswer = await publicApp.request('/readyz');
    assert.equal(publicAnswer.status, 503);
    assert.deepEqual(await publicAnswer.json(), { success: false, error: 'not ready: postgres, temporal unavailable' });
    assert.equal((await publicApp.request('/metrics')).status, 404, 'no registry, no /metrics');
  });

  test('the spec routes keep their envelope beside the new ones', async () => {
    const { status, body } = await stack.api('GET', '/api/private-route/nope');
    assert.equal(status, 404);
    assert.equal(body.success, false);
    const unknown = await stack.api('GET', '/nothing-here');
    assert.equal(unknown.status, 404);
    assert.match(unknown.body.error ?? '', /no such endpoint/);
  });
});

describe('metrics', () => {
  test('the public API port has no /metrics: 404 in the envelope, nothing of the registry', async () => {
    const { status, text } = await get(`${stack.apiUrl}/metrics`);
    assert.equal(status, 404);
    assert.deepEqual(JSON.parse(text), { success: false, error: 'no such endpoint: GET /metrics', code: 'UNKNOWN_ENDPOINT' });
    assert.doesNotMatch(text, /private_route_/);
  });

  test("the API's internal metrics listener binds METRICS_HOST (loopback by default) and serves only /metrics", async () => {
    const internal = new URL(stack.apiMetricsUrl);
    assert.equal(internal.hostname, '127.0.0.1');
    assert.notEqual(internal.port, new URL(stack.apiUrl).port);
    const other = await get(`${internal.origin}/api/bridge/chains`);
    assert.equal(other.status, 404);
    assert.equal(JSON.parse(other.text).success, false);
  });

  test('API /metrics (internal listener) counts transfers by status from Postgres, and the parked ones', async () => {
    const text = await waitFor('the transfer in the gauge', async () => {
      const { status, text, contentType } = await get(stack.apiMetricsUrl);
      assert.equal(status, 200);
      assert.match(contentType ?? '', /^text\/plain/);
      return sample(text, 'private_route_transfers{status="AWAITING_DEPOSIT"}') === 1 ? text : undefined;
    });
    assert.match(text, /^private_route_transfers\{status="AWAITING_DEPOSIT"\} 1$/m);
    assert.equal(sample(text, 'private_route_transfers{status="COMPLETED"}'), 0);
    assert.equal(sample(text, 'private_route_transfers_needing_attention'), 0);
    assert.match(text, /^# TYPE private_route_step_duration_seconds histogram$/m);
    assert.match(text, /^# TYPE private_route_provider_errors_total counter$/m);
  });

  test('worker /metrics times every step (activity) by outcome', async () => {
    // The stray-deposit check runs as soon as the stack starts (an unfunded transfer runs no activity while it waits).
    const text = await waitFor('scanStrayDeposits timings', async () => {
      const { status, text } = await get(`${stack.workerUrl}/metrics`);
      assert.equal(status, 200);
      return (sample(text, 'private_route_step_duration_seconds_count{step="scanStrayDeposits",outcome="success"}') ?? 0) >= 1 ? text : undefined;
    });
    assert.ok(sample(text, 'private_route_step_duration_seconds_sum{step="scanStrayDeposits",outcome="success"}')! > 0);
    assert.match(text, /^private_route_step_duration_seconds_bucket\{le="\+Inf",step="scanStrayDeposits",outcome="success"\} \d+$/m);
    assert.equal(sample(text, 'private_route_transfers{status="AWAITING_DEPOSIT"}'), 1);
  });

  test("worker /metrics shows each hot wallet's balance, its spend a day and its runway, per chain", async () => {
    const { text } = await get(`${stack.workerUrl}/metrics`);
    const hub = stack.manifest.chains.find((c) => c.role === 'hub')!.chainId;
    const gasOnHub = sample(text, `private_route_hot_wallet_balance{wallet="gas",chain_id="${hub}"}`);
    assert.ok(gasOnHub !== undefined && gasOnHub > 0, 'the gas account holds ETH on the hub');
    assert.ok(sample(text, `private_route_hot_wallet_balance{wallet="pool_relayer",chain_id="${hub}"}`)! > 0);
    for (const chain of stack.manifest.chains) {
      assert.notEqual(sample(text, `private_route_hot_wallet_balance{wallet="gas",chain_id="${chain.chainId}"}`), undefined, `gas account on ${chain.chainId}`);
    }
    // No route was funded in the last day yet: nothing spent, an infinite runway.
    assert.equal(sample(text, `private_route_hot_wallet_spend_per_day{wallet="gas",chain_id="${hub}"}`), 0);
    assert.match(text, new RegExp(`^private_route_hot_wallet_runway_days\\{wallet="gas",chain_id="${hub}"\\} \\+Inf$`, 'm'));
    assert.equal(sample(text, `private_route_hot_wallet_oldest_pending_seconds{wallet="pool_relayer",chain_id="${hub}"}`), 0, 'no send waiting');

    // A relayer send recorded five minutes ago and never seen mined: the queue's age, what a stuck withdrawal shows.
    const relayer = stack.service.activityDeps.poolRelayer.address;
    const [stuck] = await stack.service.db
      .insert(txIntents)
      .values({
        routeId: 'rt_metrics_probe',
        step: 'unshield',
        chainId: hub,
        fromAddress: relayer,
        nonce: 999_999,
        txHash: `0x${'ee'.repeat(32)}`,
        rawTx: '0x00',
        createdAt: new Date(Date.now() - 300_000),
      })
      .returning({ id: txIntents.id });
    try {
      const queued = await get(`${stack.workerUrl}/metrics`);
      const age = sample(queued.text, `private_route_hot_wallet_oldest_pending_seconds{wallet="pool_relayer",chain_id="${hub}"}`);
      assert.ok(age !== undefined && age >= 300 && age < 400, `the relayer's queue is ${age} s old`);
      assert.equal(sample(queued.text, `private_route_hot_wallet_oldest_pending_seconds{wallet="gas",chain_id="${hub}"}`), 0);
    } finally {
      await stack.service.db.delete(txIntents).where(eq(txIntents.id, stuck!.id));
    }
  });

  test('worker /metrics shows where transfers wait: the deposit watcher per chain, withdrawals due, the ASP, failing webhooks', async () => {
    const source = stack.manifest.chains.find((c) => c.role === 'source')!.chainId;
    // The watcher writes its cursor once it has read a range of blocks (src/observability/pipelineMetrics.ts).
    const text = await waitFor('the watcher lag of the source chain', async () => {
      const { text } = await get(`${stack.workerUrl}/metrics`);
      return sample(text, `private_route_deposit_watch_lag_seconds{chain_id="${source}"}`) === undefined ? undefined : text;
    });
    const lag = sample(text, `private_route_deposit_watch_lag_seconds{chain_id="${source}"}`)!;
    assert.ok(lag >= 0 && lag < 120, `the watcher moved its cursor ${lag} s ago`);
    // Nothing funded yet: no note in the pool, no webhook.
    assert.equal(sample(text, 'private_route_withdrawals_due'), 0);
    assert.equal(sample(text, 'private_route_asp_approval_oldest_wait_seconds'), 0);
    assert.equal(sample(text, 'private_route_webhook_deliveries_retrying'), 0);
    assert.equal(sample(text, 'private_route_webhook_deliveries_failed_24h'), 0);
  });

  test('API /metrics counts HTTP requests by route template and status; every answer carries X-Request-Id', async () => {
    const response = await fetch(`${stack.apiUrl}/api/private-route/${routeId}`);
    assert.match(response.headers.get('x-request-id') ?? '', /^[0-9a-f]{32}$/);
    await response.arrayBuffer();
    const { text } = await get(stack.apiMetricsUrl);
    assert.ok(sample(text, 'private_route_http_requests_total{method="POST",route="/api/private-route",status="200"}')! >= 1, 'the create of before()');
    assert.ok(sample(text, 'private_route_http_requests_total{method="GET",route="/api/private-route/:routeId",status="200"}')! >= 1);
    assert.doesNotMatch(text, new RegExp(routeId), 'no label names a routeId');
  });

  test("the Temporal SDK's own metrics are served on their own port", async () => {
    assert.ok(stack.temporalMetricsUrl, 'the test stack exports SDK metrics');
    const text = await waitFor('temporal_ metrics', async () => {
      const { status, text } = await get(stack.temporalMetricsUrl!);
      return status === 200 && /^temporal_\w+/m.test(text) ? text : undefined;
    });
    assert.match(text, /^temporal_\w+(\{[^}]*\})? /m);
    assert.doesNotMatch(text, /^private_route_/m);
  });

  test('provider errors are counted by provider, operation and kind, and rethrown unchanged', async () => {
    const failing = (error: Error) => async () => {
      throw error;
    };
    const fake = {
      listChains: async () => [],
      listTokens: async () => [],
      quote: failing(new BridgeRouteError('no route')),
      orderStatus: failing(new BridgeUnavailableError('503')),
      tokenUsdPrice: failing(new TypeError('fetch failed')),
    } as unknown as DepositAddressBridge;
    const bridge = instrumentBridge(fake, 'test-bridge');
    const counted = async (operation: string, kind: string) => {
      const metric = await providerErrors.get();
      return metric.values.find((v) => v.labels.provider === 'test-bridge' && v.labels.operation === operation && v.labels.kind === kind)?.value ?? 0;
    };
    assert.deepEqual(await bridge.listChains(), []);
    await assert.rejects(bridge.quote({} as never), BridgeRouteError);
    await assert.rejects(bridge.orderStatus('x'), BridgeUnavailableError);
    await assert.rejects(bridge.orderStatus('y'), BridgeUnavailableError);
    await assert.rejects(bridge.tokenUsdPrice(1, '0x0000000000000000000000000000000000000001'), TypeError);
    assert.equal(await counted('quote', 'BridgeRouteError'), 1);
    assert.equal(await counted('orderStatus', 'BridgeUnavailableError'), 2);
    assert.equal(await counted('tokenUsdPrice', 'other'), 1);
    assert.equal(await counted('listChains', 'other'), 0);
    const text = await metricsRegistry(stack.service.db).metrics();
    assert.match(text, /^private_route_provider_errors_total\{provider="test-bridge",operation="orderStatus",kind="BridgeUnavailableError"\} 2$/m);
  });
});

describe('structured logs', () => {
  type Line = Record<string, unknown> & { time: string; level: string; msg: string };
  const parsed = () => lines.map((line) => JSON.parse(line) as Line);
  const ofRoute = () => parsed().filter((l) => l.routeId === routeId || l.workflowId === routeId);

  test('every line is one JSON object with time, level and msg', () => {
    assert.ok(lines.length > 0);
    for (const line of lines) {
      assert.doesNotMatch(line, /\n/);
      const entry = JSON.parse(line) as Line;
      assert.ok(!Number.isNaN(Date.parse(entry.time)), line);
      assert.ok(['debug', 'info', 'warn', 'error'].includes(entry.level), line);
      assert.equal(typeof entry.msg, 'string', line);
    }
    // The SDK's worker lines come through the JSON logger (not its default console logger).
    assert.ok(parsed().some((l) => l.msg === 'Worker state changed' && l.state === 'RUNNING' && l.sdkComponent === 'worker'));
  });

  test('the worker, workflow and activity lines of a transfer carry its routeId', async () => {
    // Funded, so that its steps run (the earlier tests count it as waiting).
    await stack.fund(deposit.address, 'USDC', deposit.amount);
    await waitFor('workflow and activity lines of the transfer', async () => {
      const mine = ofRoute();
      const workflow = mine.some((l) => l.msg === 'Workflow started');
      const activity = mine.some((l) => l.msg === 'Activity completed' && l.activityType === 'bridgeIn');
      return workflow && activity ? true : undefined;
    });
    const mine = ofRoute();
    for (const line of mine) assert.equal(line.routeId, routeId, JSON.stringify(line));
    for (const line of mine) assert.equal(line.taskToken, undefined, 'task tokens are not logged');
    const started = mine.find((l) => l.msg === 'Activity started' && l.activityType === 'bridgeIn')!;
    assert.equal(started.workflowId, routeId);
    assert.equal(started.workflowType, 'transferWorkflowV2');
    // The transfer-created line of the API carries it too.
    assert.ok(mine.some((l) => l.msg === 'transfer created'));
    // Workflows that work for no single route (the stray-deposit scanner) get no routeId.
    for (const line of parsed().filter((l) => typeof l.workflowId === 'string' && !l.workflowId.startsWith('rt_')))
      assert.equal(line.routeId, undefined, JSON.stringify(line));
  });

  test('routeId of a workflow: the transfer (id = routeId) and its other workflows (<routeId>:<purpose>), nothing else', () => {
    assert.equal(routeIdOfWorkflow(DEMO_ROUTE), DEMO_ROUTE);
    assert.equal(routeIdOfWorkflow(`${DEMO_ROUTE}:refund`), DEMO_ROUTE);
    assert.equal(routeIdOfWorkflow('stray-deposit-scanner'), undefined);
    assert.equal(routeIdOfWorkflow(`${DEMO_ROUTE}x`), undefined);
    assert.equal(routeIdOfWorkflow(undefined), undefined);
  });

  test('the workflow bundle carries the workflow interceptor module', async () => {
    const bundle = await bundleWorkflows();
    assert.ok(bundle.code.includes('routeIdOfWorkflow'));
  });

  test('the activity interceptor adds routeId to activity log lines and times the step', async () => {
    const seen: Array<{ message: string; meta: Record<string, unknown> }> = [];
    const record = (message: string, meta: Record<string, unknown> = {}) => void seen.push({ message, meta });
    const env = new MockActivityEnvironment(
      { activityType: 'demoStep', workflowExecution: { workflowId: `${DEMO_ROUTE}:refund`, runId: 'run-1' } },
      {
        interceptors: [activityInterceptors],
        logger: { log: (_level, message, meta) => record(message, meta), trace: record, debug: record, info: record, warn: record, error: record },
      },
    );
    await env.run(async () => activityLog.info('inside the step', { extra: 1 }));
    await assert.rejects(
      env.run(async () => {
        throw new Error('step failed');
      }),
    );
    const inside = seen.find((s) => s.message === 'inside the step')!;
    assert.equal(inside.meta.routeId, DEMO_ROUTE);
    assert.equal(inside.meta.extra, 1);
    const durations = (await stepDuration.get()).values.filter(
      (v) => v.labels.step === 'demoStep' && v.metricName === 'private_route_step_duration_seconds_count',
    );
    assert.deepEqual(durations.map((v) => [v.labels.outcome, v.value]).sort(), [
      ['failure', 1],
      ['success', 1],
    ]);
  });

  test('the Temporal Runtime is installed once per process; a second install only redirects its lines', () => {
    assert.equal(Runtime.instantiator, 'install');
    const instance = Runtime._instance;
    const other: string[] = [];
    const info = installTemporalRuntime({ logger: createLogger({ level: 'debug', write: (l) => other.push(l) }), metricsBindAddress: '127.0.0.1:1' });
    try {
      assert.equal(info.installed, false);
      assert.equal(info.metricsUrl, stack.temporalMetricsUrl);
      assert.equal(Runtime._instance, instance);
      Runtime.instance().logger.info('redirected', { workflowId: DEMO_ROUTE });
      Runtime.instance().flushLogs();
      const redirected = other.map((l) => JSON.parse(l) as Line).find((l) => l.msg === 'redirected');
      assert.equal(redirected?.routeId, DEMO_ROUTE);
      assert.ok(!lines.some((l) => l.includes('"redirected"')));
    } finally {
      // Back to this file's sink.
      installTemporalRuntime({ logger: createLogger({ level: 'debug', write: (line) => lines.push(line) }) });
    }
  });
});
