/**
 * API latency under a fixed request rate: quote, create and GET of the real API (the local stack in this
 * process), each next to a trivial Hono app served the same way (@hono/node-server through the service's
 * serveHttp) answering a static body: the ratio is what the service adds to the framework.
 *
 *   npm run bench:api -- [--rate 50] [--duration 10] [--connections <rate>] [--small] [--json]
 *
 * The load comes from autocannon in a child process (bench/api/load.ts), so it does not share the API's
 * event loop; it does share the machine's cores. Creates use a fresh recipient each; they start real
 * transfers that are never funded, so the create run goes last.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Hono } from 'hono';
import { serveHttp } from '../../src/observability/http.ts';
import { positiveInt, round, runMain, table } from '../support/figures.ts';
import { createTransfer, progress, startBenchStack, transferRequest } from '../support/stack.ts';
import type { LoadResult, LoadSpec } from './load.ts';

const { values } = parseArgs({
  options: {
    rate: { type: 'string', default: '50' },
    duration: { type: 'string', default: '10' },
    connections: { type: 'string' },
    small: { type: 'boolean', default: false },
    json: { type: 'boolean', default: false },
  },
});
const rate = values.small ? 10 : positiveInt(values.rate, '--rate');
const durationSeconds = values.small ? 3 : positiveInt(values.duration, '--duration');
// One connection per request a second: the rate holds while a request takes under a second.
const connections = values.connections === undefined ? rate : positiveInt(values.connections, '--connections');

const LOAD_SCRIPT = fileURLToPath(new URL('./load.ts', import.meta.url));

function load(spec: Omit<LoadSpec, 'rate' | 'durationSeconds' | 'connections'>): Promise<LoadResult> {
  const full: LoadSpec = { ...spec, rate, durationSeconds, connections };
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', LOAD_SCRIPT, JSON.stringify(full)], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.on('error', reject);
    child.on('exit', (code) => {
      if (code !== 0) reject(new Error(`the load generator exited ${code} for ${spec.method} ${spec.paths[0]}`));
      else resolve(JSON.parse(out) as LoadResult);
    });
  });
}

runMain(async () => {
  progress('starting the local stack (relay mode)');
  const bench = await startBenchStack();
  const staticBody = { success: true, data: { ok: true, note: 'a static body of the same framework' } };
  const staticApp = new Hono();
  staticApp.get('/static', (c) => c.json(staticBody));
  staticApp.post('/static', async (c) => {
    await c.req.json();
    return c.json(staticBody);
  });
  const staticServer = await serveHttp(staticApp, 0, '127.0.0.1');
  try {
    const { stack } = bench;
    const quoteBody = { sourceChainId: transferRequest(stack, '1').sourceChainId, destChainId: transferRequest(stack, '1').destChainId, amount: '25' };
    const createBody = transferRequest(stack, '25');
    progress('creating 20 transfers for the GETs');
    const routeIds: string[] = [];
    for (let i = 0; i < 20; i++) routeIds.push((await createTransfer(stack)).routeId);

    const runs: Array<{ name: string; result: LoadResult; baseline: LoadResult }> = [];
    const measure = async (
      name: string,
      spec: Omit<LoadSpec, 'rate' | 'durationSeconds' | 'connections'>,
      baselineSpec: Omit<LoadSpec, 'rate' | 'durationSeconds' | 'connections'>,
    ) => {
      progress(`${name}: static baseline, then the endpoint (${rate} req/s for ${durationSeconds} s each)`);
      const baseline = await load(baselineSpec);
      const result = await load(spec);
      runs.push({ name, result, baseline });
    };
    const staticGet = { url: staticServer.url, method: 'GET' as const, paths: ['/static'] };
    await measure(
      'quote (POST /api/private-route/quote)',
      { url: stack.apiUrl, method: 'POST', paths: ['/api/private-route/quote'], body: quoteBody },
      { ...staticGet, method: 'POST', body: quoteBody },
    );
    await measure('GET /api/private-route/:routeId', { url: stack.apiUrl, method: 'GET', paths: routeIds.map((id) => `/api/private-route/${id}`) }, staticGet);
    await measure(
      'create (POST /api/private-route)',
      { url: stack.apiUrl, method: 'POST', paths: ['/api/private-route'], body: createBody },
      { ...staticGet, method: 'POST', body: createBody },
    );
    // Creates the load generator gave up on at the end may still be running in the API: let them finish.
    await new Promise((resolve) => setTimeout(resolve, 5_000));

    const figures = runs.map(({ name, result, baseline }) => ({
      name,
      p50Ms: result.latencyMs.p50,
      p99Ms: result.latencyMs.p99,
      staticP50Ms: baseline.latencyMs.p50,
      staticP99Ms: baseline.latencyMs.p99,
      ratioP50: round(result.latencyMs.p50 / Math.max(baseline.latencyMs.p50, 1), 1),
      ratioP99: round(result.latencyMs.p99 / Math.max(baseline.latencyMs.p99, 1), 1),
      achievedRate: round(result.achievedRate, 1),
      ok: result.ok,
      failed: result.non2xx + result.errors + result.timeouts,
    }));
    if (values.json) console.log(JSON.stringify({ rate, durationSeconds, connections, endpoints: figures }, null, 2));
    else {
      console.log(
        `API latency at ${rate} req/s for ${durationSeconds} s per endpoint (${connections} connections), against a static Hono app served the same way\n`,
      );
      console.log(
        table([
          ['endpoint', 'p50 ms', 'p99 ms', 'static p50', 'static p99', 'ratio p50', 'ratio p99', 'req/s done', 'ok', 'failed'],
          ...figures.map((f) => [f.name, f.p50Ms, f.p99Ms, f.staticP50Ms, f.staticP99Ms, f.ratioP50, f.ratioP99, f.achievedRate, f.ok, f.failed]),
        ]),
      );
      console.log('\nRatios divide by at least 1 ms (autocannon reports whole milliseconds).');
    }
    const broken = figures.filter((f) => f.ok === 0);
    if (broken.length > 0) throw new Error(`no successful request for: ${broken.map((f) => f.name).join(', ')}`);
  } finally {
    await staticServer.stop();
    await bench.close();
  }
});
