import { createHash } from 'node:crypto';
import { BPS, type UsdPrice } from './pricing.ts';

/**
 * Emulator prices that drift: a seeded random walk per symbol, so quotes move like a real solver's.
 *
 * After k steps, p_k = p_{k-1} · (10000 + d_k) / 10000, where d_k is drawn uniformly from
 * [-volatilityBps, +volatilityBps] by hashing (seed, symbol, k). The price at a moment is therefore a
 * pure function of (seed, symbol, starting price, k): emulators sharing a seed and start time agree.
 */

export interface PriceWalkOptions {
  /** The same seed always gives the same walk. */
  seed: string;
  /** Length of one step in ms; a price changes at most once per step. */
  stepMs: number;
  /** The largest move of one step, in basis points; 0 keeps prices fixed. */
  volatilityBps: number;
  /** Symbols whose price never moves. Default ['USDC']. */
  stableSymbols?: string[];
}

export const DEFAULT_STABLE_SYMBOLS = ['USDC'];

/** Walked prices are rounded down to 18 decimal places after each step, so the bigints stay small. */
const SCALE = 10n ** 18n;

export function validatePriceWalk(walk: PriceWalkOptions): PriceWalkOptions {
  if (!Number.isFinite(walk.stepMs) || walk.stepMs <= 0) throw new Error(`priceWalk.stepMs must be a positive number (got ${walk.stepMs})`);
  if (!Number.isInteger(walk.volatilityBps) || walk.volatilityBps < 0 || walk.volatilityBps >= Number(BPS)) {
    throw new Error(`priceWalk.volatilityBps must be an integer in [0, ${BPS}) (got ${walk.volatilityBps})`);
  }
  return walk;
}

/** d_k of `symbol`: an integer in [-volatilityBps, +volatilityBps]. */
export function stepBps(seed: string, symbol: string, k: number, volatilityBps: number): bigint {
  const digest = createHash('sha256')
    .update(JSON.stringify([seed, symbol, k]))
    .digest('hex');
  const span = 2n * BigInt(volatilityBps) + 1n;
  // 256 hashed bits reduced modulo fewer than 20,000 values: the bias is far too small to matter.
  return (BigInt(`0x${digest}`) % span) - BigInt(volatilityBps);
}

/** One step: price · (10000 + d) / 10000, rounded down to 18 decimals, never below 10^-18 USD. */
export function nextPrice(price: UsdPrice, d: bigint): UsdPrice {
  const numerator = (price.numerator * (BPS + d) * SCALE) / (price.denominator * BPS);
  return { numerator: numerator > 0n ? numerator : 1n, denominator: SCALE };
}

export function moves(symbol: string, walk: PriceWalkOptions | undefined): walk is PriceWalkOptions {
  return walk !== undefined && walk.volatilityBps > 0 && !(walk.stableSymbols ?? DEFAULT_STABLE_SYMBOLS).includes(symbol);
}

/** The price of `symbol` after step k, walking from step `from` (default: the start, step 0). */
export function walkPrice(symbol: string, k: number, walk: PriceWalkOptions | undefined, from: { k: number; price: UsdPrice }): UsdPrice {
  if (!moves(symbol, walk)) return from.price;
  let price = from.price;
  for (let i = from.k + 1; i <= k; i++) price = nextPrice(price, stepBps(walk.seed, symbol, i, walk.volatilityBps));
  return price;
}

/** The step index of epoch-ms `t`; times before the start count as step 0. */
export function stepIndex(t: number, startedAt: number, stepMs: number): number {
  return Math.max(0, Math.floor((t - startedAt) / stepMs));
}

export interface PriceFeed {
  /** The USD price of every symbol at epoch ms `t` (default: now). */
  pricesAt(t?: number): Map<string, UsdPrice>;
}

/**
 * The emulator's prices over time. Without a walk (or with volatility 0) they are the starting
 * prices forever. Each symbol remembers its last computed step, so moving forward in time costs only
 * the new steps; asking about an earlier time than the last one walks again from the start.
 */
export function createPriceFeed(opts: { startPrices: Map<string, UsdPrice>; walk?: PriceWalkOptions; startedAt: number; now: () => number }): PriceFeed {
  const walk = opts.walk && validatePriceWalk(opts.walk);
  const latest = new Map<string, { k: number; price: UsdPrice }>();

  const priceAtStep = (symbol: string, start: UsdPrice, k: number): UsdPrice => {
    const cached = latest.get(symbol);
    const from = cached && cached.k <= k ? cached : { k: 0, price: start };
    const price = walkPrice(symbol, k, walk, from);
    latest.set(symbol, { k, price });
    return price;
  };

  return {
    pricesAt(t = opts.now()) {
      const k = walk ? stepIndex(t, opts.startedAt, walk.stepMs) : 0;
      return new Map([...opts.startPrices].map(([symbol, start]) => [symbol, priceAtStep(symbol, start, k)]));
    },
  };
}
