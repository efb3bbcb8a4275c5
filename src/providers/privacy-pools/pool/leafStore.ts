/**
 * Where a pool's final leaves are kept between worker starts (pool_leaves, pool_leaf_cursors), so the leaf scanner
 * (leafScanner.ts) reads only the blocks since, not every LeafInserted event since the pool's deployment.
 */
import { and, asc, eq, sql } from 'drizzle-orm';
import { getAddress, type Address } from 'viem';
import type { Database } from '../../../db/client.ts';
import { poolLeafCursors, poolLeaves } from '../../../db/schema.ts';

export interface StoredLeaves {
  /** Every leaf up to `scannedTo`, in tree order. */
  leaves: bigint[];
  scannedTo: bigint;
}

export interface LeafStore {
  load(pool: Address): Promise<StoredLeaves | null>;
  /** Adds the leaves from position `fromIndex` on and moves the cursor to `scannedTo`; idempotent. */
  save(pool: Address, fromIndex: number, leaves: bigint[], scannedTo: bigint): Promise<void>;
  /** Forgets the pool's leaves (they did not match its root): the next scan starts from the deployment. */
  clear(pool: Address): Promise<void>;
}

const INSERT_CHUNK = 1000;

export function createPostgresLeafStore(db: Database, chainId: number): LeafStore {
  const key = (pool: Address) => getAddress(pool);
  return {
    async load(pool) {
      const [cursor] = await db
        .select()
        .from(poolLeafCursors)
        .where(and(eq(poolLeafCursors.chainId, chainId), eq(poolLeafCursors.pool, key(pool))));
      if (!cursor) return null;
      const rows = await db
        .select({ leafIndex: poolLeaves.leafIndex, leaf: poolLeaves.leaf })
        .from(poolLeaves)
        .where(and(eq(poolLeaves.chainId, chainId), eq(poolLeaves.pool, key(pool))))
        .orderBy(asc(poolLeaves.leafIndex));
      // A gap (a save cut short before its cursor moved cannot make one, but a hand edit could): start over.
      if (rows.some((row, i) => row.leafIndex !== i)) return null;
      return { leaves: rows.map((row) => BigInt(row.leaf)), scannedTo: cursor.scannedTo };
    },
    async save(pool, fromIndex, leaves, scannedTo) {
      await db.transaction(async (tx) => {
        for (let i = 0; i < leaves.length; i += INSERT_CHUNK) {
          await tx
            .insert(poolLeaves)
            .values(leaves.slice(i, i + INSERT_CHUNK).map((leaf, j) => ({ chainId, pool: key(pool), leafIndex: fromIndex + i + j, leaf: leaf.toString() })))
            .onConflictDoUpdate({ target: [poolLeaves.chainId, poolLeaves.pool, poolLeaves.leafIndex], set: { leaf: sql`excluded.leaf` } });
        }
        await tx
          .insert(poolLeafCursors)
          .values({ chainId, pool: key(pool), scannedTo })
          .onConflictDoUpdate({ target: [poolLeafCursors.chainId, poolLeafCursors.pool], set: { scannedTo, updatedAt: new Date() } });
      });
    },
    async clear(pool) {
      await db.transaction(async (tx) => {
        await tx.delete(poolLeaves).where(and(eq(poolLeaves.chainId, chainId), eq(poolLeaves.pool, key(pool))));
        await tx.delete(poolLeafCursors).where(and(eq(poolLeafCursors.chainId, chainId), eq(poolLeafCursors.pool, key(pool))));
      });
    },
  };
}
