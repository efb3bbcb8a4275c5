/**
 * The installable client (docs/client.md, "Installing the package"): `npm run pack:client`'s tarball installed with
 * npm into a fresh project that has neither tsx nor TypeScript nor a bundler of its own, then used against the real
 * API (test/api/harness.ts: the real quote service on a real Postgres, served over HTTP)
 * (a) from a plain Node ES module: a quote, an API error as its typed class, the webhooks subpath;
 * (b) from TypeScript under `strict`: the answers are typed from the API (a wrong type is a compile error);
 * (c) from a browser: bundled by esbuild for the browser platform (no Node built-in in it) and run in Debian's
 *     chromium on a page served from the API's own origin (the API sends no CORS headers).
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { build } from 'esbuild';
import { Hono } from 'hono';
import type { Browser } from 'playwright-core';
import { freePort } from '../../devnet/ports.ts';
import { serveHttp, type HttpServer } from '../../src/observability/http.ts';
import { signWebhook } from '../../src/webhooks/signature.ts';
import { CLIENT_PACKAGE_NAME, packClient } from '../../scripts/pack-client.ts';
import { DEST, type Harness, QUOTE_BODY, SOURCE, startHarness } from '../api/harness.ts';
import { launchChromium } from '../support/chromium.ts';

const run = promisify(execFile);
const repoRoot = fileURLToPath(new URL('../..', import.meta.url));
/** The quote every consumer asks for: 10 USDC (6 decimals) from SOURCE to DEST, priced 1:1 with no fee by the harness. */
const AMOUNT_UNITS = '10000000';

/** The child processes' environment: without npm's variables of an enclosing `npm test`, and without NODE_OPTIONS (no tsx). */
const childEnv = Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^npm_/i.test(name) && name !== 'NODE_OPTIONS'));

let workDir: string;
let consumer: string;
let harness: Harness | undefined;
let server: HttpServer | undefined;
let browser: Browser | undefined;
/** The browser bundle of consumer/browser.js, served at /consumer/app.js. */
let browserBundle = '';

before(
  async () => {
    // mkdtemp creates the folder 0700: the test works in private folders, as root too.
    workDir = await mkdtemp(path.join(tmpdir(), 'client-package-'));
    const { tarball } = await packClient(path.join(workDir, 'pack'));

    consumer = path.join(workDir, 'consumer');
    await mkdir(consumer, { mode: 0o700 });
    await writeFile(path.join(consumer, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }));
    await run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', tarball], { cwd: consumer, env: childEnv, timeout: 60_000 });

    harness = await startHarness('client-package');
    const api = harness.api();
    // The API and the consumer's page on one origin: the browser needs no CORS to call the API.
    const site = new Hono();
    site.get('/consumer/', (c) => c.html('<!doctype html><meta charset="utf-8"><title>consumer</title><script type="module" src="/consumer/app.js"></script>'));
    site.get('/consumer/app.js', (c) => c.body(browserBundle, 200, { 'content-type': 'text/javascript; charset=utf-8' }));
    site.all('*', (c) => api.fetch(c.req.raw, c.env));
    server = await serveHttp(site, await freePort(), '127.0.0.1');
  },
  { timeout: 120_000 },
);

after(
  async () => {
    await browser?.close();
    await server?.stop();
    await harness?.close();
    if (workDir) await rm(workDir, { recursive: true, force: true });
  },
  { timeout: 30_000 },
);

/** Runs a consumer script of the package against the API, a delivery signed as event `eventId` in DELIVERY; its JSON output. */
async function runConsumer(script: string, eventId: string) {
  const body = JSON.stringify({ routeId: 'rt_1', status: 'COMPLETED' });
  const delivery = { secret: 'whsec_client-package', headers: signWebhook('whsec_client-package', eventId, body), body };
  const { stdout } = await run(process.execPath, [script, server!.url], {
    cwd: consumer,
    env: { ...childEnv, DELIVERY: JSON.stringify(delivery) },
    timeout: 20_000,
  });
  return JSON.parse(stdout);
}

describe('the packed client in a fresh project', { timeout: 180_000 }, () => {
  test('installs the client and hono only: no tsx, TypeScript or bundler in the consumer', { timeout: 10_000 }, async () => {
    const installed = (await readdir(path.join(consumer, 'node_modules'))).filter((name) => !name.startsWith('.'));
    assert.deepEqual(installed.sort(), ['@private-route', 'hono']);
    const manifest = JSON.parse(await readFile(path.join(consumer, 'node_modules', CLIENT_PACKAGE_NAME, 'package.json'), 'utf8'));
    const root = JSON.parse(await readFile(path.join(repoRoot, 'package.json'), 'utf8'));
    assert.equal(manifest.version, root.version);
    assert.deepEqual(manifest.dependencies, { hono: root.dependencies.hono });
    assert.deepEqual(manifest.exports['.'], {
      import: { types: './index.d.ts', default: './index.js' },
      require: { types: './index.d.cts', default: './index.cjs' },
    });
  });

  test('CommonJS: require() loads the client and its webhooks subpath, which quote and verify as the ES module does', { timeout: 30_000 }, async () => {
    await writeFile(
      path.join(consumer, 'quote.cjs'),
      `const { createPrivateRouteClient, PrivateRouteApiError } = require('${CLIENT_PACKAGE_NAME}');
const { verifyWebhook } = require('${CLIENT_PACKAGE_NAME}/webhooks');

(async () => {
  const client = createPrivateRouteClient({ baseUrl: process.argv[2] });
  const quote = await client.quote(${JSON.stringify(QUOTE_BODY)});
  let error;
  try {
    await client.quote({ ...${JSON.stringify(QUOTE_BODY)}, amount: '-1' });
  } catch (caught) {
    error = { apiError: caught instanceof PrivateRouteApiError, code: caught.code, status: caught.status };
  }
  const delivery = JSON.parse(process.env.DELIVERY);
  const webhook = verifyWebhook(delivery.secret, delivery.headers, delivery.body);
  const tracking = client.trackingUrl('rt_0123456789abcdef0123456789abcdef', 'st_x');
  console.log(JSON.stringify({ quote, error, webhook, tracking, loadedAs: typeof module }));
})().catch((error) => {
  console.error(error);
  process.exit(1);
});
`,
    );
    const result = await runConsumer('quote.cjs', 'evt_2');
    assert.equal(result.quote.amount, AMOUNT_UNITS);
    assert.match(result.quote.quoteId, /^qt_[0-9a-f]{32}$/);
    assert.deepEqual(result.error, { apiError: true, code: 'INVALID_AMOUNT', status: 400 });
    assert.equal(result.webhook.ok, true);
    assert.equal(result.webhook.eventId, 'evt_2');
    assert.equal(result.tracking, `${server!.url}/t/rt_0123456789abcdef0123456789abcdef#st_x`);
    assert.equal(result.loadedAs, 'object', 'a CommonJS module');
    // The CommonJS build is what require() resolved: the package's .cjs file, not the ES module.
    const resolved = (await run(process.execPath, ['-p', `require.resolve('${CLIENT_PACKAGE_NAME}')`], { cwd: consumer, env: childEnv, timeout: 10_000 }))
      .stdout;
    assert.match(resolved.trim(), /index\.cjs$/);
  });

  test('plain Node (no tsx) quotes against the API, gets typed errors and verifies a webhook', { timeout: 30_000 }, async () => {
    await writeFile(
      path.join(consumer, 'quote.mjs'),
      `import { createPrivateRouteClient, PrivateRouteApiError } from '${CLIENT_PACKAGE_NAME}';
import { verifyWebhook } from '${CLIENT_PACKAGE_NAME}/webhooks';

const client = createPrivateRouteClient({ baseUrl: process.argv[2] });
const quote = await client.quote(${JSON.stringify(QUOTE_BODY)});
const chains = await client.chains();
let error;
try {
  await client.quote({ ...${JSON.stringify(QUOTE_BODY)}, amount: '-1' });
} catch (caught) {
  error = { apiError: caught instanceof PrivateRouteApiError, code: caught.code, status: caught.status };
}
const delivery = JSON.parse(process.env.DELIVERY);
const webhook = verifyWebhook(delivery.secret, delivery.headers, delivery.body);
const forged = verifyWebhook('another secret', delivery.headers, delivery.body);
console.log(JSON.stringify({ quote, chains: chains.map((chain) => chain.chainId), error, webhook, forged }));
`,
    );
    const result = await runConsumer('quote.mjs', 'evt_1');
    assert.equal(result.quote.amount, AMOUNT_UNITS);
    assert.equal(result.quote.sourceChainId, SOURCE);
    assert.equal(result.quote.destChainId, DEST);
    assert.match(result.quote.quoteId, /^qt_[0-9a-f]{32}$/);
    assert.match(result.quote.quotedOutputAmount, /^\d+$/);
    assert.ok(BigInt(result.quote.quotedOutputAmount) > 0n && BigInt(result.quote.quotedOutputAmount) <= BigInt(AMOUNT_UNITS));
    assert.ok(result.chains.includes(SOURCE) && result.chains.includes(DEST));
    assert.deepEqual(result.error, { apiError: true, code: 'INVALID_AMOUNT', status: 400 });
    assert.equal(result.webhook.ok, true);
    assert.equal(result.webhook.eventId, 'evt_1');
    assert.equal(result.forged.ok, false);
  });

  test('TypeScript strict: the answers are typed from the API, a wrong type does not compile', { timeout: 60_000 }, async () => {
    const tsconfig = {
      compilerOptions: {
        strict: true,
        target: 'es2022',
        module: 'nodenext',
        moduleResolution: 'nodenext',
        lib: ['es2022', 'dom'],
        types: [],
        noEmit: true,
        // The package's declarations are checked too: they must hold on their own.
        skipLibCheck: false,
      },
      files: ['typed.ts'],
    };
    await writeFile(path.join(consumer, 'tsconfig.json'), JSON.stringify(tsconfig));
    const typed = `import { createPrivateRouteClient, PrivateRouteApiError, type Quote, type TransferStatus } from '${CLIENT_PACKAGE_NAME}';
import { verifyWebhook } from '${CLIENT_PACKAGE_NAME}/webhooks';

const client = createPrivateRouteClient({ baseUrl: 'https://route.example' });

export async function use(): Promise<string> {
  const quote: Quote = await client.quote({ sourceChainId: 1, destChainId: 3, amount: '10' });
  const output: string = quote.quotedOutputAmount;
  const eta: number = quote.etaSeconds;
  // @ts-expect-error quotedOutputAmount is a string of smallest units, not a number
  const wrong: number = quote.quotedOutputAmount;
  const transfer = await client.create({ sourceChainId: 1, destChainId: 3, amount: '10', userDestinationAddress: '0x000000000000000000000000000000000000bEEF' });
  const full = await client.get(transfer.routeId, transfer.statusToken);
  const status: TransferStatus = full.status;
  const publicView = await client.get(transfer.routeId);
  // @ts-expect-error the public view (no statusToken) has no deposit address
  const hidden: string = publicView.depositAddress;
  // @ts-expect-error a request's amount is a decimal string, never a number
  await client.quote({ sourceChainId: 1, destChainId: 3, amount: 10 });
  try {
    await client.quote({ sourceChainId: 1, destChainId: 3, amount: '-1' });
  } catch (error) {
    if (error instanceof PrivateRouteApiError) return error.code;
  }
  const check = verifyWebhook('secret', new Headers(), '{}');
  const page = await client.list({ externalId: 'order-1', limit: 10 });
  const next: string | null = page.nextCursor;
  for await (const listed of client.listAll({ status: 'COMPLETED' })) void listed.payoutTxHash;
  const { statusToken } = await client.reissueStatusToken(transfer.routeId);
  const link: string = client.trackingUrl(transfer.routeId, statusToken);
  return [output, eta, wrong, full.depositAddress, status, hidden, check.ok, page.items[0]?.externalId, next, link].join();
}
`;
    const tsc = (file: string) =>
      run(process.execPath, [path.join(repoRoot, 'node_modules/typescript/bin/tsc'), '-p', file], { cwd: consumer, timeout: 50_000 });
    await writeFile(path.join(consumer, 'typed.ts'), typed);
    // Every @ts-expect-error above must meet an error, else tsc fails (TS2578): had the types been lost (any), it would.
    await tsc('tsconfig.json');

    // A CommonJS TypeScript consumer (.cts: require) is typed by the .d.cts declarations.
    await writeFile(
      path.join(consumer, 'typed-cjs.cts'),
      `import client = require('${CLIENT_PACKAGE_NAME}');
const routes = client.createPrivateRouteClient({ baseUrl: 'https://route.example' });
export const link: string = routes.trackingUrl('rt_1');
// @ts-expect-error list takes a status of the API's, not any string
void routes.list({ status: 'DONE' });
`,
    );
    await writeFile(path.join(consumer, 'tsconfig-cjs.json'), JSON.stringify({ ...tsconfig, files: ['typed-cjs.cts'] }));
    await tsc('tsconfig-cjs.json');

    // The same file without those comments: tsc reports exactly the three mistakes.
    await writeFile(path.join(consumer, 'typed.ts'), typed.replace(/^\s*\/\/ @ts-expect-error .*\n/gm, ''));
    const failed = await tsc('tsconfig.json').then(
      () => assert.fail('tsc accepted the mistakes'),
      (error: { stdout: string }) => error.stdout,
    );
    const errors = failed.split('\n').filter((line) => /error TS\d+/.test(line));
    assert.equal(errors.length, 3, failed);
    assert.match(errors[0] ?? '', /typed\.ts\(10,9\): error TS2322: Type 'string' is not assignable to type 'number'/);
    assert.match(errors[1] ?? '', /typed\.ts\(15,\d+\): error TS2339: Property 'depositAddress' does not exist/);
    assert.match(errors[2] ?? '', /typed\.ts\(16,\d+\): error TS2322: Type 'number' is not assignable to type 'string'/);
  });

  test('a browser bundle (esbuild, platform browser) has no Node built-in and quotes from chromium', { timeout: 60_000 }, async () => {
    await writeFile(
      path.join(consumer, 'browser.js'),
      `import { createPrivateRouteClient, PrivateRouteApiError } from '${CLIENT_PACKAGE_NAME}';

globalThis.runClient = async () => {
  const client = createPrivateRouteClient({ baseUrl: location.origin });
  const quote = await client.quote(${JSON.stringify(QUOTE_BODY)});
  try {
    await client.quote({ ...${JSON.stringify(QUOTE_BODY)}, amount: '-1' });
    return { quote, code: 'no error' };
  } catch (error) {
    return { quote, code: error instanceof PrivateRouteApiError ? error.code : String(error) };
  }
};
`,
    );
    // A Node built-in would fail this build (esbuild cannot resolve node:* for the browser); the metafile says what is in it.
    const bundled = await build({
      absWorkingDir: consumer,
      entryPoints: ['browser.js'],
      bundle: true,
      platform: 'browser',
      format: 'esm',
      write: false,
      metafile: true,
      logLevel: 'silent',
    });
    const inputs = Object.keys(bundled.metafile.inputs);
    assert.ok(inputs.includes(`node_modules/${CLIENT_PACKAGE_NAME}/index.js`), inputs.join(', '));
    assert.ok(
      inputs.some((input) => input.startsWith('node_modules/hono/')),
      inputs.join(', '),
    );
    assert.deepEqual(
      inputs.filter((input) => !input.startsWith('node_modules/') && input !== 'browser.js'),
      [],
      'nothing but the consumer and its packages',
    );
    assert.deepEqual(
      Object.values(bundled.metafile.outputs).flatMap((output) => output.imports),
      [],
      'no import left: no Node built-in',
    );
    browserBundle = bundled.outputFiles[0]?.text ?? '';

    browser = await launchChromium();
    const page = await browser.newPage();
    page.setDefaultTimeout(20_000);
    const pageErrors: string[] = [];
    page.on('pageerror', (error) => pageErrors.push(error.message));
    const requested: string[] = [];
    page.on('request', (request) => requested.push(request.url()));

    const response = await page.goto(`${server!.url}/consumer/`, { waitUntil: 'load' });
    assert.equal(response?.status(), 200);
    await page.waitForFunction(() => 'runClient' in globalThis);
    const result = await page.evaluate(() =>
      (globalThis as unknown as { runClient: () => Promise<{ quote: Record<string, unknown>; code: string }> }).runClient(),
    );
    assert.equal(result.quote.amount, AMOUNT_UNITS);
    assert.match(String(result.quote.quoteId), /^qt_[0-9a-f]{32}$/);
    assert.equal(result.code, 'INVALID_AMOUNT');
    assert.deepEqual(pageErrors, []);
    const origin = new URL(server!.url).origin;
    assert.deepEqual(
      requested.filter((url) => new URL(url).origin !== origin),
      [],
    );
    assert.ok(requested.some((url) => url.endsWith('/api/private-route/quote')));
  });
});
