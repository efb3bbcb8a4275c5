/**
 * A web page on another origin calls the API from Debian's chromium, with CORS per API key (src/api/cors.ts), over
 * the real local stack (Temporal, Postgres, anvil chains, the Relay emulator): with a key that allows the page's
 * origin it quotes, creates and follows a transfer (its event stream) to COMPLETED while the test funds the deposit
 * address from Node; without a key, with a key for other origins, or from an origin its key does not list, the
 * browser refuses the answer (fetch rejects with a TypeError). The tracking page loads in an <iframe> of an allowed
 * origin and is refused in any other (frame-ancestors). And routectl apikey origins: set, refused, cleared, audited.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { type Address, parseUnits } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { freePort } from '../../devnet/ports.ts';
import { launchChromium } from '../support/chromium.ts';
import { startTestStack, type TestStack } from '../support/testStack.ts';

/** The dApp: a page whose script calls the API with fetch, as a browser integration would (no server of its own). */
const DAPP_SCRIPT = `
window.dapp = {
  async call(apiUrl, path, { method = 'GET', key, body, headers = {} } = {}) {
    try {
      const response = await fetch(apiUrl + path, {
        method,
        headers: { ...(key ? { 'X-Api-Key': key } : {}), ...(body ? { 'Content-Type': 'application/json' } : {}), ...headers },
        body: body ? JSON.stringify(body) : undefined,
      });
      return { status: response.status, body: await response.json(), requestId: response.headers.get('X-Request-Id') };
    } catch (error) {
      return { rejected: error.name + ': ' + error.message };
    }
  },
  // Follows the transfer's event stream (fetch streaming: EventSource cannot send X-Api-Key) to its end.
  async follow(apiUrl, key, routeId, statusToken) {
    const response = await fetch(apiUrl + '/api/private-route/' + routeId + '/events', {
      headers: { 'X-Api-Key': key, Authorization: 'Bearer ' + statusToken },
    });
    const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
    const seen = [];
    let buffer = '';
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return { seen, last: null };
      buffer += value;
      for (let end = buffer.indexOf('\\n\\n'); end >= 0; end = buffer.indexOf('\\n\\n')) {
        const message = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const data = message.split('\\n').filter((line) => line.startsWith('data:')).map((line) => line.slice(5).trim()).join('\\n');
        if (!data) continue;
        const transfer = JSON.parse(data);
        if (seen.at(-1) !== transfer.status) seen.push(transfer.status);
        if (transfer.status === 'COMPLETED' || transfer.status === 'FAILED') {
          await reader.cancel();
          return { seen, last: transfer };
        }
      }
    }
  },
};`;

/** The browser example of the docs (docs/client.md), served as a dApp would serve it. */
const EXAMPLE_PAGE = readFileSync(new URL('../../docs/examples/browser-transfer.html', import.meta.url), 'utf8');

const DAPP_PAGE =
  '<!doctype html><html><head><meta charset="utf-8"><title>dApp</title><script src="/dapp.js"></script></head><body><h1>dApp</h1></body></html>';

interface PageAnswer<T = Record<string, unknown>> {
  status?: number;
  body?: { success: boolean; data?: T; error?: string; code?: string };
  requestId?: string | null;
  rejected?: string;
}

let stack: TestStack;
let browser: Browser;
let dappServer: Server;
/** The dApp's origin, which its key allows, and the same server under another origin, which no key allows. */
let allowedOrigin: string;
let otherOrigin: string;
let dappKey: string;
let walletKey: string;

function serveDapp(port: number): Promise<Server> {
  const server = createServer((request, response) => {
    if (request.url === '/dapp.js') response.writeHead(200, { 'content-type': 'text/javascript' }).end(DAPP_SCRIPT);
    else if (request.url === '/example.html') response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(EXAMPLE_PAGE);
    else response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(DAPP_PAGE);
  });
  return new Promise((resolve) => server.listen(port, '127.0.0.1', () => resolve(server)));
}

/** The key routectl prints (once). */
function printedKey(stdout: string): string {
  const key = /prk_[A-Za-z0-9_-]{43}/.exec(stdout)?.[0];
  assert.ok(key, `routectl printed a key: ${stdout}`);
  return key;
}

async function openDapp(origin: string): Promise<Page> {
  const page = await (await browser.newContext()).newPage();
  await page.goto(`${origin}/`, { waitUntil: 'load', timeout: 30_000 });
  return page;
}

const call = <T = Record<string, unknown>>(
  page: Page,
  path: string,
  options: { method?: string; key?: string; body?: unknown; headers?: Record<string, string> } = {},
) =>
  page.evaluate(([apiUrl, p, o]) => (window as unknown as { dapp: { call: (...args: unknown[]) => Promise<unknown> } }).dapp.call(apiUrl, p, o), [
    stack.apiUrl,
    path,
    options,
  ] as const) as Promise<PageAnswer<T>>;

before(
  async () => {
    stack = await startTestStack();
    const port = await freePort();
    // One server, two origins: a browser tells localhost and 127.0.0.1 apart.
    allowedOrigin = `http://localhost:${port}`;
    otherOrigin = `http://127.0.0.1:${port}`;
    dappServer = await serveDapp(port);
    const dapp = await stack.routectl('apikey', 'create', '--name', 'dapp', '--origin', allowedOrigin);
    assert.equal(dapp.code, 0, dapp.stderr);
    dappKey = printedKey(dapp.stdout);
    const wallet = await stack.routectl('apikey', 'create', '--name', 'wallet', '--origin', 'https://wallet.example');
    assert.equal(wallet.code, 0, wallet.stderr);
    walletKey = printedKey(wallet.stdout);
    browser = await launchChromium();
  },
  { timeout: 300_000 },
);

after(
  async () => {
    await browser?.close();
    await new Promise((resolve) => (dappServer ? dappServer.close(resolve) : resolve(undefined)));
    await stack?.close();
  },
  { timeout: 120_000 },
);

const chainId = (role: string) => stack.manifest.chains.find((c) => c.role === role)!.chainId;

describe('a web page on another origin', () => {
  test('with a key that allows its origin: quotes, creates and follows a transfer to COMPLETED', { timeout: 300_000 }, async () => {
    const page = await openDapp(allowedOrigin);
    const recipient: Address = privateKeyToAccount(generatePrivateKey()).address;
    const request = { sourceChainId: chainId('source'), destChainId: chainId('destination'), amount: '25' };

    const quote = await call<{ quoteId: string; quotedOutputAmount: string }>(page, '/api/private-route/quote', {
      method: 'POST',
      key: dappKey,
      body: request,
    });
    assert.equal(quote.rejected, undefined);
    assert.equal(quote.status, 200, JSON.stringify(quote.body));
    // An exposed header: the page can quote it to support.
    assert.match(quote.requestId ?? '', /\S/);

    const created = await call<{ routeId: string; statusToken: string; depositAddress: Address; amount: string; quotedOutputAmount: string }>(
      page,
      '/api/private-route',
      { method: 'POST', key: dappKey, body: { ...request, userDestinationAddress: recipient, quoteId: quote.body!.data!.quoteId } },
    );
    assert.equal(created.status, 200, JSON.stringify(created.body));
    const transfer = created.body!.data!;

    const following = page.evaluate(
      ([apiUrl, key, routeId, token]) =>
        (window as unknown as { dapp: { follow: (...a: string[]) => Promise<{ seen: string[]; last: Record<string, string> | null }> } }).dapp.follow(
          apiUrl,
          key,
          routeId,
          token,
        ),
      [stack.apiUrl, dappKey, transfer.routeId, transfer.statusToken] as const,
    );
    await stack.fund(transfer.depositAddress, 'USDC', BigInt(transfer.amount));
    const followed = await following;
    assert.equal(followed.last?.status, 'COMPLETED', JSON.stringify(followed));
    assert.equal(followed.seen[0], 'AWAITING_DEPOSIT');
    // The page read the full view (its statusToken) and the recipient was paid exactly the quote.
    assert.equal(followed.last?.quotedOutputAmount, transfer.quotedOutputAmount);
    assert.equal(await stack.balanceOf('destination', 'USDC', recipient), BigInt(transfer.quotedOutputAmount));

    // A GET with the statusToken in X-Status-Token (a header the preflight allows): the full view, read cross-origin.
    const read = await call<{ status: string; payoutTxHash: string | null }>(page, `/api/private-route/${transfer.routeId}`, {
      key: dappKey,
      headers: { 'X-Status-Token': transfer.statusToken },
    });
    assert.equal(read.body?.data?.status, 'COMPLETED', JSON.stringify(read));
    assert.match(read.body?.data?.payoutTxHash ?? '', /^0x[0-9a-f]{64}$/);
    await page.context().close();
  });

  test("the docs' example page (docs/examples/browser-transfer.html): its form quotes, creates and follows a transfer to COMPLETED", {
    timeout: 300_000,
  }, async () => {
    const page = await (await browser.newContext()).newPage();
    await page.goto(`${allowedOrigin}/example.html`, { waitUntil: 'load', timeout: 30_000 });
    const recipient: Address = privateKeyToAccount(generatePrivateKey()).address;
    for (const [name, value] of [
      ['apiUrl', stack.apiUrl],
      ['apiKey', dappKey],
      ['sourceChainId', String(chainId('source'))],
      ['destChainId', String(chainId('destination'))],
      ['amount', '12.5'],
      ['recipient', recipient],
    ]) {
      await page.fill(`input[name="${name}"]`, value!);
    }
    await page.click('#quote');
    await page.waitForFunction(() => /gets exactly/.test(document.querySelector('#quoted')?.textContent ?? ''), undefined, { timeout: 30_000 });
    await page.click('#create');
    await page.waitForFunction(() => /Send exactly/.test(document.querySelector('#deposit')?.textContent ?? ''), undefined, { timeout: 30_000 });
    const deposit = (await page.textContent('#deposit'))!;
    const depositAddress = /\n(0x[0-9a-fA-F]{40})\n/.exec(deposit)?.[1] as Address;
    const units = /\((\d+) smallest units/.exec(deposit)?.[1];
    assert.ok(depositAddress && units, `the page names the deposit: ${deposit}`);
    assert.equal(units, '12500000');
    const tracking = await page.getAttribute('#tracking', 'href');
    assert.match(tracking ?? '', new RegExp(`^${stack.apiUrl}/t/rt_[0-9a-f]{32}#st_`));
    await stack.fund(depositAddress, 'USDC', BigInt(units));
    await page.waitForFunction(() => /COMPLETED|FAILED/.test(document.querySelector('#status')?.textContent ?? ''), undefined, { timeout: 240_000 });
    assert.equal(await page.textContent('#status'), 'COMPLETED');
    const quoted = /exactly ([\d.]+) USDC/.exec((await page.textContent('#quoted'))!)?.[1];
    assert.equal(await stack.balanceOf('destination', 'USDC', recipient), parseUnits(quoted!, 6));
    await page.context().close();
  });

  test('without a key, with a key for other origins, or from an origin its key does not list: refused by CORS', { timeout: 120_000 }, async () => {
    const request = { sourceChainId: chainId('source'), destChainId: chainId('destination'), amount: '25' };
    const allowed = await openDapp(allowedOrigin);
    const other = await openDapp(otherOrigin);
    const refusals: Array<[string, Promise<PageAnswer>]> = [
      ['keyless POST', call(allowed, '/api/private-route/quote', { method: 'POST', body: request })],
      ['keyless GET', call(allowed, '/api/bridge/chains')],
      ["another origin's key", call(allowed, '/api/private-route/quote', { method: 'POST', key: walletKey, body: request })],
      ['an origin the key does not list', call(other, '/api/private-route/quote', { method: 'POST', key: dappKey, body: request })],
      ['an origin the key does not list, GET', call(other, '/api/bridge/chains', { key: dappKey })],
    ];
    for (const [what, answer] of refusals) assert.match((await answer).rejected ?? `answered ${JSON.stringify(await answer)}`, /^TypeError: /, what);
    // The same key from its own origin is answered, a refusal included (a page can read why it failed).
    const webhook = await call(allowed, '/api/private-route', {
      method: 'POST',
      key: dappKey,
      body: { ...request, userDestinationAddress: '0x000000000000000000000000000000000000bEEF', webhookUrl: 'https://hooks.example/x' },
    });
    assert.equal(webhook.status, 403, JSON.stringify(webhook));
    assert.equal(webhook.body?.code, 'BROWSER_KEY_NOT_ALLOWED');
    await allowed.context().close();
    await other.context().close();
  });

  test('the tracking page loads in an <iframe> of an origin its key allows, and is refused in any other', { timeout: 120_000 }, async () => {
    const created = await stack.api<{ routeId: string; statusToken: string }>(
      'POST',
      '/api/private-route',
      {
        sourceChainId: chainId('source'),
        destChainId: chainId('destination'),
        amount: '25',
        userDestinationAddress: '0x000000000000000000000000000000000000bEEF',
      },
      { 'X-Api-Key': dappKey },
    );
    assert.equal(created.status, 200, JSON.stringify(created.body));
    const { routeId, statusToken } = created.body.data!;
    const tracking = `${stack.apiUrl}/t/${routeId}#${statusToken}`;
    const csp = (await fetch(tracking)).headers.get('content-security-policy') ?? '';
    assert.match(csp, new RegExp(`frame-ancestors ${allowedOrigin}$`));

    /** Frames the tracking page in a page of `origin`; what the frame shows: the status line, or null when refused. */
    const framedStatus = async (origin: string) => {
      const page = await openDapp(origin);
      const violations: string[] = [];
      page.on('console', (message) => violations.push(message.text()));
      await page.evaluate((src) => {
        const frame = document.createElement('iframe');
        frame.src = src;
        document.body.append(frame);
        return new Promise((resolve) => frame.addEventListener('load', resolve, { once: true }));
      }, tracking);
      const frame = page.frames().find((f) => f !== page.mainFrame());
      assert.ok(frame, 'the iframe is there');
      // The page's script fills #status; a refused frame holds Chromium's error page, which has none.
      const status = await frame
        .locator('#status[data-status]')
        .getAttribute('data-status', { timeout: 10_000 })
        .catch(() => null);
      await page.context().close();
      return { status, violations };
    };

    const inAllowed = await framedStatus(allowedOrigin);
    assert.equal(inAllowed.status, 'AWAITING_DEPOSIT', inAllowed.violations.join('\n'));
    const inOther = await framedStatus(otherOrigin);
    assert.equal(inOther.status, null);
    assert.ok(
      inOther.violations.some((line) => /frame-ancestors/.test(line)),
      `the browser says why it refused the frame: ${inOther.violations.join('\n')}`,
    );

    // A keyless transfer's page may be framed by no page.
    const keyless = await stack.api<{ routeId: string }>('POST', '/api/private-route', {
      sourceChainId: chainId('source'),
      destChainId: chainId('destination'),
      amount: '25',
      userDestinationAddress: '0x000000000000000000000000000000000000bEEF',
    });
    const keylessCsp = (await fetch(`${stack.apiUrl}/t/${keyless.body.data!.routeId}`)).headers.get('content-security-policy') ?? '';
    assert.match(keylessCsp, /frame-ancestors 'none'$/);
  });
});

describe('routectl apikey origins', () => {
  test("sets, validates, clears and audits a key's origins; apikey list shows them", { timeout: 120_000 }, async () => {
    const originsOf = async (name: string) => {
      const listed = await stack.routectl('apikey', 'list', '--json');
      assert.equal(listed.code, 0, listed.stderr);
      return (JSON.parse(listed.stdout) as Array<{ name: string; allowedOrigins: string[] }>).find((k) => k.name === name)?.allowedOrigins;
    };
    assert.deepEqual(await originsOf('dapp'), [allowedOrigin]);
    assert.deepEqual(await originsOf('wallet'), ['https://wallet.example']);

    const noReason = await stack.routectl('apikey', 'origins', '--name', 'wallet', '--origin', 'https://pay.wallet.example');
    assert.equal(noReason.code, 2, noReason.stdout);
    assert.match(noReason.stderr, /--reason/);
    const plainHttp = await stack.routectl('apikey', 'origins', '--name', 'wallet', '--origin', 'http://pay.wallet.example', '--reason', 'a typo');
    assert.equal(plainHttp.code, 4, plainHttp.stdout);
    assert.match(plainHttp.stderr, /http only for localhost/);
    const withPath = await stack.routectl('apikey', 'origins', '--name', 'wallet', '--origin', 'https://wallet.example/pay', '--reason', 'a typo');
    assert.equal(withPath.code, 4);
    assert.match(withPath.stderr, /write "https:\/\/wallet\.example"/);
    const both = await stack.routectl('apikey', 'origins', '--name', 'wallet', '--clear', '--origin', 'https://wallet.example', '--reason', 'r');
    assert.equal(both.code, 2);
    const unknown = await stack.routectl('apikey', 'origins', '--name', 'nobody', '--origin', 'https://wallet.example', '--reason', 'r');
    assert.equal(unknown.code, 4);
    assert.deepEqual(await originsOf('wallet'), ['https://wallet.example'], 'a refused change changes nothing');
    const vouchingBrowserKey = await stack.routectl('apikey', 'create', '--name', 'both', '--vouch-users', '--origin', 'https://both.example');
    assert.equal(vouchingBrowserKey.code, 2);
    assert.match(vouchingBrowserKey.stderr, /public, so it cannot vouch/);

    const set = await stack.routectl(
      'apikey',
      'origins',
      '--name',
      'wallet',
      '--origin',
      'https://wallet.example',
      '--origin',
      'https://pay.wallet.example',
      '--reason',
      'the wallet adds its payment page',
      '--operator',
      'alice@example.com',
    );
    assert.equal(set.code, 0, set.stderr);
    assert.deepEqual(await originsOf('wallet'), ['https://wallet.example', 'https://pay.wallet.example']);
    const table = await stack.routectl('apikey', 'list');
    assert.match(table.stdout, /ORIGINS/);
    assert.match(table.stdout, /wallet .*https:\/\/wallet\.example https:\/\/pay\.wallet\.example/);
    const cleared = await stack.routectl(
      'apikey',
      'origins',
      '--name',
      'wallet',
      '--clear',
      '--reason',
      'the wallet calls from its server',
      '--operator',
      'alice@example.com',
    );
    // A key pages carried is public for ever: clearing its origins would open its transfers to whoever copied it.
    assert.equal(cleared.code, 4, cleared.stdout);
    assert.match(cleared.stderr, /it stays a browser key.*revoke it/);
    assert.deepEqual(await originsOf('wallet'), ['https://wallet.example', 'https://pay.wallet.example']);

    const audit = await stack.routectl('actions', '--operator', 'alice@example.com', '--json');
    assert.equal(audit.code, 0, audit.stderr);
    const rows = (JSON.parse(audit.stdout) as Array<{ action: string; outcome: string; reason: string; detail: string }>).reverse();
    assert.deepEqual(
      rows.map((r) => [r.action, r.outcome, r.reason, r.detail]),
      [
        [
          'apikey-origins',
          'done',
          'the wallet adds its payment page',
          'origins before: https://wallet.example; after: https://wallet.example https://pay.wallet.example',
        ],
        ['apikey-origins', 'refused', 'the wallet calls from its server', rows.at(-1)!.detail],
      ],
    );
  });
});
