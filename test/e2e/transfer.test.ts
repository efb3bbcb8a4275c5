import assert from 'node:assert/strict';
import { mkdir, readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { Client, Connection } from '@temporalio/client';
import proto from '@temporalio/proto';
import { eq } from 'drizzle-orm';
import type { Browser } from 'playwright-core';
import { encodeFunctionData, erc20Abi, formatUnits, serializeTransaction, type Address, type Hex } from 'viem';
import { english, generateMnemonic, generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { TRACKING_PAGE_CSP } from '../../src/api/routes/trackingPage.ts';
import { apiKeys, ledgerEntries, transfers, txIntents } from '../../src/db/schema.ts';
import { keylessWebhookSecret, partnerWebhookSecret } from '../../src/webhooks/signingSecrets.ts';
import { DEVNET_ACCOUNTS } from '../../devnet/chains.ts';
import { SIGNER_AUDIT_LOG_FILE } from '../../devnet/stack.ts';
import { verifyAuditLines } from '../../src/signer/policy/auditLog.ts';
import { createRemoteSigner, SignerRefusedError } from '../../src/signer/remote.ts';
import { createLogger } from '../../src/logger.ts';
import { allText, databaseRows, findLeaks, routePrivateKeys, secretsOfDataDir, secretsOfEnv, type KnownSecret } from '../support/secrets.ts';
import { startRecordingForwarder, type RecordingForwarder } from '../support/recordingForwarder.ts';
import { startTestStack, waitFor, type TestStack } from '../support/testStack.ts';
import { launchChromium } from '../support/chromium.ts';

let stack: TestStack;

/** Known secrets the stack runs with; the last test checks that none of them is ever written anywhere. */
const SIGNER_MNEMONIC = generateMnemonic(english);
const RELAY_API_KEY = `relay-key-${generatePrivateKey().slice(2, 34)}`;
/** Every line the stack logged (API, worker, the Temporal SDK's own lines, emulators), at every level. */
const logLines: string[] = [];
/** Every answer the API gave this file's requests, and what routectl printed. */
const answers: string[] = [];

before(async () => {
  const echo = process.env.TEST_LOG_LEVEL === 'debug' ? /./ : /"level":"(warn|error)"/;
  stack = await startTestStack({
    env: { SIGNER_MNEMONIC, RELAY_API_KEY },
    logger: createLogger({
      level: 'debug',
      write: (line) => {
        logLines.push(line);
        if (echo.test(line)) process.stdout.write(`${line}\n`);
      },
    }),
  });
  const { api, routectl } = stack;
  stack.api = async (...args: Parameters<TestStack['api']>) => {
    const answer = await api(...args);
    answers.push(`${args[0]} ${args[1]} → ${answer.status} ${JSON.stringify(answer.body)}`);
    return answer as never;
  };
  stack.routectl = async (...args) => {
    const result = await routectl(...args);
    answers.push(`routectl ${args.join(' ')} → ${result.code} ${result.stdout} ${result.stderr}`);
    return result;
  };
});
after(async () => stack?.close());

interface Transfer {
  routeId: string;
  status: string;
  error: string | null;
  depositAddress: Address;
  hubAccount: Address;
  amount: string;
  quotedOutputAmount: string;
  feeAmount: string;
  payoutTxHash: string | null;
  depositTxHash: string | null;
  bridgeInTxHash: string | null;
  sourceChainId: number;
  destChainId: number;
  statusHistory: { status: string; at: string; txHash: string | null; chainId: number | null }[];
}

/** The USDC → WETH transfer, which failed on its way: the encrypted-history test reads its history. */
let withFailures: { created: Transfer; recipient: Address; refundAddress: Address } | undefined;

const chainId = (role: string) => stack.manifest.chains.find((c) => c.role === role)!.chainId;
const freshRecipient = () => privateKeyToAccount(generatePrivateKey()).address;

async function create(amount: string, destTokenSymbol: string, recipient: Address, refundAddress?: Address): Promise<Transfer> {
  const { status, body } = await stack.api<Transfer>('POST', '/api/private-route', {
    sourceChainId: chainId('source'),
    destChainId: chainId('destination'),
    amount,
    destTokenSymbol,
    userDestinationAddress: recipient,
    refundAddress,
  });
  assert.equal(status, 200, JSON.stringify(body));
  return body.data!;
}

/** Polls GET like a client, recording every status it sees, until the transfer is terminal. */
async function pollUntilDone(routeId: string): Promise<{ transfer: Transfer; seen: string[] }> {
  const seen: string[] = [];
  const transfer = await waitFor(
    `${routeId} to finish`,
    async () => {
      const { body } = await stack.api<Transfer>('GET', `/api/private-route/${routeId}`);
      const t = body.data!;
      if (seen.at(-1) !== t.status) seen.push(t.status);
      return t.status === 'COMPLETED' || t.status === 'FAILED' ? t : undefined;
    },
    90_000,
    50,
  );
  return { transfer, seen };
}

const ORDER = ['AWAITING_DEPOSIT', 'BRIDGING_IN', 'RECEIVED_ON_HUB', 'SHIELDED', 'UNSHIELD_SENT', 'BRIDGING_OUT', 'COMPLETED'];

function assertInOrder(seen: string[]) {
  const positions = seen.map((s) => ORDER.indexOf(s));
  assert.ok(
    positions.every((p) => p >= 0),
    `unexpected status in ${seen.join(' → ')}`,
  );
  assert.deepEqual(
    [...positions].sort((a, b) => a - b),
    positions,
    `statuses out of order: ${seen.join(' → ')}`,
  );
}

/** Where a history holds a payload whose encoding is not the codec's (search attributes aside). */
function plainPayloads(node: unknown, at = ''): string[] {
  if (node === null || typeof node !== 'object') return [];
  const record = node as Record<string, unknown>;
  const metadata = record.metadata as Record<string, unknown> | undefined;
  if (metadata && typeof metadata === 'object' && 'encoding' in metadata) {
    const encoding = metadata.encoding;
    const text =
      typeof encoding === 'string' ? Buffer.from(encoding, 'base64').toString() : Buffer.from(Object.values(encoding as object) as number[]).toString();
    return text === 'binary/encrypted' ? [] : [`${at} (${text})`];
  }
  return Object.entries(record).flatMap(([key, value]) => (key === 'searchAttributes' || key === 'patch-data' ? [] : plainPayloads(value, `${at}.${key}`)));
}

/** Where the tracking page test saves its screenshots (gitignored), one per status the page showed. */
const SCREENSHOTS = fileURLToPath(new URL('../../test-results/tracking-page/', import.meta.url));

/** What the page shows at one moment, read in one go (a string, not a function: tsx's __name helpers do not exist in the page). */
interface PageState {
  status: string | null;
  /** The steps reached, as [status, datetime of their time]. */
  reached: [string, string][];
  current: string[];
  text: string;
  /** Wider than the window: something does not fit a narrow screen. */
  overflows: boolean;
}
const READ_PAGE = `(() => ({
  status: document.getElementById('status').dataset.status ?? null,
  reached: [...document.querySelectorAll('#steps li:not(.upcoming)')].map((li) => [li.dataset.status, li.querySelector('time').getAttribute('datetime')]),
  current: [...document.querySelectorAll('#steps [aria-current="step"]')].map((li) => li.dataset.status),
  text: document.body.innerText,
  overflows: document.documentElement.scrollWidth > window.innerWidth,
}))()`;

describe('the tracking page (/t/<routeId>#<statusToken>) in headless Chromium', () => {
  let browser: Browser | undefined;
  let forwarder: RecordingForwarder | undefined;
  /** The route the first test follows; the second reads it with wrong keys. */
  let followed: (Transfer & { userDestinationAddress: string }) | undefined;
  after(
    async () => {
      await browser?.close();
      await forwarder?.close();
    },
    { timeout: 30_000 },
  );

  test('follows a real USDC → WETH route from the deposit to COMPLETED, a screenshot at each status it shows', { timeout: 240_000 }, async () => {
    await rm(SCREENSHOTS, { recursive: true, force: true });
    await mkdir(SCREENSHOTS, { recursive: true });
    // The browser talks to the API through a forwarder that records each request as the server receives it.
    forwarder = await startRecordingForwarder(stack.apiUrl);
    const origin = forwarder.url;
    const created = await create('100', 'WETH', freshRecipient());
    const token = stack.statusTokens.get(created.routeId)!;
    const weth = (
      await stack.api<{ symbol: string; decimals: number }[]>('GET', `/api/bridge/tokens?chainId=${chainId('destination')}&search=WETH`)
    ).body.data!.find((t) => t.symbol === 'WETH')!;

    browser = await launchChromium();
    // A phone's width: the page must fit it.
    const page = await (await browser.newContext({ viewport: { width: 390, height: 844 } })).newPage();
    page.setDefaultTimeout(30_000);
    const requested: string[] = [];
    const problems: string[] = [];
    page.on('request', (request) => requested.push(request.url()));
    page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
    page.on('console', (message) => {
      if (message.type() === 'error' || /Content Security Policy/i.test(message.text())) problems.push(`console: ${message.text()}`);
    });
    const read = async () => (await page.evaluate(READ_PAGE)) as PageState;
    const screenshots: string[] = [];
    const screenshot = async (name: string) => {
      const file = path.join(SCREENSHOTS, `${name}.png`);
      await page.screenshot({ path: file, fullPage: true, timeout: 30_000 });
      screenshots.push(file);
    };

    const response = await page.goto(`${origin}/t/${created.routeId}#${token}`, { waitUntil: 'load', timeout: 30_000 });
    assert.equal(response?.status(), 200);
    const headers = response!.headers();
    assert.equal(headers['content-security-policy'], TRACKING_PAGE_CSP);
    assert.equal(headers['referrer-policy'], 'no-referrer');
    assert.equal(headers['x-content-type-options'], 'nosniff');

    await page.locator('#status[data-status="AWAITING_DEPOSIT"]').waitFor({ timeout: 30_000 });
    await page.locator('#deposit').getByText(created.depositAddress).waitFor({ timeout: 10_000 });
    assert.ok(await page.locator('#secret-warning').isVisible(), 'the page warns that its link is a key');

    await stack.fund(created.depositAddress, 'USDC', BigInt(created.amount));
    // Each status the page shows: a screenshot, and what it shows checked against the API's view read right after.
    const shown: string[] = [];
    const last = await waitFor(
      'the page to show COMPLETED',
      async () => {
        const state = await read();
        if (!state.status || state.status === shown.at(-1)) return undefined;
        shown.push(state.status);
        await screenshot(state.status);
        const { body } = await stack.api<Transfer>('GET', `/api/private-route/${created.routeId}`);
        const history = body.data!.statusHistory;
        const upTo = history.map((h) => h.status).lastIndexOf(state.status);
        assert.ok(upTo >= 0, `the page shows ${state.status}, which the route has not reached: ${JSON.stringify(history)}`);
        assert.deepEqual(
          state.reached,
          history.slice(0, upTo + 1).map((h) => [h.status, h.at]),
          'the page lists the statuses reached, with their times',
        );
        assert.deepEqual(state.current, [state.status], 'the shown status is the current step');
        assert.equal(state.overflows, false, `${state.status} does not fit 390 px`);
        return state.status === 'COMPLETED' || state.status === 'FAILED' ? state : undefined;
      },
      180_000,
      100,
    );
    assert.equal(last.status, 'COMPLETED');
    assert.ok(shown.length >= 3, `the page showed the route move: ${shown.join(' → ')}`);

    const { body } = await stack.api<Transfer & { userDestinationAddress: string; privacy: { anonymitySet: number } }>(
      'GET',
      `/api/private-route/${created.routeId}`,
    );
    const done = body.data!;
    followed = done;
    assert.equal(done.status, 'COMPLETED', done.error ?? '');
    assert.deepEqual(
      last.reached,
      done.statusHistory.map((h) => [h.status, h.at]),
      'every entry of the history',
    );
    const amounts = (await page.locator('#amount-details').textContent()) ?? '';
    // Rounded for people where it has more digits than that: then its exact value is the rounded amount's title.
    const exactOutput = `${formatUnits(BigInt(done.quotedOutputAmount), weth.decimals)} WETH`;
    const outputInTitle = await page
      .locator('#amount-details .rounded')
      .evaluateAll((shown, exact) => shown.some((s) => s.getAttribute('title') === exact), exactOutput);
    assert.ok(amounts.includes(exactOutput) || outputInTitle, `the received amount: ${amounts}`);
    assert.ok(amounts.includes('100 USDC'), `the amount sent: ${amounts}`);
    for (const hash of [done.depositTxHash, done.bridgeInTxHash, done.payoutTxHash]) assert.ok(last.text.includes(hash!), `${hash} is shown`);
    assert.match((await page.locator('#privacy-details').textContent()) ?? '', new RegExp(`Anonymity set${done.privacy.anonymitySet} \\(`));
    // The local chains have no explorer: hashes are text. Any link would open a new tab without telling where from.
    for (const link of await page.locator('a[target="_blank"]').all()) assert.equal(await link.getAttribute('rel'), 'noreferrer noopener');

    // Nothing but the API's own origin was asked for (the empty icon is a data: URL, never a request).
    const elsewhere = requested.filter((url) => new URL(url).origin !== origin && !url.startsWith('data:'));
    assert.deepEqual(elsewhere, [], 'the browser asked another origin');
    assert.deepEqual(problems, [], 'the page logged an error or broke its CSP');
    // What the server received: the page's own request carries no token (the fragment stays in the browser), and the
    // token travels only in the Authorization header of the page's reads of this transfer.
    const received = forwarder.received;
    assert.ok(
      received.some((r) => r.target === `/t/${created.routeId}`),
      'the page was requested by its path alone',
    );
    for (const { target, headers: sent } of received) {
      assert.ok(!target.includes(token), `the token is in a request target: ${target}`);
      for (const [name, value] of Object.entries(sent)) {
        if (name === 'authorization') continue;
        assert.ok(!String(value).includes(token), `the token is in the ${name} header of ${target}`);
      }
      if (String(sent.authorization ?? '').includes(token)) assert.equal(target, `/api/private-route/${created.routeId}`);
    }
    assert.ok(
      received.some((r) => r.headers.authorization === `Bearer ${token}`),
      'the page presented its token',
    );
    for (const file of screenshots) process.stdout.write(`# tracking page screenshot: ${file}\n`);
  });

  test('without the key, or with a wrong one, the page shows the public status and nothing private', { timeout: 120_000 }, async () => {
    assert.ok(browser && forwarder && followed, 'runs after the route above');
    const route = followed;
    // Every private value the full view showed above, in the forms the page writes them.
    const privateValues = [
      route.depositAddress,
      route.userDestinationAddress,
      route.depositTxHash!,
      route.bridgeInTxHash!,
      route.payoutTxHash!,
      'USDC',
      'WETH',
      ...route.statusHistory.map((h) => h.at),
    ];
    const context = await browser.newContext({ viewport: { width: 390, height: 844 } });
    try {
      for (const [name, fragment, notice] of [
        ['wrong-token', `#st_${'A'.repeat(43)}`, /does not open this transfer/],
        ['no-token', '', /holds no key/],
      ] as const) {
        const page = await context.newPage();
        const requested: string[] = [];
        page.on('request', (request) => requested.push(request.url()));
        const response = await page.goto(`${forwarder.url}/t/${route.routeId}${fragment}`, { waitUntil: 'load', timeout: 30_000 });
        assert.equal(response?.headers()['content-security-policy'], TRACKING_PAGE_CSP);
        await page.locator('#status[data-status]').waitFor({ timeout: 30_000 });
        await page.locator('#notice').getByText(notice).waitFor({ timeout: 10_000 });
        const state = (await page.evaluate(READ_PAGE)) as PageState;
        assert.ok(['AWAITING_DEPOSIT', 'BRIDGING_IN', 'COMPLETED'].includes(state.status!), `a public status: ${state.status}`);
        for (const section of ['#secret-warning', '#deposit', '#progress', '#amounts', '#transactions', '#privacy']) {
          assert.equal(await page.locator(section).isVisible(), false, `${name}: ${section} is shown`);
        }
        const html = await page.content();
        for (const value of privateValues) {
          assert.ok(!html.toLowerCase().includes(value.toLowerCase()), `${name}: the page holds ${value}`);
        }
        assert.deepEqual(
          requested.filter((url) => new URL(url).origin !== forwarder!.url && !url.startsWith('data:')),
          [],
        );
        await page.screenshot({ path: path.join(SCREENSHOTS, `${name}.png`), fullPage: true, timeout: 30_000 });
        process.stdout.write(`# tracking page screenshot: ${path.join(SCREENSHOTS, `${name}.png`)}\n`);
        await page.close();
      }
    } finally {
      await context.close();
    }
    // A malformed routeId: a 404 page under the same headers; and no file of the page names another host.
    const malformed = await fetch(`${stack.apiUrl}/t/rt_not-a-route`, { signal: AbortSignal.timeout(10_000) });
    assert.equal(malformed.status, 404);
    assert.match(malformed.headers.get('content-type') ?? '', /text\/html/);
    assert.equal(malformed.headers.get('content-security-policy'), TRACKING_PAGE_CSP);
    for (const file of [`/t/${route.routeId}`, '/t/app.js', '/t/app.css']) {
      const served = await fetch(`${stack.apiUrl}${file}`, { signal: AbortSignal.timeout(10_000) });
      assert.equal(served.status, 200, file);
      assert.equal(served.headers.get('x-content-type-options'), 'nosniff', file);
      assert.doesNotMatch(await served.text(), /https?:\/\//, `${file} names another host`);
    }
  });
});

describe('full transfers on the local stack', () => {
  test('USDC → USDC: funded with `routectl devnet fund`, the recipient receives exactly quotedOutputAmount', async () => {
    const recipient = freshRecipient();
    const created = await create('125.5', 'USDC', recipient);

    const funded = await stack.routectl('devnet', 'fund', created.routeId);
    assert.equal(funded.code, 0, funded.stderr);
    const { transfer, seen } = await pollUntilDone(created.routeId);

    assert.equal(transfer.status, 'COMPLETED', transfer.error ?? '');
    assert.equal(transfer.error, null);
    assertInOrder(seen);
    assert.equal(await stack.balanceOf('destination', 'USDC', recipient), BigInt(created.quotedOutputAmount));
    assert.equal(await stack.balanceOf('source', 'USDC', created.depositAddress), 0n, 'the deposit was bridged in full');
    assert.equal(await stack.balanceOf('hub', 'USDC', created.hubAccount), 0n, 'everything that arrived on the hub was shielded');

    const receipt = await stack.chainClient('destination').getTransactionReceipt({ hash: transfer.payoutTxHash as `0x${string}` });
    assert.equal(receipt.status, 'success');
    // The holder's history: every status in order, times never going back, the hops' transactions where they belong.
    const history = transfer.statusHistory;
    assert.deepEqual(
      history.map((h) => h.status),
      ['AWAITING_DEPOSIT', 'BRIDGING_IN', 'RECEIVED_ON_HUB', 'SHIELDED', 'UNSHIELD_SENT', 'BRIDGING_OUT', 'COMPLETED'],
    );
    assert.ok(
      history.every((h, i) => i === 0 || Date.parse(h.at) >= Date.parse(history[i - 1]!.at)),
      JSON.stringify(history),
    );
    assert.deepEqual(
      history.filter((h) => h.txHash !== null).map((h) => [h.status, h.txHash, h.chainId]),
      [
        ['BRIDGING_IN', transfer.depositTxHash, transfer.sourceChainId],
        ['RECEIVED_ON_HUB', transfer.bridgeInTxHash, transfer.sourceChainId],
        ['COMPLETED', transfer.payoutTxHash, transfer.destChainId],
      ],
    );
    // Each hash is a transaction on the chain the view says it is on.
    for (const [chain, hash] of [
      ['source', transfer.depositTxHash],
      ['source', transfer.bridgeInTxHash],
      ['destination', transfer.payoutTxHash],
    ] as const) {
      const onChain = await stack.chainClient(chain).getTransactionReceipt({ hash: hash as `0x${string}` });
      assert.equal(onChain.status, 'success', `${hash} on the ${chain} chain`);
    }

    const ledger = await stack.service.db.select().from(ledgerEntries).where(eq(ledgerEntries.routeId, created.routeId));
    const kinds = Object.fromEntries(ledger.map((e) => [e.kind, BigInt(e.amount)]));
    assert.equal(kinds.received, 125_500_000n);
    assert.equal(kinds.paid, BigInt(created.quotedOutputAmount));
    assert.equal(kinds.unshielded, kinds.bridged_out, 'the pool withdrawal funded the bridge-out order with exactly its input');
    assert.equal(kinds.shielded! - kinds.bridged_out!, kinds.service_fee, 'the service keeps what the exact-output leg did not need');
    assert.ok(kinds.service_fee! > 0n);

    const { body } = await stack.api<Transfer & { privacy: { anonymitySet: number; waitedSeconds: number } | null }>(
      'GET',
      `/api/private-route/${created.routeId}`,
    );
    assert.ok(body.data!.privacy, 'a finished transfer reports its privacy');
    assert.ok(body.data!.privacy.anonymitySet >= 1);
    assert.ok(body.data!.privacy.waitedSeconds >= 1, 'it waited at least the local stack’s minimum delay');
  });

  test("the signer's spending policy: the route's own sends passed it; with the worker's token, off-plan requests are refused and logged", async () => {
    const [route] = await stack.service.db.select().from(transfers).where(eq(transfers.status, 'COMPLETED')).limit(1);
    assert.ok(route, 'a completed route of the test before');
    const signer = createRemoteSigner({ url: stack.signerUrl, authToken: stack.config.SIGNER_AUTH_TOKEN! });
    const hub = stack.manifest.chains.find((c) => c.role === 'hub')!;
    const usdc = stack.token('hub', 'USDC');
    const tx = (to: Address, data?: Hex, value = 0n) =>
      serializeTransaction({
        chainId: hub.chainId,
        type: 'eip1559',
        to,
        data,
        value,
        nonce: 0,
        gas: 100_000n,
        maxFeePerGas: 10n ** 9n,
        maxPriorityFeePerGas: 1n,
      });
    const stranger = freshRecipient();
    const refusedBy = async (request: Promise<unknown>) => {
      const error = await request.then(
        () => assert.fail('the signer signed an off-plan request'),
        (e: unknown) => e,
      );
      assert.ok(error instanceof SignerRefusedError, String(error));
      return error.rule;
    };
    const index = route.accountIndex;
    // A token to an address no route planned, from the route's own exit account.
    assert.equal(
      await refusedBy(
        signer.signTransaction({ role: 'exit', index }, tx(usdc, encodeFunctionData({ abi: erc20Abi, functionName: 'transfer', args: [stranger, 1n] }))),
      ),
      'payee-not-planned',
    );
    // A contract call outside the allowlist, and an approval to a stranger.
    assert.equal(
      await refusedBy(
        signer.signTransaction(
          { role: 'hub', index },
          tx(usdc, encodeFunctionData({ abi: erc20Abi, functionName: 'transferFrom', args: [route.hubAccount as Address, stranger, 1n] })),
        ),
      ),
      'call-not-allowed',
    );
    assert.equal(
      await refusedBy(
        signer.signTransaction({ role: 'hub', index }, tx(usdc, encodeFunctionData({ abi: erc20Abi, functionName: 'approve', args: [stranger, 1n] }))),
      ),
      'spender-not-allowed',
    );
    // Gas to a stranger; an account of no route; note secrets of no route.
    assert.equal(await refusedBy(signer.signTransaction({ role: 'gas' }, tx(stranger, undefined, 1n))), 'top-up-not-to-route-account');
    assert.equal(
      await refusedBy(
        signer.signTransaction(
          { role: 'exit', index: 2 ** 31 - 2 },
          tx(usdc, encodeFunctionData({ abi: erc20Abi, functionName: 'transfer', args: [route.userDestinationAddress as Address, 1n] })),
        ),
      ),
      'unknown-route-account',
    );
    assert.equal(await refusedBy(signer.depositSecrets(1n, BigInt(2 ** 31 - 2))), 'note-of-no-route');
    assert.equal(await refusedBy(signer.withdrawalSecrets(12345n, 0n)), 'note-of-no-route');

    // The audit log: a whole chain; the route's own sends signed under its id, the refusals with their rules.
    const lines = (await readFile(path.join(stack.dataDir, SIGNER_AUDIT_LOG_FILE), 'utf8')).trim().split('\n');
    assert.equal(verifyAuditLines(lines).ok, true);
    const records = lines.map((l) => JSON.parse(l) as { verdict: string; routeId?: string; rule?: string; account?: string });
    const ofRoute = records.filter((r) => r.routeId === route.routeId);
    assert.ok(ofRoute.filter((r) => r.verdict === 'signed').length >= 3, 'the route signed its bridge-in, shield and bridge-out through the policy');
    assert.ok(
      ofRoute.some((r) => r.verdict === 'answered'),
      "the route's note secrets were asked through the policy",
    );
    assert.deepEqual(
      records.filter((r) => r.verdict === 'refused').map((r) => r.rule),
      [
        'payee-not-planned',
        'call-not-allowed',
        'spender-not-allowed',
        'top-up-not-to-route-account',
        'unknown-route-account',
        'note-of-no-route',
        'note-of-no-route',
      ],
    );
  });

  test('USDC → WETH (18 decimals): exact output on the destination chain, through a failed bridge-in quote and a rejected withdrawal', async () => {
    const recipient = freshRecipient();
    const refundAddress = freshRecipient();
    const created = await create('300', 'WETH', recipient, refundAddress);
    withFailures = { created, recipient, refundAddress };
    // Failures on the way, for the secrets test at the end to read their logs: Relay answers the bridge-in
    // quote with HTTP 500 twice, the hub node rejects the pool withdrawal once. The transfer completes all the same.
    stack.relay.faults.set({ operation: 'bridge-in', mode: 'fail', count: 2 });
    stack.relay.faults.set({ operation: 'unshield', mode: 'fail', count: 1 });
    await stack.fund(created.depositAddress, 'USDC', BigInt(created.amount));
    const { transfer, seen } = await pollUntilDone(created.routeId);
    assert.deepEqual(stack.relay.faults.list(), [], 'every injected failure happened');

    assert.equal(transfer.status, 'COMPLETED', transfer.error ?? '');
    assertInOrder(seen);
    assert.equal(await stack.balanceOf('destination', 'WETH', recipient), BigInt(created.quotedOutputAmount));
    assert.equal(await stack.balanceOf('destination', 'USDC', recipient), 0n);
  });

  test('concurrent transfers never spend each other funds', async () => {
    const recipients = [freshRecipient(), freshRecipient(), freshRecipient()];
    const created = await Promise.all(recipients.map((r, i) => create(String(20 + i * 7), i === 1 ? 'WETH' : 'USDC', r)));
    for (const t of created) await stack.fund(t.depositAddress, 'USDC', BigInt(t.amount));
    const results = await Promise.all(created.map((t) => pollUntilDone(t.routeId)));
    for (const [i, { transfer }] of results.entries()) {
      assert.equal(transfer.status, 'COMPLETED', transfer.error ?? '');
      assert.equal(await stack.balanceOf('destination', i === 1 ? 'WETH' : 'USDC', recipients[i]!), BigInt(created[i]!.quotedOutputAmount));
    }
  });

  test('a transfer that is not funded stays AWAITING_DEPOSIT and moves no money', async () => {
    const created = await create('10', 'USDC', freshRecipient());
    await new Promise((r) => setTimeout(r, 1500));
    const { body } = await stack.api<Transfer>('GET', `/api/private-route/${created.routeId}`);
    assert.equal(body.data!.status, 'AWAITING_DEPOSIT');
    const intents = await stack.service.db.select().from(txIntents).where(eq(txIntents.routeId, created.routeId));
    assert.equal(intents.length, 0);
  });

  test('a retried send is the same transaction: the same (route, step) never pays twice', async () => {
    const { sender } = stack.service.activityDeps;
    const payer = privateKeyToAccount(stack.manifest.faucetPrivateKey);
    const to = freshRecipient();
    const request = {
      routeId: 'rt_idempotency_probe',
      step: 'probe',
      chainId: chainId('source'),
      account: payer,
      to: stack.token('source', 'USDC'),
      data: encodeFunctionData({ abi: erc20Abi, functionName: 'transfer', args: [to, 5_000_000n] }),
    };
    const results = await Promise.all([sender.send(request), sender.send(request), sender.send(request)]);
    assert.equal(new Set(results.map((r) => r.txHash)).size, 1);
    assert.equal((await sender.send(request)).txHash, results[0]!.txHash);
    assert.equal(await stack.balanceOf('source', 'USDC', to), 5_000_000n);
  });

  // Last: it reads what every test above made the stack log, store and answer, the failed activities included.
  test('no secret in any log line, stored row, Temporal history or answer of the whole run', async () => {
    const sdkFailures = logLines.filter((line) => line.includes('"msg":"Activity failed"'));
    for (const activity of ['bridgeIn', 'unshield']) {
      assert.ok(
        sdkFailures.some((line) => line.includes(`"activityType":"${activity}"`)),
        `the SDK's own failure line for ${activity} was captured`,
      );
    }

    // Every secret the stack was configured with, whoever added it: the data folder's env files, the config, this process.
    const indexes = (await stack.service.db.select({ index: transfers.accountIndex }).from(transfers)).map((r) => r.index);
    const secrets: KnownSecret[] = [
      { name: 'SIGNER_MNEMONIC', value: SIGNER_MNEMONIC },
      { name: 'RELAY_API_KEY', value: RELAY_API_KEY },
      ...Object.entries(DEVNET_ACCOUNTS).map(([name, value]) => ({ name: `devnet ${name} private key`, value })),
      ...routePrivateKeys(SIGNER_MNEMONIC, indexes),
      ...secretsOfEnv(stack.config as unknown as Record<string, unknown>, 'config'),
      ...secretsOfEnv(process.env, 'process env'),
      ...(await secretsOfDataDir(stack.dataDir)),
      ...[...stack.statusTokens.values()].map((value) => ({ name: 'a statusToken', value })),
    ];
    assert.ok(
      secrets.some((s) => s.name.includes('(URL credentials)')),
      'the database password is searched for',
    );
    // The webhook secrets derived from WEBHOOK_SIGNING_SECRET (src/webhooks/signingSecrets.ts): nothing stores them.
    const deploymentSecrets = [...new Set(secrets.filter((s) => s.name.endsWith(' WEBHOOK_SIGNING_SECRET')).map((s) => s.value))];
    assert.ok(deploymentSecrets.length > 0, 'the webhook signing secret is among the configured ones');
    const partnerIds = (await stack.service.db.select({ id: apiKeys.id }).from(apiKeys)).map((r) => r.id);
    for (const deployment of deploymentSecrets) {
      secrets.push({ name: 'the keyless webhook secret', value: keylessWebhookSecret(deployment) });
      for (const id of partnerIds)
        for (const generation of [1, 2, 3]) secrets.push({ name: `partner ${id}'s webhook secret`, value: partnerWebhookSecret(deployment, id, generation) });
    }

    const histories: Array<{ where: string; text: string }> = [];
    for await (const execution of stack.temporal.client.workflow.list()) {
      const history = await stack.temporal.client.workflow.getHandle(execution.workflowId, execution.runId).fetchHistory();
      histories.push({ where: `Temporal history of ${execution.workflowId}`, text: allText(history) });
    }
    assert.ok(histories.length >= 5, "the transfers' histories were read");

    const stored = await databaseRows(stack.service.db);
    const logged = logLines.map((text, i) => ({ where: `log line ${i}`, text }));
    const everywhere = [...logged, ...stored, ...histories];
    const leaks = findLeaks(secrets, everywhere);
    assert.deepEqual(leaks, [], 'a secret was written where it must not be');
    // Answers hand out the statusToken at create, by design; every other secret stays out of them.
    const answerLeaks = findLeaks(
      secrets.filter((s) => s.name !== 'a statusToken'),
      answers.map((text, i) => ({ where: `answer ${i}`, text })),
    );
    assert.deepEqual(answerLeaks, [], 'a secret was in an API answer or routectl output');
    process.stdout.write(
      `# secrets: ${secrets.length} searched in ${logged.length} log lines, ${stored.length} rows, ${histories.length} histories, ${answers.length} answers\n`,
    );
  });
});

describe('encrypted Temporal history', () => {
  // Reads the histories of the transfers above (no transfer of its own): the USDC → WETH one had a refundAddress
  // and failed attempts, so its history holds both addresses and failure messages had they been in clear.
  test('a transfer leaves no plaintext address or failure message in any history; the codec endpoint decodes it for a bearer of its token only', async () => {
    const { codec } = stack;
    assert.ok(codec, 'the local stack runs with the payload codec');
    assert.ok(withFailures, 'runs after the USDC → WETH transfer');
    const { created, recipient, refundAddress } = withFailures;

    // Every history of the namespace (the transfer's, its child workflows', the watchers'), read WITHOUT the codec.
    const connection = await Connection.connect({ address: stack.temporal.address });
    try {
      const raw = new Client({ connection, namespace: stack.temporal.namespace });
      const histories: { workflowId: string; text: string }[] = [];
      for await (const execution of raw.workflow.list()) {
        const history = await raw.workflow.getHandle(execution.workflowId, execution.runId).fetchHistory();
        // The stored bytes (protobuf): every payload's metadata and data as they are, plus the event fields as JSON.
        const bytes = Buffer.from(proto.temporal.api.history.v1.History.encode(history).finish()).toString('latin1');
        histories.push({ workflowId: execution.workflowId, text: `${bytes}\n${JSON.stringify(history)}` });
      }
      assert.ok(histories.some((h) => h.workflowId === created.routeId));
      const addresses = [recipient, refundAddress, created.depositAddress, created.hubAccount];
      for (const { workflowId, text } of histories) {
        const lower = text.toLowerCase();
        for (const address of addresses) assert.ok(!lower.includes(address.slice(2).toLowerCase()), `${workflowId}'s history holds ${address} in clear`);
      }
      // Every payload is encrypted, except search attributes (indexed by the server, so never encoded: TransferStatus, NeedsAttention)
      // and patch markers (the SDK's core writes them without the codec): they hold the patch's name from the code, nothing else.
      let patchMarkers = 0;
      for (const { workflowId, text } of histories) {
        const patches = [...text.matchAll(/"patch-data":\{"payloads":\[\{"metadata":\{[^}]*\},"data":"([^"]+)"/g)].map((m) =>
          Buffer.from(m[1]!, 'base64').toString(),
        );
        for (const patch of patches) assert.match(patch, /^\{"id":"[a-z0-9-]+","deprecated":(true|false)\}$/, `${workflowId}: a patch marker holds ${patch}`);
        patchMarkers += patches.length;
      }
      assert.ok(patchMarkers > 0, 'the transfers ran through a patched step');
      for (const execution of histories) {
        const clear = plainPayloads(JSON.parse(execution.text.slice(execution.text.lastIndexOf('\n') + 1)));
        assert.deepEqual(clear, [], `${execution.workflowId}: payloads in clear at ${clear.join(', ')}`);
      }
      const transferHistory = histories.find((h) => h.workflowId === created.routeId)!.text;
      assert.match(transferHistory, /binary\/encrypted/);
      const failures = [...transferHistory.matchAll(/"(?:lastFailure|failure)":\{"message":"([^"]*)"/g)].map((m) => m[1] ?? '');
      // A failed attempt's message and stack trace are inside encrypted payloads (payload-codec.test.ts encodes one).
      assert.ok(failures.length > 0, 'the transfer had failed attempts');
      // The SDK's own stand-in for a failure too large to record names nothing of the route either.
      const fixed = new Set(['Encoded failure', 'Failure exceeds size limit.']);
      assert.ok(
        failures.every((message) => fixed.has(message)),
        `failure messages in clear: ${failures.join(' | ')}`,
      );

      // Through the codec endpoint (what the Web UI and `temporal workflow show --codec-endpoint` call) it reads again.
      const history = await raw.workflow.getHandle(created.routeId).fetchHistory();
      const input = history.events?.[0]?.workflowExecutionStartedEventAttributes?.input?.payloads ?? [];
      const wire = {
        payloads: input.map((p) => ({
          metadata: Object.fromEntries(Object.entries(p.metadata ?? {}).map(([k, v]) => [k, Buffer.from(v).toString('base64')])),
          data: Buffer.from(p.data ?? []).toString('base64'),
        })),
      };
      const decode = (authorization?: string) =>
        fetch(`${codec.url}/decode`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...(authorization && { authorization }) },
          body: JSON.stringify(wire),
        });
      assert.equal((await decode()).status, 401);
      assert.equal((await decode(`Bearer ${codec.authToken.replace(/.$/, (c) => (c === 'a' ? 'b' : 'a'))}`)).status, 401);
      const decoded = await decode(`Bearer ${codec.authToken}`);
      assert.equal(decoded.status, 200);
      const plain = ((await decoded.json()) as { payloads: { data: string }[] }).payloads.map((p) => Buffer.from(p.data, 'base64').toString()).join('');
      assert.ok(plain.toLowerCase().includes(recipient.slice(2).toLowerCase()), 'the decoded workflow input shows the recipient');
    } finally {
      await connection.close();
    }
  });
});
