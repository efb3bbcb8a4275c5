import { and, desc, eq, gt, lte, sql } from 'drizzle-orm';
import type { Database } from '../db/client.ts';
import { priceEpochs } from '../db/schema.ts';
import { parseDecimal } from '../money/amount.ts';

/**
 * Price epochs (docs/privacy.md, "Price epochs"): a cross-asset quote converts at a token's USD price held for an
 * epoch, not at the live price of the moment, so that a payout does not encode when its transfer was created. Epochs
 * follow a public clock (PRICE_EPOCH_SECONDS: every epoch ends at a multiple of it, UTC). The market ends one early in
 * two ways (then every later quote, whoever asks, gets the new price: creations still share epochs):
 * - at an exit epoch's start (`alignSeconds`, PRIVACY_EXIT_EPOCH_SECONDS), the first quote checks the held price
 *   against the live one, and a price the market has left by more than `holdBps` (PRICE_EPOCH_HOLD_BPS) is replaced:
 *   between those checks an excursion that comes back ends nothing, and an epoch's early end falls on the exit clock
 *   (issue 33: with a check at every quote, ordinary ETH volatility ended epochs every 5–20 minutes);
 * - at any moment, past the midpoint between `holdBps` and the margin (`hardStopBps`): the quote never promises more
 *   than the market gives less half of what the margin keeps beyond the hold.
 */

export interface PriceEpochSettings {
  /** Length of an epoch on the clock. */
  epochSeconds: number;
  /** Cross-asset conversions give up this much of the held price (PRICE_EPOCH_MARGIN_BPS). */
  marginBps: number;
  /** The band checked at exit epoch starts (PRICE_EPOCH_HOLD_BPS); unset: half the margin. */
  holdBps?: number;
  /** The exit epoch (PRIVACY_EXIT_EPOCH_SECONDS): the band is checked once per such slot; unset or 0: at every quote. */
  alignSeconds?: number;
}

export interface HeldPrice {
  /** USD per whole token, as a decimal string. */
  usdPrice: string;
  startedAt: Date;
  endsAt: Date;
  /** The end of the exit epoch in which the band was last checked: no check again before it. */
  checkedUntil?: Date;
}

export interface PriceEpochs {
  /** The USD price of `token` held for the current epoch; `live()` is asked for the price now (null: unpriced). */
  held(token: { chainId: number; address: string }, live: () => Promise<string | null>): Promise<HeldPrice | null>;
}

/** How a token's epochs are keyed: `<chainId>:<address, lowercase>`. */
const tokenKey = (token: { chainId: number; address: string }) => `${token.chainId}:${token.address.toLowerCase()}`;

/** The end of the clock epoch that contains `now`. */
export function epochEnd(now: Date, epochSeconds: number): Date {
  const length = epochSeconds * 1000;
  return new Date(Math.floor(now.getTime() / length) * length + length);
}

/** The band checked at exit epoch starts, and the move that ends an epoch at once (bps). */
export function holdBands(settings: PriceEpochSettings): { holdBps: number; hardStopBps: number } {
  const holdBps = settings.holdBps ?? settings.marginBps / 2;
  return { holdBps, hardStopBps: (holdBps + settings.marginBps) / 2 };
}

/** Whether `live` has moved more than `bps` away from `held` (either way). */
export function movedBeyond(held: string, live: string, bps: number): boolean {
  const a = parseDecimal(held);
  const b = parseDecimal(live);
  // |b/a − 1| > bps/10000  ⇔  |b·a.scale − a·b.scale| · 10000 > bps · a · b.scale   (all scaled to integers; bps may be
  // fractional: both sides times 2)
  const heldScaled = a.units * b.scale;
  const liveScaled = b.units * a.scale;
  const moved = liveScaled > heldScaled ? liveScaled - heldScaled : heldScaled - liveScaled;
  return moved * 20_000n > BigInt(Math.round(bps * 2)) * heldScaled;
}

/**
 * What a quote at `now` does with the current epoch: `keep` it; `checked`: keep it, and record that the band was
 * checked in this exit epoch (`checkedUntil`); `start` a new epoch at the live price.
 */
export function decideEpoch(
  current: HeldPrice | null,
  live: string,
  now: Date,
  settings: PriceEpochSettings,
): { action: 'keep'; held: HeldPrice } | { action: 'checked'; held: HeldPrice } | { action: 'start' } {
  if (!current || current.startedAt > now || current.endsAt <= now) return { action: 'start' };
  const { holdBps, hardStopBps } = holdBands(settings);
  if (movedBeyond(current.usdPrice, live, hardStopBps)) return { action: 'start' };
  if (!settings.alignSeconds) return movedBeyond(current.usdPrice, live, holdBps) ? { action: 'start' } : { action: 'keep', held: current };
  if (current.checkedUntil && now < current.checkedUntil) return { action: 'keep', held: current };
  if (movedBeyond(current.usdPrice, live, holdBps)) return { action: 'start' };
  return { action: 'checked', held: { ...current, checkedUntil: epochEnd(now, settings.alignSeconds) } };
}

/** A new epoch at the live price, from `now` to the end of its clock epoch, checked for the exit epoch it starts in. */
export function newEpoch(live: string, now: Date, settings: PriceEpochSettings): HeldPrice {
  const held = { usdPrice: live, startedAt: now, endsAt: epochEnd(now, settings.epochSeconds) };
  return settings.alignSeconds ? { ...held, checkedUntil: epochEnd(now, settings.alignSeconds) } : held;
}

/**
 * Price epochs kept in Postgres (table price_epochs), so every API instance and the worker hold the same price: the
 * first quote of an epoch writes it, under a per-token lock, and the others read it (each quote reads the current
 * epoch, one indexed row: a process never quotes from an epoch another one has ended).
 */
export function createPriceEpochs(db: Database, settings: PriceEpochSettings, now: () => Date = () => new Date()): PriceEpochs {
  /** The epoch of `token` that holds at `at`, read through `reader` (the pool, or a transaction holding the token's lock). */
  async function currentEpoch(reader: Pick<Database, 'select'>, token: string, at: Date): Promise<HeldPrice | null> {
    const [row] = await reader
      .select()
      .from(priceEpochs)
      .where(and(eq(priceEpochs.token, token), lte(priceEpochs.startedAt, at), gt(priceEpochs.endsAt, at)))
      .orderBy(desc(priceEpochs.startedAt))
      .limit(1);
    if (!row) return null;
    const held = { usdPrice: row.usdPrice, startedAt: row.startedAt, endsAt: row.endsAt };
    return row.checkedUntil ? { ...held, checkedUntil: row.checkedUntil } : held;
  }

  /** Under the token's lock: what another process decided meanwhile, else this quote's decision, written. */
  async function decideLocked(token: string, live: string, at: Date): Promise<HeldPrice> {
    return db.transaction(async (tx) => {
      await tx.execute(sql`select pg_advisory_xact_lock(hashtext(${`price-epoch:${token}`}))`);
      const current = await currentEpoch(tx, token, at);
      const decided = decideEpoch(current, live, at, settings);
      if (decided.action === 'keep') return decided.held;
      const key = (startedAt: Date) => and(eq(priceEpochs.token, token), eq(priceEpochs.startedAt, startedAt));
      if (decided.action === 'checked') {
        await tx.update(priceEpochs).set({ checkedUntil: decided.held.checkedUntil }).where(key(decided.held.startedAt));
        return decided.held;
      }
      if (current) await tx.update(priceEpochs).set({ endsAt: at }).where(key(current.startedAt));
      const started = newEpoch(live, at, settings);
      await tx
        .insert(priceEpochs)
        .values({ token, ...started })
        .onConflictDoNothing();
      return started;
    });
  }

  return {
    async held(token, live) {
      const price = await live();
      if (price === null) return null;
      const at = now();
      const key = tokenKey(token);
      const decided = decideEpoch(await currentEpoch(db, key, at), price, at, settings);
      return decided.action === 'keep' ? decided.held : decideLocked(key, price, at);
    },
  };
}

/** Price epochs held in this process only: for a single process, and for tests. */
export function createInMemoryPriceEpochs(settings: PriceEpochSettings, now: () => Date = () => new Date()): PriceEpochs {
  const current = new Map<string, HeldPrice>();
  return {
    async held(token, live) {
      const price = await live();
      if (price === null) return null;
      const at = now();
      const decided = decideEpoch(current.get(tokenKey(token)) ?? null, price, at, settings);
      const held = decided.action === 'start' ? newEpoch(price, at, settings) : decided.held;
      current.set(tokenKey(token), held);
      return held;
    },
  };
}
