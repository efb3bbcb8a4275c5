import { and, eq, inArray, or, sql } from 'drizzle-orm';
import { drizzle } from 'drizzle-orm/postgres-js';
import postgres from 'postgres';
import { type Address, getAddress, isAddress } from 'viem';
import type { RouteAddresses } from '../../accounts/routeAccounts.ts';
import { bridgeOrders, changeNotes, depositTokens, depositTransfers, ledgerEntries, operatorActions, poolNotes, transfers } from '../../db/schema.ts';
import { type RouteAmounts, capOf } from './caps.ts';
import type { RouteFacts } from './rules.ts';

/**
 * What the signer reads of the service's records, read-only (its own connection, every transaction read-only, so a
 * role with more rights still writes nothing): the route of an account index or of an address, and the pool notes.
 * The route's own accounts are derived by the signer from the index, never read.
 */
export interface RouteRecords {
  routeOfIndex(index: number): Promise<RouteFacts | undefined>;
  /**
   * The route whose own account, recipient or bridge order deposit address `address` is (the newest, if several);
   * `ownOnly`: whose own account it is (a recipient is anyone's to name, so it must not hide another route's account).
   */
  routeOfAddress(address: Address, opts?: { ownOnly?: boolean }): Promise<RouteFacts | undefined>;
  /** Every route (the newest 20) whose own account, recipient or bridge order deposit address `address` is. */
  routesOfAddress(address: Address): Promise<RouteFacts[]>;
  /** Whether a pool note with this label is recorded (the change note's secrets are asked by label). */
  noteWithLabel(label: bigint): Promise<{ routeId: string } | undefined>;
  /** The change note of this label and generation, if recorded (an income sweep asks for its secrets). */
  changeNoteAt(label: bigint, generation: number): Promise<{ routeId: string } | undefined>;
  close(): Promise<void>;
}

export function connectRouteRecords(opts: { url: string; hubSymbol: string; ownAccounts(index: number): RouteAddresses }): RouteRecords {
  const client = postgres(opts.url, { max: 4, onnotice: () => {}, connection: { default_transaction_read_only: true } });
  const db = drizzle(client);

  async function factsOf(route: typeof transfers.$inferSelect): Promise<RouteFacts> {
    const [orders, funding, ledger, strays, actions] = await Promise.all([
      db.select().from(bridgeOrders).where(eq(bridgeOrders.routeId, route.routeId)),
      db.select({ value: depositTransfers.value }).from(depositTransfers).where(eq(depositTransfers.routeId, route.routeId)),
      db.select().from(ledgerEntries).where(eq(ledgerEntries.routeId, route.routeId)),
      db.select({ token: depositTokens.token }).from(depositTokens).where(eq(depositTokens.routeId, route.routeId)),
      // Refunds and recoveries an operator asked for and that were not refused.
      db
        .select({ params: operatorActions.params })
        .from(operatorActions)
        .where(
          and(
            eq(operatorActions.routeId, route.routeId),
            inArray(operatorActions.action, ['refund', 'recover']),
            inArray(operatorActions.outcome, ['requested', 'done']),
          ),
        ),
    ]);
    // Not the senders of transfers into the deposit address: anyone can add one by sending dust (or a forged zero-value
    // transferFrom). Refunds go to the refund address, the recipient (address reuse) or where an operator said.
    const payees = [
      route.userDestinationAddress,
      route.refundAddress,
      ...orders.map((o) => o.depositAddress),
      // An operator's refund or recovery names its destination in its audit row (routectl refund --to, recover --to).
      ...actions.map((a) => a.params.to),
    ].filter((a): a is string => typeof a === 'string' && isAddress(a, { strict: false }));
    const amounts: RouteAmounts = {
      sourceChainId: route.sourceChainId,
      hubChainId: route.hubChainId,
      destChainId: route.destChainId,
      tokens: { source: route.sourceToken as Address, hub: route.hubToken as Address, dest: route.destToken as Address },
      decimals: { source: route.sourceDecimals, hub: route.hubDecimals, dest: route.destDecimals },
      symbols: { source: route.symbol, hub: opts.hubSymbol, dest: route.destSymbol },
      amount: BigInt(route.amount),
      quotedOutputAmount: BigInt(route.quotedOutputAmount),
      funded: funding.reduce((sum, f) => sum + BigInt(f.value), 0n),
      orders: orders.map((o) => ({ leg: o.leg, amountIn: BigInt(o.amountIn), amountOut: BigInt(o.amountOut) })),
      ledger: ledger.map((l) => ({ chainId: l.chainId, token: l.token, amount: BigInt(l.amount) })),
      strays: strays.map((s) => s.token as Address),
    };
    return {
      routeId: route.routeId,
      accountIndex: route.accountIndex,
      own: opts.ownAccounts(route.accountIndex),
      payees: [...new Set(payees.map((a) => getAddress(a)))],
      capOf: (chainId, token) => capOf(amounts, chainId, token),
    };
  }

  function routesMatching(address: Address, ownOnly: boolean, limit: number) {
    const lower = address.toLowerCase();
    const byOrder = db.select({ routeId: bridgeOrders.routeId }).from(bridgeOrders).where(sql`lower(${bridgeOrders.depositAddress}) = ${lower}`);
    const own = [
      sql`lower(${transfers.depositAddress}) = ${lower}`,
      sql`lower(${transfers.hubAccount}) = ${lower}`,
      sql`lower(${transfers.exitAccount}) = ${lower}`,
    ];
    const named = ownOnly ? [] : [sql`lower(${transfers.userDestinationAddress}) = ${lower}`, inArray(transfers.routeId, byOrder)];
    return db
      .select()
      .from(transfers)
      .where(or(...own, ...named))
      .orderBy(sql`${transfers.createdAt} desc`)
      .limit(limit);
  }

  return {
    async routeOfIndex(index) {
      const [route] = await db.select().from(transfers).where(eq(transfers.accountIndex, index));
      return route && factsOf(route);
    },
    async routeOfAddress(address, { ownOnly = false } = {}) {
      const [route] = await routesMatching(address, ownOnly, 1);
      return route && factsOf(route);
    },
    async routesOfAddress(address) {
      return Promise.all((await routesMatching(address, false, 20)).map(factsOf));
    },
    async noteWithLabel(label) {
      const [note] = await db
        .select({ routeId: poolNotes.routeId })
        .from(poolNotes)
        .where(and(eq(poolNotes.label, label.toString())));
      return note;
    },
    async changeNoteAt(label, generation) {
      const [note] = await db
        .select({ routeId: changeNotes.routeId })
        .from(changeNotes)
        .where(and(eq(changeNotes.label, label.toString()), eq(changeNotes.generation, generation)));
      return note;
    },
    close: () => client.end({ timeout: 5 }),
  };
}
