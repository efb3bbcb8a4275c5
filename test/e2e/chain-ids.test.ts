import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { eq } from 'drizzle-orm';
import { drizzle } from 'drizzle-orm/postgres-js';
import { migrate } from 'drizzle-orm/postgres-js/migrator';
import postgres from 'postgres';
import { createApi } from '../../src/api/app.ts';
import { startApi } from '../../src/api/startApi.ts';
import { connectDatabase, migrateDatabase } from '../../src/db/client.ts';
import { ledgerEntries, transfers, txIntents } from '../../src/db/schema.ts';
import { createLogger } from '../../src/logger.ts';
import type { QuoteService } from '../../src/quote/quoteService.ts';
import { privacySettings, transferSettings } from '../../src/runtime.ts';
import { createTransferService } from '../../src/transfers/transferService.ts';
import { startTestStack, type TestStack } from '../support/testStack.ts';

/** Above int4 (2^31 − 1) and above uint32: EIP-155 chain ids are not bounded by either. */
const BIG_CHAIN_ID = 4_294_967_296;
const RECIPIENT = '0x000000000000000000000000000000000000bEEF';
const logger = createLogger({ level: 'warn' });

let stack: TestStack;
let source: number;
let hub: number;
let destination: number;

before(
  async () => {
    stack = await startTestStack();
    const byRole = (role: string) => stack.manifest.chains.find((c) => c.role === role)!.chainId;
    [source, hub, destination] = [byRole('source'), byRole('hub'), byRole('destination')];
  },
  { timeout: 240_000 },
);
after(async () => stack?.close(), { timeout: 60_000 });

describe('chain ids the service does not serve', { timeout: 60_000 }, () => {
  test('quote and create with chainId 4294967296 (no such chain) answer 400 naming the field, never 500', async () => {
    for (const route of ['/api/private-route/quote', '/api/private-route']) {
      for (const [fields, pattern] of [
        [{ sourceChainId: BIG_CHAIN_ID, destChainId: destination }, /sourceChainId 4294967296 is not a supported chain/],
        [{ sourceChainId: source, destChainId: BIG_CHAIN_ID }, /destChainId 4294967296 is not a supported chain/],
        [{ sourceChainId: 2 ** 53, destChainId: destination }, /sourceChainId is too large/],
        [{ sourceChainId: source, destChainId: 1e300 }, /destChainId is too large/],
      ] as const) {
        const response = await stack.api('POST', route, { ...fields, amount: '10', userDestinationAddress: RECIPIENT });
        assert.equal(response.status, 400, `${route} ${JSON.stringify(fields)} → ${JSON.stringify(response.body)}`);
        assert.equal(response.body.success, false);
        assert.match(response.body.error ?? '', pattern);
      }
    }
  });

  test('tokens with a chainId above 2^31 − 1 or above 2^53 answer 400', async () => {
    for (const [chainId, pattern] of [
      [String(BIG_CHAIN_ID), /4294967296 is not a supported chain/],
      ['9999999999999999', /chainId is too large/],
    ] as const) {
      const response = await stack.api('GET', `/api/bridge/tokens?chainId=${chainId}`);
      assert.equal(response.status, 400, JSON.stringify(response.body));
      assert.match(response.body.error ?? '', pattern);
    }
  });

  test('a chain the bridge lists but without an RPC URL (CHAIN_RPC_URLS) is not offered: 400, not a deposit address nobody watches', async () => {
    const rpcUrls = Object.fromEntries(Object.entries(stack.config.CHAIN_RPC_URLS).filter(([id]) => Number(id) !== destination));
    const api = await startApi({ ...stack.service, addresses: stack.service.keyring, config: { ...stack.config, PORT: 0, CHAIN_RPC_URLS: rpcUrls } }, logger);
    try {
      const call = async (method: string, route: string, body?: unknown) => {
        const response = await fetch(`${api.url}${route}`, {
          method,
          headers: { 'content-type': 'application/json' },
          body: body === undefined ? undefined : JSON.stringify(body),
        });
        return { status: response.status, body: (await response.json()) as { success: boolean; data?: unknown; error?: string } };
      };
      for (const route of ['/api/private-route/quote', '/api/private-route']) {
        const response = await call('POST', route, { sourceChainId: source, destChainId: destination, amount: '10', userDestinationAddress: RECIPIENT });
        assert.equal(response.status, 400, JSON.stringify(response.body));
        assert.match(response.body.error ?? '', new RegExp(`destChainId ${destination} is not a supported chain: this deployment has no RPC URL for it`));
      }
      const chains = await call('GET', '/api/bridge/chains');
      assert.deepEqual((chains.body.data as Array<{ chainId: number }>).map((c) => c.chainId).sort(), [source, hub].sort());
      assert.equal((await call('GET', `/api/bridge/tokens?chainId=${destination}`)).status, 400);
    } finally {
      await api.stop();
    }
  });
});

describe('a served chain above 2^31 − 1', { timeout: 60_000 }, () => {
  test('create stores and GET answers chain id 4294967296 exactly (int8 columns), with the deposit token address', async () => {
    // The real quote service, with the source chain presented under a chain id above int4: what the bridge
    // could list tomorrow. No worker listens on the task queue, so the workflow never runs.
    const real = stack.service.quotes;
    const quotes: QuoteService = {
      chains: async () => (await real.chains()).map((c) => (c.chainId === source ? { ...c, chainId: BIG_CHAIN_ID } : c)),
      tokens: (chainId, search) => real.tokens(chainId === BIG_CHAIN_ID ? source : chainId, search),
      inputFor: (request, output) => real.inputFor(request, output),
      async quote(request) {
        const resolved = await real.quote({ ...request, sourceChainId: request.sourceChainId === BIG_CHAIN_ID ? source : request.sourceChainId });
        return { ...resolved, quote: { ...resolved.quote, sourceChainId: BIG_CHAIN_ID } };
      },
    };
    const taskQueue = `chain-ids-test-${randomBytes(4).toString('hex')}`;
    const transferService = createTransferService({
      db: stack.service.db,
      temporal: stack.temporal.client,
      taskQueue,
      quotes,
      addresses: stack.service.keyring,
      settings: transferSettings(stack.config),
      privacy: privacySettings(stack.config),
    });
    const app = createApi({ quotes, transfers: transferService, logger, servedChainIds: new Set([BIG_CHAIN_ID, hub, destination]) });

    const response = await app.request('/api/private-route', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ sourceChainId: BIG_CHAIN_ID, destChainId: destination, amount: '10', userDestinationAddress: RECIPIENT }),
    });
    const body = (await response.json()) as { success: boolean; data?: Record<string, unknown>; error?: string };
    assert.equal(response.status, 200, JSON.stringify(body));
    const created = body.data!;
    try {
      assert.equal(created.sourceChainId, BIG_CHAIN_ID);
      assert.equal(created.depositTokenAddress, stack.token('source', 'USDC'));
      const fetched = await app.request(`/api/private-route/${created.routeId}`, { headers: { authorization: `Bearer ${created.statusToken}` } });
      const view = ((await fetched.json()) as { data: Record<string, unknown> }).data;
      assert.equal(fetched.status, 200);
      assert.equal(view.sourceChainId, BIG_CHAIN_ID);
      assert.equal(view.depositTokenAddress, stack.token('source', 'USDC'));
      const [row] = await stack.service.db
        .select()
        .from(transfers)
        .where(eq(transfers.routeId, created.routeId as string));
      assert.equal(row!.sourceChainId, BIG_CHAIN_ID);
      assert.equal(typeof row!.accountIndex, 'number');
    } finally {
      await stack.temporal.client.workflow
        .getHandle(created.routeId as string)
        .terminate('test cleanup')
        .catch(() => {});
    }
  });

  test('the real API answers create and GET with depositTokenAddress, the source token contract', async () => {
    const { status, body } = await stack.api<Record<string, unknown>>('POST', '/api/private-route', {
      sourceChainId: source,
      destChainId: destination,
      amount: '10',
      userDestinationAddress: RECIPIENT,
    });
    assert.equal(status, 200, JSON.stringify(body));
    assert.equal(body.data!.depositTokenAddress, stack.token('source', 'USDC'));
    const fetched = await stack.api<Record<string, unknown>>('GET', `/api/private-route/${body.data!.routeId}`);
    assert.equal(fetched.body.data!.depositTokenAddress, stack.token('source', 'USDC'));
    await stack.temporal.client.workflow
      .getHandle(body.data!.routeId as string)
      .terminate('test cleanup')
      .catch(() => {});
  });
});

describe('migration to int8 ids', { timeout: 120_000 }, () => {
  test('applies on an existing database with rows, which keep their values; ids above int4 then fit', async () => {
    const database = `migrate_${randomBytes(6).toString('hex')}`;
    const adminUrl = new URL(stack.config.DATABASE_URL);
    const url = new URL(stack.config.DATABASE_URL);
    url.pathname = `/${database}`;
    const admin = postgres(adminUrl.toString(), { max: 1, onnotice: () => {} });
    await admin.unsafe(`create database "${database}"`);
    const folder = await mkdtemp(path.join(tmpdir(), 'drizzle-before-'));
    try {
      // The migrations as they were before the int8 one: a database of an earlier release.
      const source = new URL('../../drizzle/', import.meta.url);
      await cp(source, folder, { recursive: true });
      const journalPath = path.join(folder, 'meta', '_journal.json');
      const journal = JSON.parse(await readFile(journalPath, 'utf8')) as { entries: Array<{ tag: string }> };
      const mine = journal.entries.findIndex((e) => e.tag.endsWith('_bigint_ids_stray_tokens_signer'));
      assert.ok(mine > 0, 'the int8 migration is in the journal');
      await writeFile(journalPath, JSON.stringify({ ...journal, entries: journal.entries.slice(0, mine) }));
      const sql = postgres(url.toString(), { max: 1, onnotice: () => {} });
      try {
        await migrate(drizzle(sql), { migrationsFolder: folder });
        const [before] = await sql`select data_type from information_schema.columns where table_name = 'transfers' and column_name = 'source_chain_id'`;
        assert.equal(before!.data_type, 'integer');
        await sql.unsafe(`
          insert into transfers (route_id, account_index, status, source_chain_id, dest_chain_id, hub_chain_id, symbol, dest_symbol,
            source_token, source_decimals, dest_token, dest_decimals, hub_token, hub_decimals, amount, quoted_output_amount, fee_amount,
            bridge_fee_amount, privacy_fee_amount, eta_seconds, route, deposit_address, hub_account, hub_is_smart_account, exit_account,
            user_destination_address, deposit_deadline)
          values ('rt_old', 2147483647, 'COMPLETED', 2147483647, 10, 8453, 'USDC', 'USDC', '0x01', 6, '0x02', 6, '0x03', 6, '1000', '900', '100',
            '0', '0', 60, '[]', '0xd', '0xh', false, '0xe', '0xr', now());
          insert into tx_intents (route_id, step, chain_id, from_address, nonce, tx_hash, raw_tx) values ('rt_old', 'payout', 2147483647, '0xf', 7, '0xa', '0xb');
          insert into ledger_entries (route_id, kind, entry_key, chain_id, token, amount) values ('rt_old', 'paid', 'paid', 10, '0x02', '900');
        `);
        await assert.rejects(sql`update transfers set source_chain_id = ${BIG_CHAIN_ID}`, /out of range/, 'the old columns are int4');
      } finally {
        await sql.end({ timeout: 5 });
      }

      await migrateDatabase(url.toString());

      const handle = connectDatabase(url.toString(), { max: 1 });
      try {
        const db = handle.db;
        const [old] = await db.select().from(transfers).where(eq(transfers.routeId, 'rt_old'));
        assert.equal(old!.accountIndex, 2147483647);
        assert.equal(old!.sourceChainId, 2147483647);
        assert.equal(old!.destChainId, 10);
        assert.equal(old!.amount, '1000');
        const [intent] = await db.select().from(txIntents).where(eq(txIntents.routeId, 'rt_old'));
        assert.deepEqual([intent!.chainId, intent!.nonce, intent!.txHash], [2147483647, 7, '0xa']);
        const [entry] = await db.select().from(ledgerEntries).where(eq(ledgerEntries.routeId, 'rt_old'));
        assert.equal(entry!.chainId, 10);

        await db
          .update(transfers)
          .set({ sourceChainId: BIG_CHAIN_ID, destChainId: Number.MAX_SAFE_INTEGER, accountIndex: 3_000_000_000 })
          .where(eq(transfers.routeId, 'rt_old'));
        await db.update(txIntents).set({ chainId: BIG_CHAIN_ID }).where(eq(txIntents.routeId, 'rt_old'));
        const [moved] = await db.select().from(transfers).where(eq(transfers.routeId, 'rt_old'));
        assert.deepEqual([moved!.sourceChainId, moved!.destChainId, moved!.accountIndex], [BIG_CHAIN_ID, Number.MAX_SAFE_INTEGER, 3_000_000_000]);
        const [movedIntent] = await db.select().from(txIntents).where(eq(txIntents.chainId, BIG_CHAIN_ID));
        assert.equal(movedIntent!.routeId, 'rt_old');
      } finally {
        await handle.close();
      }
      // Running the migrations again (every start does) changes nothing.
      await migrateDatabase(url.toString());
    } finally {
      await rm(folder, { recursive: true, force: true });
      await admin.unsafe(`drop database if exists "${database}" with (force)`).catch(() => {});
      await admin.end({ timeout: 5 });
    }
  });
});
