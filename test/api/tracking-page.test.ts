/**
 * The tracking page (/t/<routeId>#<statusToken>) in headless Chromium, for what a route on the local stack cannot
 * show: explorer links (the local chains have none), a hostile answer, and amounts of an 18-decimal token to round. The
 * transfer service behind the API is a stand-in that answers fixed full views; test/e2e/transfer.test.ts follows a real
 * route through every status, test/e2e/stray-tokens.test.ts a real refund through GET.
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

const TOKEN = `st_${'k'.repeat(43)}`;
const hash = (digit: string) => `0x${digit.repeat(64)}`;
const IN_FLIGHT = `rt_${'a'.repeat(32)}`;
const FAILED = `rt_${'f'.repeat(32)}`;
const REFUNDED = `rt_${'e'.repeat(32)}`;
/** 0.000592123456789012 WETH: what arrived of 0.001 WETH, and went back. */
const SHORT_DEPOSIT = '592123456789012';
/** An error text that would load an image from another host if the page wrote it as HTML. */
const HOSTILE_ERROR = '<img src="https://attacker.example/pixel.png"> bridge refused the order';

const view = (routeId: string, status: string, history: string[]) => ({
  routeId,
  status,
  symbol: 'USDC',
  destSymbol: 'USDC',
  sourceToken: { chainId: 8453, address: '0x2222222222222222222222222222222222222222', symbol: 'USDC', decimals: 6 },
  destToken: { chainId: 42161, address: '0x2222222222222222222222222222222222222222', symbol: 'USDC', decimals: 6 },
  sourceChainId: 8453,
  destChainId: 42161,
  hubChainId: 1,
  amount: '1234500000',
  quotedOutputAmount: '1230000000',
  feeAmount: '4000000',
  etaSeconds: 600,
  minAnonymitySet: 5,
  depositAddress: '0x1111111111111111111111111111111111111111',
  depositTokenAddress: '0x2222222222222222222222222222222222222222',
  userDestinationAddress: '0x3333333333333333333333333333333333333333',
  depositDeadline: '2030-01-01T01:00:00.000Z',
  depositTxHash: hash('1'),
  bridgeInTxHash: hash('2'),
  payoutTxHash: null,
  explorerLinks: {
    depositTx: `https://basescan.org/tx/${hash('1')}`,
    // Never served by the API (only plain https explorers are), but the page must not make a link of it either.
    bridgeInTx: 'javascript:alert(1)',
    payoutTx: null,
  },
  statusHistory: history.map((s, i) => ({ status: s, at: new Date(Date.UTC(2030, 0, 1, 0, i)).toISOString(), txHash: null, chainId: null })),
  error: status === 'FAILED' ? HOSTILE_ERROR : null,
  needsAttention: false,
  privacy: null,
  createdAt: '2030-01-01T00:00:00.000Z',
  updatedAt: '2030-01-01T00:05:00.000Z',
  completedAt: null,
});

/** A WETH route whose deposit came short: FAILED DEPOSIT_TOO_SMALL, its deposit refunded. */
const refundedView = () => ({
  ...view(REFUNDED, 'FAILED', ['AWAITING_DEPOSIT', 'FAILED']),
  symbol: 'WETH',
  destSymbol: 'WETH',
  sourceToken: { chainId: 8453, address: '0x4444444444444444444444444444444444444444', symbol: 'WETH', decimals: 18 },
  destToken: { chainId: 42161, address: '0x4444444444444444444444444444444444444444', symbol: 'WETH', decimals: 18 },
  amount: '1000000000000000',
  quotedOutputAmount: '987654321098765',
  feeAmount: '12345678901235',
  bridgeInTxHash: null,
  explorerLinks: { depositTx: `https://basescan.org/tx/${hash('1')}`, bridgeInTx: null, payoutTx: null },
  error: `underpaid: received ${SHORT_DEPOSIT} of 1000000000000000 by the deadline; refunded`,
  failureCode: 'DEPOSIT_TOO_SMALL',
  depositedAmount: SHORT_DEPOSIT,
  refunds: [
    {
      status: 'CONFIRMED',
      amount: SHORT_DEPOSIT,
      token: '0x4444444444444444444444444444444444444444',
      symbol: 'WETH',
      chainId: 8453,
      txHash: hash('9'),
      explorerUrl: `https://basescan.org/tx/${hash('9')}`,
    },
  ],
});

const VIEWS = new Map<string, object & { status: string }>([
  [IN_FLIGHT, view(IN_FLIGHT, 'SHIELDED', ['AWAITING_DEPOSIT', 'BRIDGING_IN', 'RECEIVED_ON_HUB', 'SHIELDED'])],
  [FAILED, view(FAILED, 'FAILED', ['AWAITING_DEPOSIT', 'BRIDGING_IN', 'FAILED'])],
  [REFUNDED, refundedView()],
]);

const transfers = {
  async read(routeId: string, token: string | undefined) {
    const transfer = VIEWS.get(routeId);
    if (!transfer) return null;
    if (token === undefined) return { access: 'public', transfer: { routeId, status: transfer.status, error: null, needsAttention: false }, seq: 0 };
    return token === TOKEN ? { access: 'full', transfer } : { access: 'denied' };
  },
} as unknown as TransferService;

const quotes = {
  chains: async () => [
    { chainId: 8453, name: 'base', displayName: 'Base', explorerUrl: 'https://basescan.org', nativeCurrency: null },
    { chainId: 42161, name: 'arbitrum', displayName: 'Arbitrum One', explorerUrl: 'https://arbiscan.io', nativeCurrency: null },
  ],
  tokens: async (chainId: number) => [
    { chainId, address: '0x2222222222222222222222222222222222222222', symbol: 'USDC', name: 'USD Coin', decimals: 6 },
    { chainId, address: '0x4444444444444444444444444444444444444444', symbol: 'WETH', name: 'Wrapped Ether', decimals: 18 },
  ],
} as unknown as QuoteService;

let server: HttpServer;
let browser: Browser | undefined;

before(
  async () => {
    server = await serveHttp(createApi({ quotes, transfers, logger: createLogger({ level: 'error' }) }), await freePort(), '127.0.0.1');
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

describe('the tracking page with explorer links and a hostile answer', { timeout: 120_000 }, () => {
  test('links only https explorers, in a new tab without a referrer; writes answers as text; asks no other host', async () => {
    browser = await launchChromium();
    const page = await browser.newPage();
    page.setDefaultTimeout(30_000);
    const origin = new URL(server.url).origin;
    const requested: string[] = [];
    page.on('request', (request) => requested.push(request.url()));
    const pageErrors: string[] = [];
    page.on('pageerror', (error) => pageErrors.push(error.message));

    await page.goto(`${server.url}/t/${IN_FLIGHT}#${TOKEN}`, { waitUntil: 'load', timeout: 30_000 });
    await page.locator('#status[data-status="SHIELDED"]').waitFor({ timeout: 30_000 });
    const links = await page.locator('#transaction-list a').all();
    assert.equal(links.length, 1, 'one link: the https explorer page of the deposit');
    assert.equal(await links[0]!.getAttribute('href'), `https://basescan.org/tx/${hash('1')}`);
    assert.equal(await links[0]!.getAttribute('target'), '_blank');
    assert.equal(await links[0]!.getAttribute('rel'), 'noreferrer noopener');
    assert.ok(((await page.locator('#transaction-list').textContent()) ?? '').includes(hash('2')), 'the other hash is shown as text');
    // Amounts from smallest units with the token's decimals; chains by name.
    const amounts = (await page.locator('#amount-details').textContent()) ?? '';
    assert.ok(amounts.includes('1,234.5 USDC on Base'), amounts);
    assert.ok(amounts.includes('1,230 USDC on Arbitrum One'), amounts);
    assert.equal(await page.locator('#steps [aria-current="step"]').getAttribute('data-status'), 'SHIELDED');
    assert.equal(await page.locator('#steps li.upcoming').count(), 3, 'UNSHIELD_SENT, BRIDGING_OUT and COMPLETED are still to come');

    await page.goto(`${server.url}/t/${FAILED}#${TOKEN}`, { waitUntil: 'load', timeout: 30_000 });
    await page.locator('#status[data-status="FAILED"]').waitFor({ timeout: 30_000 });
    assert.equal(await page.locator('#failure-text').textContent(), HOSTILE_ERROR, 'the error is shown as it is, as text');
    assert.equal(await page.locator('#failure img').count(), 0);
    assert.equal(await page.locator('#steps li.upcoming').count(), 0, 'nothing is still to come after FAILED');

    const elsewhere = requested.filter((url) => new URL(url).origin !== origin && !url.startsWith('data:'));
    assert.deepEqual(elsewhere, [], 'the browser asked another host');
    assert.deepEqual(pageErrors, [], 'the page threw');
  });

  test('a refunded short deposit: the failureCode in words, what arrived and went back rounded, exact in the title and copied', async () => {
    browser ??= await launchChromium();
    const context = await browser.newContext({ permissions: ['clipboard-read', 'clipboard-write'] });
    const page = await context.newPage();
    page.setDefaultTimeout(30_000);
    const pageErrors: string[] = [];
    page.on('pageerror', (error) => pageErrors.push(error.message));

    await page.goto(`${server.url}/t/${REFUNDED}#${TOKEN}`, { waitUntil: 'load', timeout: 30_000 });
    await page.locator('#status[data-status="FAILED"]').waitFor({ timeout: 30_000 });
    assert.equal(await page.locator('#failure-reason').getAttribute('data-code'), 'DEPOSIT_TOO_SMALL');
    assert.equal(await page.locator('#failure-reason').textContent(), 'Less than the amount arrived before the deadline.');

    // The refund line: six significant digits, never 18 decimals; the exact amount in the title; its explorer link.
    const refund = page.locator('#refund-list li');
    assert.equal(await refund.count(), 1);
    const refundText = (await refund.textContent()) ?? '';
    assert.match(refundText, /^Sent back ≈ 0\.000592123 WETH copy on Base: 0x9{64}/, refundText);
    assert.equal(await refund.locator('.rounded').textContent(), '≈ 0.000592123 WETH');
    assert.equal(await refund.locator('.rounded').getAttribute('title'), '0.000592123456789012 WETH');
    assert.equal(await refund.locator('a').getAttribute('href'), `https://basescan.org/tx/${hash('9')}`);
    assert.equal(await refund.locator('a').getAttribute('rel'), 'noreferrer noopener');

    // What arrived, and the other amounts, rounded the same way; a sender's "send exactly" keeps every digit.
    const amounts = (await page.locator('#amount-details').textContent()) ?? '';
    assert.ok(amounts.includes('Deposit received≈ 0.000592123 WETH copy'), amounts);
    assert.ok(amounts.includes('0.001 WETH on Base'), amounts);
    assert.ok(amounts.includes('≈ 0.000987654 WETH'), amounts);
    assert.ok(((await page.locator('#deposit-details').textContent()) ?? '').includes('0.001 WETH'));

    await refund.locator('button.copy').click();
    await page.locator('#refund-list button.copy', { hasText: 'copied' }).waitFor({ timeout: 10_000 });
    assert.equal(await page.evaluate(() => navigator.clipboard.readText()), '0.000592123456789012 WETH');
    assert.deepEqual(pageErrors, [], 'the page threw');
    await context.close();
  });
});
