import { and, eq, like, min, or, sql } from 'drizzle-orm';
import type { Db } from '../db/client.ts';
import { bridgeOrders } from '../db/schema.ts';

/**
 * A route's bridge orders (table `bridge_orders`), one per leg key: `in` or `out` for a leg's first generation,
 * `in#2` and so on for later ones (activities/legs.ts, orderKey). An order replaced before it was funded is kept,
 * set aside under `<key>~<its requestId>`, because a concurrent attempt that read it may still fund it.
 */

/** One row of `bridge_orders`. */
export type BridgeOrder = typeof bridgeOrders.$inferSelect;

/** What a bridge provider promised for an order: its id, where to pay, what goes in and at least what comes out. */
export type OrderTerms = Pick<BridgeOrder, 'requestId' | 'depositAddress' | 'amountIn' | 'amountOut'>;

/** The order recorded under `key`, if any. */
export async function orderOf(db: Db, routeId: string, key: string): Promise<BridgeOrder | null> {
  const [row] = await db
    .select()
    .from(bridgeOrders)
    .where(and(eq(bridgeOrders.routeId, routeId), eq(bridgeOrders.leg, key)));
  return row ?? null;
}

/** Records the first order under `key`; one recorded meanwhile is kept. */
export async function recordOrder(db: Db, routeId: string, key: string, terms: OrderTerms): Promise<void> {
  await db
    .insert(bridgeOrders)
    .values({ routeId, leg: key, ...terms })
    .onConflictDoNothing();
}

/** Replaces the `recorded` order under its key with `terms`, setting the old one aside (unless another attempt replaced it first). */
export async function replaceOrder(db: Db, recorded: BridgeOrder, terms: OrderTerms): Promise<void> {
  await db.transaction(async (tx) => {
    await tx
      .insert(bridgeOrders)
      .values({ ...recorded, leg: `${recorded.leg}~${recorded.requestId}` })
      .onConflictDoNothing();
    await tx
      .update(bridgeOrders)
      .set({ ...terms, createdAt: sql`now()` })
      .where(and(eq(bridgeOrders.routeId, recorded.routeId), eq(bridgeOrders.leg, recorded.leg), eq(bridgeOrders.requestId, recorded.requestId)));
  });
}

/** The orders set aside under `key`. */
export function setAsideOrders(db: Db, routeId: string, key: string): Promise<BridgeOrder[]> {
  return db
    .select()
    .from(bridgeOrders)
    .where(and(eq(bridgeOrders.routeId, routeId), like(bridgeOrders.leg, `${key}~%`)));
}

/** When a leg's first order was recorded (any generation, set-aside orders too); null when it has none. */
export async function legFirstOrderedAt(db: Db, routeId: string, leg: 'in' | 'out'): Promise<Date | null> {
  const [row] = await db
    .select({ first: min(bridgeOrders.createdAt) })
    .from(bridgeOrders)
    .where(and(eq(bridgeOrders.routeId, routeId), or(eq(bridgeOrders.leg, leg), like(bridgeOrders.leg, `${leg}#%`), like(bridgeOrders.leg, `${leg}~%`))));
  return row?.first ?? null;
}
