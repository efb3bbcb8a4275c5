/**
 * The transfer service's create and read (src/transfers/transferService.ts) over a real Postgres, with a stand-in
 * quote service, address book and Temporal client: the webhook URL is stored but never shown, and the full view
 * carries the per-hop tx hashes (deposit, bridge-in, payout) while the public view stays as it was.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Client } from '@temporalio/client';
import { eq } from 'drizzle-orm';
import type { ApiAccountRole, RouteAddressBook } from '../../src/accounts/routeAccounts.ts';
import { connectDatabase, type DatabaseHandle } from '../../src/db/client.ts';
import { transfers } from '../../src/db/schema.ts';
import type { QuoteService } from '../../src/quote/quoteService.ts';
import { createTransferService, type TransferService } from '../../src/transfers/transferService.ts';
import { startTestPostgres, type TestPostgres } from '../support/database.ts';

let postgres: TestPostgres;
let database: DatabaseHandle;
let service: TransferService;
const started: string[] = [];

const QUOTE = {
  symbol: 'USDC',
  destSymbol: 'USDC',
  sourceChainId: 1,
  destChainId: 2,
  hubChainId: 3,
  amount: '10000000',
  quotedOutputAmount: '9900000',
  feeAmount: '100000',
  bridgeFeeAmount: '50000',
  privacyFeeAmount: '50000',
  amountInUsd: 10,
  quotedOutputUsd: 9.9,
  feeUsd: 0.1,
  bridgeFeeUsd: 0.05,
  privacyFeeUsd: 0.05,
  etaSeconds: 600,
  route: ['relay', 'privacy-pool', 'relay'],
};
const token = (address: string) => ({ address, decimals: 6, symbol: 'USDC' });
const quotes = {
  quote: async () => ({ quote: QUOTE, sourceToken: token('0x1111'), hubToken: token('0x3333'), destToken: token('0x2222') }),
} as unknown as QuoteService;
const temporal = { workflow: { start: async (_type: string, options: { workflowId: string }) => void started.push(options.workflowId) } } as unknown as Client;
let accountOffset = 0;
const addresses: RouteAddressBook<ApiAccountRole> = {
  routeAddresses: (index: number) => ({ deposit: `0xdeposit${index + accountOffset}`, hub: `0xhub${index + accountOffset}` }) as never,
};

const WEBHOOK_URL = 'https://hooks.example.com/private-route?token=whsec_do-not-echo';
const REQUEST = { sourceChainId: 1, destChainId: 2, amount: '10000000', userDestinationAddress: '0x000000000000000000000000000000000000dEaD' as const };

before(async () => {
  postgres = await startTestPostgres('transfer-view-test');
  database = connectDatabase(postgres.url);
  accountOffset = Date.now();
  service = createTransferService({
    db: database.db,
    temporal,
    taskQueue: 'test',
    quotes,
    addresses,
    settings: { stepMaxAttempts: 3, stepTimeBudgetSeconds: 600, depositTimeoutSeconds: 3600 },
    privacy: {
      exitEpochSeconds: 1,
      publicEndDelaySeconds: 0,
      publicEndHoldSeconds: 0,
      minAnonymitySet: 1,
      maxAnonymitySet: 10,
      maxWaitSeconds: 60,
      pollSeconds: 5,
      reviewTimeoutSeconds: 60,
    },
  });
});

after(async () => {
  await database?.close();
  await postgres?.stop();
});

describe('transfer views: per-hop tx hashes for the statusToken holder, the webhook URL never shown', { timeout: 60_000 }, () => {
  test('create stores the webhook URL; no view and no create answer shows it', { timeout: 20_000 }, async () => {
    const created = await service.create({ ...REQUEST, webhookUrl: WEBHOOK_URL });
    assert.ok(started.includes(created.routeId), 'the workflow was started');
    const [row] = await database.db.select().from(transfers).where(eq(transfers.routeId, created.routeId));
    assert.equal(row!.webhookUrl, WEBHOOK_URL);

    const full = await service.read(created.routeId, created.statusToken);
    const open = await service.read(created.routeId, undefined);
    for (const [name, answer] of Object.entries({ created, full, open, get: await service.get(created.routeId) })) {
      assert.ok(!JSON.stringify(answer).includes('hooks.example.com'), `${name} does not echo the webhook URL`);
      assert.ok(!JSON.stringify(answer).includes('whsec_'), `${name} does not echo the webhook secret`);
    }

    const without = await service.create(REQUEST);
    const [plain] = await database.db.select().from(transfers).where(eq(transfers.routeId, without.routeId));
    assert.equal(plain!.webhookUrl, null, 'no webhook unless asked for');
  });

  test('the full view carries depositTxHash, bridgeInTxHash and payoutTxHash (null until seen); the public view is unchanged', {
    timeout: 20_000,
  }, async () => {
    const created = await service.create(REQUEST);
    const fresh = await service.read(created.routeId, created.statusToken);
    assert.equal(fresh?.access, 'full');
    if (fresh?.access !== 'full') return;
    assert.equal(fresh.transfer.depositTxHash, null);
    assert.equal(fresh.transfer.bridgeInTxHash, null);
    assert.equal(fresh.transfer.payoutTxHash, null);

    const hashes = { depositTxHash: `0x${'a'.repeat(64)}`, bridgeInTxHash: `0x${'b'.repeat(64)}`, payoutTxHash: `0x${'c'.repeat(64)}` };
    await database.db.update(transfers).set(hashes).where(eq(transfers.routeId, created.routeId));
    const seen = await service.read(created.routeId, created.statusToken);
    assert.equal(seen?.access, 'full');
    if (seen?.access !== 'full') return;
    assert.deepEqual(
      { depositTxHash: seen.transfer.depositTxHash, bridgeInTxHash: seen.transfer.bridgeInTxHash, payoutTxHash: seen.transfer.payoutTxHash },
      hashes,
    );
    assert.ok(!('webhookUrl' in seen.transfer));

    const open = await service.read(created.routeId, undefined);
    assert.equal(open?.access, 'public');
    assert.deepEqual(Object.keys(open!.access === 'public' ? open!.transfer : {}).sort(), ['error', 'needsAttention', 'routeId', 'status']);
    assert.deepEqual(await service.read(created.routeId, 'st_wrong'), { access: 'denied' });
  });
});
