import { and, asc, desc, eq, gte, max, ne, sql } from 'drizzle-orm';
import { type Address, type Hex, keccak256 } from 'viem';
import type { Database, Db } from '../db/client.ts';
import { txIntents } from '../db/schema.ts';
import type { ChainClients } from './clients.ts';

/**
 * The write-ahead records of the transaction sender (table `tx_intents`): how rows are found, locked, voided and
 * marked mined. The sender decides when (src/chain/sender/decide.ts); this module only says how, in SQL.
 */

/** A recorded send (one row of `tx_intents`). */
export type Intent = typeof txIntents.$inferSelect;

/** How operators and logs name an intent: no hash, no nonce (with the route beside them they would link a route's sends). */
export const describe = (row: Pick<Intent, 'id' | 'step'>) => `intent #${row.id} (${row.step})`;

/** Serialises everything that picks a nonce for, broadcasts for, or voids intents of one sender, until the transaction ends. */
export const lockSender = (tx: Db, chainId: number, from: string) =>
  tx.execute(sql`select pg_advisory_xact_lock(hashtext(${`${chainId}:${from.toLowerCase()}`}))`);

const sameSender = (chainId: number, from: string) => and(eq(txIntents.chainId, chainId), eq(txIntents.fromAddress, from));

export async function intentById(db: Db, id: number): Promise<Intent | null> {
  const [row] = await db.select().from(txIntents).where(eq(txIntents.id, id));
  return row ?? null;
}

/** Every intent ever recorded for a route's step, oldest first: at most one live (pending or mined), any number voided. */
export function stepRows(db: Db, routeId: string, step: string): Promise<Intent[]> {
  return db
    .select()
    .from(txIntents)
    .where(and(eq(txIntents.routeId, routeId), eq(txIntents.step, step)))
    .orderBy(asc(txIntents.id));
}

/** Voids a pending intent (a mined one is never voided; a voided one stays as it is). Returns the row as it now is. */
export async function markVoided(db: Db, row: Intent, reason: string): Promise<Intent> {
  const [voided] = await db
    .update(txIntents)
    .set({ status: 'voided', voidReason: reason })
    .where(and(eq(txIntents.id, row.id), eq(txIntents.status, 'pending')))
    .returning();
  return voided ?? (await intentById(db, row.id)) ?? row;
}

/**
 * Records that `hash`, an attempt of the intent, was mined. The status is decided in SQL from the row as it is
 * now, never from a caller's copy: a pending intent becomes mined; a voided one that mined after all becomes
 * mined too unless its step has signed anew meanwhile (one live row per step), in which case it only records
 * the hash. Returns the row as it now is.
 */
export async function markMined(db: Db, id: number, hash: string): Promise<Intent | null> {
  const [changed] = await db
    .update(txIntents)
    .set({ status: 'mined', minedTxHash: hash })
    .where(
      and(
        eq(txIntents.id, id),
        sql`(tx_intents.status = 'pending' or (tx_intents.status = 'voided' and not exists (
          select 1 from tx_intents live
          where live.route_id = tx_intents.route_id and live.step = tx_intents.step and live.status <> 'voided' and live.id <> tx_intents.id)))`,
      ),
    )
    .returning();
  if (changed) return changed;
  const [recorded] = await db.update(txIntents).set({ minedTxHash: hash }).where(eq(txIntents.id, id)).returning();
  return recorded ?? null;
}

/**
 * A mined intent whose block a reorg took: pending again, so its signed attempt is broadcast again. Its mined hash is
 * kept (a void refuses it: were the "reorg" a node lagging behind its block, voiding it would let the step sign anew),
 * and its attempt time is now (it is not replaced with higher fees at once). Returns the row as it now is.
 */
export async function markReorged(db: Db, row: Intent): Promise<Intent> {
  const [reopened] = await db
    .update(txIntents)
    .set({ status: 'pending', lastAttemptAt: new Date() })
    .where(and(eq(txIntents.id, row.id), eq(txIntents.status, 'mined')))
    .returning();
  return reopened ?? (await intentById(db, row.id)) ?? row;
}

/** A sender: the chain and the address that signs. */
export interface Sender {
  chainId: number;
  fromAddress: string;
}

/**
 * The sender's pending intents at nonce `fromNonce` and above (what the chain has not taken yet), by nonce then
 * id; `order` 'desc' gives the newest nonce first.
 */
export function pendingFrom(db: Db, sender: Sender, fromNonce: number, order: 'asc' | 'desc' = 'asc'): Promise<Intent[]> {
  const by = order === 'asc' ? asc : desc;
  return db
    .select()
    .from(txIntents)
    .where(and(sameSender(sender.chainId, sender.fromAddress), eq(txIntents.status, 'pending'), gte(txIntents.nonce, fromNonce)))
    .orderBy(by(txIntents.nonce), by(txIntents.id));
}

/** The highest nonce among the sender's pending intents at `fromNonce` and above; null when there is none. */
export async function highestPendingNonce(db: Db, sender: Sender, fromNonce: number): Promise<number | null> {
  const [queued] = await db
    .select({ last: max(txIntents.nonce) })
    .from(txIntents)
    .where(and(sameSender(sender.chainId, sender.fromAddress), eq(txIntents.status, 'pending'), gte(txIntents.nonce, fromNonce)));
  return queued?.last ?? null;
}

/** The sender's newest intent at `nonce` in `status` (pending: what waits at the head of its queue), if any. */
export async function intentAtNonce(db: Db, sender: Sender, nonce: number, status: 'pending' | 'mined' = 'pending'): Promise<Intent | null> {
  const [row] = await db
    .select()
    .from(txIntents)
    .where(and(sameSender(sender.chainId, sender.fromAddress), eq(txIntents.nonce, nonce), eq(txIntents.status, status)))
    .orderBy(desc(txIntents.id))
    .limit(1);
  return row ?? null;
}

/** A route's pending intents, of every sender. */
export function pendingOfRoute(db: Db, routeId: string): Promise<Intent[]> {
  return db
    .select()
    .from(txIntents)
    .where(and(eq(txIntents.routeId, routeId), eq(txIntents.status, 'pending')));
}

/** Whether a cancel of intent `row` (step `cancel:<id>`, same sender and nonce) is pending. */
export async function cancelPending(db: Db, row: Intent): Promise<boolean> {
  const cancels = await db
    .select({ id: txIntents.id })
    .from(txIntents)
    .where(
      and(sameSender(row.chainId, row.fromAddress), eq(txIntents.nonce, row.nonce), eq(txIntents.status, 'pending'), eq(txIntents.step, `cancel:${row.id}`)),
    );
  return cancels.length > 0;
}

/** Records a signed transaction before it is broadcast (the write-ahead record). */
export async function recordIntent(
  db: Db,
  values: Pick<typeof txIntents.$inferInsert, 'routeId' | 'step' | 'chainId' | 'fromAddress' | 'nonce' | 'rawTx'>,
): Promise<Intent> {
  const [row] = await db
    .insert(txIntents)
    .values({ ...values, txHash: keccak256(values.rawTx as Hex) })
    .returning();
  if (!row) throw new Error(`the intent of ${values.routeId}/${values.step} was not recorded`);
  return row;
}

/** Records a new attempt of `current` (same nonce, the newly signed `rawTx`), keeping the earlier hash. */
export async function recordAttempt(db: Db, current: Intent, rawTx: Hex): Promise<Intent> {
  const [next] = await db
    .update(txIntents)
    .set({
      txHash: keccak256(rawTx),
      rawTx,
      attempt: current.attempt + 1,
      earlierTxHashes: [...current.earlierTxHashes, current.txHash],
      lastAttemptAt: new Date(),
    })
    .where(eq(txIntents.id, current.id))
    .returning();
  return next ?? current;
}

/** Other intents of the same sender at the same nonce (replacements by `routectl void --cancel`, or a step signed anew). */
export function nonceSiblings(db: Db, row: Intent): Promise<Intent[]> {
  return db
    .select()
    .from(txIntents)
    .where(and(sameSender(row.chainId, row.fromAddress), eq(txIntents.nonce, row.nonce), ne(txIntents.id, row.id)));
}

/** A live intent as `routectl senders` shows it. */
export interface QueuedIntent {
  id: number;
  routeId: string;
  step: string;
  chainId: number;
  sender: string;
  nonce: number;
  attempts: number;
  ageSeconds: number;
  sinceLastAttemptSeconds: number;
  /** The sender's next nonce to mine: everything else of this sender waits for it. */
  head: boolean;
  /** A node has it (in its mempool); false: never broadcast, or rejected or dropped. */
  atNode: boolean;
}

/** Every sender's queue: live intents whose nonce the chain has not used yet, oldest nonce first. */
export async function senderQueues(db: Database, clients: ChainClients): Promise<QueuedIntent[]> {
  const live = await db
    .select()
    .from(txIntents)
    .where(eq(txIntents.status, 'pending'))
    .orderBy(asc(txIntents.chainId), asc(txIntents.fromAddress), asc(txIntents.nonce));
  const senders = new Map<string, { chainId: number; from: Address }>();
  for (const row of live) senders.set(`${row.chainId}:${row.fromAddress}`, { chainId: row.chainId, from: row.fromAddress as Address });
  const counts = new Map<string, { latest: number; pending: number }>();
  await Promise.all(
    [...senders.entries()].map(async ([key, { chainId, from }]) => {
      const publicClient = clients.publicClient(chainId);
      const [latest, pending] = await Promise.all([
        publicClient.getTransactionCount({ address: from, blockTag: 'latest' }),
        publicClient.getTransactionCount({ address: from, blockTag: 'pending' }),
      ]);
      counts.set(key, { latest, pending });
    }),
  );
  const now = Date.now();
  return live.flatMap((row) => {
    const count = counts.get(`${row.chainId}:${row.fromAddress}`);
    if (!count || row.nonce < count.latest) return [];
    return [
      {
        id: row.id,
        routeId: row.routeId,
        step: row.step,
        chainId: row.chainId,
        sender: row.fromAddress,
        nonce: row.nonce,
        attempts: row.attempt,
        ageSeconds: Math.round((now - row.createdAt.getTime()) / 1000),
        sinceLastAttemptSeconds: Math.round((now - row.lastAttemptAt.getTime()) / 1000),
        head: row.nonce === count.latest,
        atNode: row.nonce < count.pending,
      },
    ];
  });
}
