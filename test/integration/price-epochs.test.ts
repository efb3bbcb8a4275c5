import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { eq } from 'drizzle-orm';
import { connectDatabase, type DatabaseHandle } from '../../src/db/client.ts';
import { priceEpochs } from '../../src/db/schema.ts';
import { createPriceEpochs, type PriceEpochs } from '../../src/quote/priceEpochs.ts';
import { startTestPostgres, type TestPostgres } from '../support/database.ts';

/**
 * Price epochs in Postgres, as two API processes share them: one held price per token and epoch whoever quotes, a new
 * epoch for everyone once the market leaves the held price, and no process quoting from an epoch another one ended.
 */
let postgres: TestPostgres;
let first: DatabaseHandle;
let second: DatabaseHandle;
let clock = new Date('2026-11-26T10:05:00Z');
const settings = { epochSeconds: 3600, marginBps: 50 };
let a: PriceEpochs;
let b: PriceEpochs;
const WETH = { chainId: 7113003, address: '0x00000000000000000000000000000000000000Ee' };
const at = (iso: string) => {
  clock = new Date(iso);
};
const heldBy = async (epochs: PriceEpochs, live: string) => (await epochs.held(WETH, async () => live))!;

before(
  async () => {
    postgres = await startTestPostgres('price-epochs');
    first = connectDatabase(postgres.url);
    second = connectDatabase(postgres.url);
    a = createPriceEpochs(first.db, settings, () => clock);
    b = createPriceEpochs(second.db, settings, () => clock);
  },
  { timeout: 120_000 },
);
after(
  async () => {
    await first?.close();
    await second?.close();
    await postgres?.stop();
  },
  { timeout: 60_000 },
);

describe('price epochs shared through Postgres', { timeout: 60_000 }, () => {
  test('the first quote of an epoch sets the price every process holds until the clock ends it', async () => {
    at('2026-11-26T10:05:00Z');
    const started = await heldBy(a, '2500');
    assert.deepEqual(started, { usdPrice: '2500', startedAt: new Date('2026-11-26T10:05:00Z'), endsAt: new Date('2026-11-26T11:00:00Z') });
    at('2026-11-26T10:10:00Z');
    assert.equal((await heldBy(b, '2504')).usdPrice, '2500', 'another process, the market 16 bps away: the same held price');
    at('2026-11-26T11:00:00Z');
    assert.deepEqual(await heldBy(b, '2504'), { usdPrice: '2504', startedAt: clock, endsAt: new Date('2026-11-26T12:00:00Z') });
  });

  test('a market that leaves the held price by more than half the margin starts a new epoch for every process', async () => {
    at('2026-11-26T11:20:00Z');
    assert.equal((await heldBy(b, '2440')).usdPrice, '2440', '2.6 % down: a new epoch');
    at('2026-11-26T11:21:00Z');
    assert.equal((await heldBy(a, '2441')).usdPrice, '2440', 'the other process quotes from the new epoch, not one it saw before');
    const rows = await first.db
      .select()
      .from(priceEpochs)
      .where(eq(priceEpochs.token, `${WETH.chainId}:${WETH.address.toLowerCase()}`));
    const ended = rows.find((r) => r.usdPrice === '2504');
    assert.deepEqual(ended?.endsAt, new Date('2026-11-26T11:20:00Z'), 'the epoch the market left ended then');
  });

  test('aligned with exit epochs: a check in one process holds for the exit epoch in every process; the hard stop does not wait', async () => {
    const aligned = { epochSeconds: 3600, marginBps: 100, holdBps: 50, alignSeconds: 600 };
    const p = createPriceEpochs(first.db, aligned, () => clock);
    const q = createPriceEpochs(second.db, aligned, () => clock);
    const SOL = { chainId: 7113003, address: '0x00000000000000000000000000000000000000501' };
    const held = async (epochs: PriceEpochs, live: string) => (await epochs.held(SOL, async () => live))!;
    at('2026-11-26T15:02:00Z');
    assert.equal((await held(p, '100')).usdPrice, '100');
    at('2026-11-26T15:10:30Z');
    assert.deepEqual((await held(q, '100.3')).checkedUntil, new Date('2026-11-26T15:20:00Z'), 'checked at 30 bps: kept, for this exit epoch');
    at('2026-11-26T15:15:00Z');
    assert.equal((await held(p, '100.6')).usdPrice, '100', 'the other process: 60 bps past the hold, but the exit epoch was checked');
    at('2026-11-26T15:20:10Z');
    assert.equal((await held(p, '100.6')).usdPrice, '100.6', 'the next exit epoch checks again: a new epoch');
    at('2026-11-26T15:21:00Z');
    assert.equal((await held(q, '101.4')).usdPrice, '101.4', '79 bps: past the hard stop, at once');
  });

  test('concurrent first quotes of an epoch agree on one price and write one epoch', async () => {
    at('2026-11-26T13:30:00Z');
    const held = await Promise.all(Array.from({ length: 12 }, (_, i) => heldBy(i % 2 ? a : b, i % 2 ? '2600' : '2601')));
    assert.equal(new Set(held.map((h) => `${h.usdPrice}@${h.startedAt.toISOString()}`)).size, 1, JSON.stringify(held));
    const rows = await first.db.select().from(priceEpochs).where(eq(priceEpochs.startedAt, clock));
    assert.equal(rows.length, 1);
  });
});
