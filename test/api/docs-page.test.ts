/**
 * GET /docs in headless Chromium: the Scalar reference renders the five spec endpoints from our own
 * /openapi.json with its script from our own /docs/scalar.js, and the browser asks nothing of any other host (a
 * reader of the reference is not announced to a CDN, a font server or an analytics service).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser } from 'playwright-core';
import { createApi } from '../../src/api/app.ts';
import { freePort } from '../../devnet/ports.ts';
import { serveHttp, type HttpServer } from '../../src/observability/http.ts';
import { createLogger } from '../../src/logger.ts';
import type { QuoteService } from '../../src/quote/quoteService.ts';
import type { TransferService } from '../../src/transfers/transferService.ts';
import { launchChromium } from '../support/chromium.ts';

let server: HttpServer;
let browser: Browser | undefined;

before(
  async () => {
    // The document needs no service behind the routes: the page only reads /openapi.json.
    const app = createApi({ quotes: {} as QuoteService, transfers: {} as TransferService, logger: createLogger({ level: 'error' }) });
    server = await serveHttp(app, await freePort(), '127.0.0.1');
  },
  { timeout: 30_000 },
);
after(
  async () => {
    await browser?.close();
    await server?.stop();
  },
  { timeout: 30_000 },
);

describe('the API reference page (/docs)', { timeout: 120_000 }, () => {
  test('serves a strict CSP and a long-cached local script', async () => {
    const page = await fetch(`${server.url}/docs`, { signal: AbortSignal.timeout(10_000) });
    assert.equal(page.status, 200);
    const csp = page.headers.get('content-security-policy') ?? '';
    assert.match(csp, /default-src 'none'/);
    assert.match(csp, /script-src 'self' 'nonce-[A-Za-z0-9+/=]+'/);
    assert.match(csp, /connect-src 'self'/);
    const html = await page.text();
    assert.match(html, /<script src="\/docs\/scalar.js"/);
    assert.ok(!/https?:\/\//.test(html.replace(/xmlns="[^"]*"/g, '')), 'the page names no other host');
    const script = await fetch(`${server.url}/docs/scalar.js`, { signal: AbortSignal.timeout(10_000) });
    assert.equal(script.status, 200);
    assert.match(script.headers.get('content-type') ?? '', /javascript/);
    assert.match(script.headers.get('cache-control') ?? '', /max-age=\d{5,}/);
    assert.ok((await script.arrayBuffer()).byteLength > 1_000_000, 'the whole bundle');
  });

  test('renders the five endpoints in headless Chromium, loading nothing from another host', async () => {
    browser = await launchChromium();
    const context = await browser.newContext();
    const page = await context.newPage();
    page.setDefaultTimeout(30_000);
    const origin = new URL(server.url).origin;
    const requested: string[] = [];
    const blocked: string[] = [];
    page.on('request', (request) => requested.push(request.url()));
    page.on('console', (message) => {
      if (/Content Security Policy/i.test(message.text())) blocked.push(message.text());
    });
    const pageErrors: string[] = [];
    page.on('pageerror', (error) => pageErrors.push(error.message));

    const response = await page.goto(`${server.url}/docs`, { waitUntil: 'load', timeout: 30_000 });
    assert.equal(response?.status(), 200);
    // Each operation by its summary and its path, as the reference renders them.
    for (const text of ['Quote a transfer', 'Create a transfer', 'Get a transfer', 'List chains', 'List tokens on a chain']) {
      await page.getByText(text, { exact: false }).first().waitFor({ state: 'attached', timeout: 30_000 });
    }
    const body = (await page.locator('body').textContent({ timeout: 10_000 })) ?? '';
    for (const path of ['/api/private-route/quote', '/api/bridge/chains', '/api/bridge/tokens']) assert.ok(body.includes(path), `${path} is shown`);
    assert.ok(
      requested.some((url) => url.endsWith('/openapi.json')),
      'the page read our document',
    );
    // No control that would send the reader's question or our document to a third party (Scalar's "Ask AI" agent).
    assert.doesNotMatch(body, /ask ai/i, 'the page offers an AI chat');
    assert.equal(await page.getByRole('button', { name: /ask ai/i }).count(), 0);
    // The error table's code and HTTP columns read on one line each (Scalar's fixed layout split "HTTP" and "400").
    await page.getByText('Error codes').first().scrollIntoViewIfNeeded({ timeout: 10_000 });
    // A string, not a function: tsx's name helpers (__name) do not exist in the page.
    const lines = (await page.evaluate(`(() => {
      const table = [...document.querySelectorAll('table')].find((t) => t.querySelector('th')?.textContent?.trim() === 'code');
      if (!table) return null;
      return [...table.querySelectorAll('tr')].flatMap((row) => [...row.children].slice(0, 2).map((cell) => {
        const range = document.createRange();
        range.selectNodeContents(cell);
        const tops = new Set([...range.getClientRects()].filter((r) => r.width > 0).map((r) => Math.round(r.top)));
        return { text: cell.textContent.trim(), lines: tops.size };
      }));
    })()`)) as { text: string; lines: number }[] | null;
    assert.ok(lines && lines.length > 10, 'the error table is on the page');
    assert.deepEqual(
      lines.filter((cell) => cell.lines !== 1),
      [],
      'every code and HTTP status cell reads on one line',
    );
    const elsewhere = requested.filter((url) => !url.startsWith(origin) && !url.startsWith('data:') && !url.startsWith('blob:'));
    assert.deepEqual(elsewhere, [], 'the browser asked another host');
    assert.deepEqual(blocked, [], 'the page tried something its CSP refuses');
    assert.deepEqual(pageErrors, [], 'the page threw');
  });
});
