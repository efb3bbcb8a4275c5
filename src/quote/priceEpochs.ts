import { and, desc, eq, gt, lte, sql } from 'drizzle-orm';
import type { Database } from '../db/client.ts';
import { priceEpochs } from '../db/schema.ts';
import { parseDecimal } from '../money/amount.ts';

/**
 * Price epochs (docs/privacy.md, "Price epochs"): a cross-asset quote converts at a token's USD price held for an
 * epoch, not at the live price of the moment, so that a payout does not encode when its transfer was created. Epochs
 * follow a public clock (PRICE_EPOCH_SECONDS: every epoch ends at a multiple of it, UTC); an epoch starts early when
 * the live price has moved more than half of PRICE_EPOCH_MARGIN_BPS away from the held one (then every later quote,
 * whoever asks, gets the new price: creations still share epochs, only the epoch's start is set by the market).
 */

export interface PriceEpochSettings {
  /** Length of an epoch on the clock. */
  epochSeconds: number;
  /** Cross-asset conversions give up this much of the held price; the price is held while it moves less than half of it. */
  marginBps: number;
}

export interface HeldPrice {
  /** USD per whole token, as a decimal string. */
  usdPrice: string;
  startedAt: Date;
  endsAt: Date;
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

/** Whether `live` has moved more than half the margin away from `held` (either way), so a new epoch starts. */
export function movedBeyondHold(held: string, live: string, marginBps: number): boolean {
  const a = parseDecimal(held);
  const b = parseDecimal(live);
  // |b/a − 1| > margin/2  ⇔  |b·a.scale − a·b.scale| · 20000 > margin · a · b.scale   (all scaled to integers)
  const heldScaled = a.units * b.scale;
  const liveScaled = b.units * a.scale;
  const moved = liveScaled > heldScaled ? liveScaled - heldScaled : heldScaled - liveScaled;
  return moved * 20_000n > BigInt(marginBps) * heldScaled;
}

/** The held price if it is still current at `now` and the market has not left it; null: a new epoch must start. */
export function stillHeld(current: HeldPrice | null, live: string, now: Date, settings: PriceEpochSettings): HeldPrice | null {
  if (!current || current.startedAt > now || current.endsAt <= now) return null;
  return movedBeyondHold(current.usdPrice, live, settings.marginBps) ? null : current;
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
    return row ? { usdPrice: row.usdPrice, startedAt: row.startedAt, endsAt: row.endsAt } : null;
  }

  /** Under the token's lock: the epoch another process started meanwhile, or a new one at the live price. */
  async function startOrJoin(token: string, live: string, at: Date): Promise<HeldPrice> {
    return db.transaction(async (tx) => {
      await tx.execute(sql`select pg_advisory_xact_lock(hashtext(${`price-epoch:${token}`}))`);
      const current = await currentEpoch(tx, token, at);
      const kept = stillHeld(current, live, at, settings);
      if (kept) return kept;
      if (current)
        await tx
          .update(priceEpochs)
          .set({ endsAt: at })
          .where(and(eq(priceEpochs.token, token), eq(priceEpochs.startedAt, current.startedAt)));
      const started = { usdPrice: live, startedAt: at, endsAt: epochEnd(at, settings.epochSeconds) };
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
      return stillHeld(await currentEpoch(db, tokenKey(token), at), price, at, settings) ?? (await startOrJoin(tokenKey(token), price, at));
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
      const held = stillHeld(current.get(tokenKey(token)) ?? null, price, at, settings) ?? {
        usdPrice: price,
        startedAt: at,
        endsAt: epochEnd(at, settings.epochSeconds),
      };
      current.set(tokenKey(token), held);
      return held;
    },
  };
}
