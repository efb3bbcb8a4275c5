import type { PoolNote } from '../../privacyPool.ts';
import { depositSecrets, isSpent, nullifierHash, type PoolContext, poolOf } from './context.ts';

/** `PrivacyPool.unspent`: the note's value while its nullifier is unused, 0 once it is spent. */
export async function unspent(ctx: PoolContext, note: PoolNote, noteIndex: number): Promise<bigint> {
  const pool = await poolOf(ctx, note.asset);
  const { nullifier } = await depositSecrets(ctx, pool, noteIndex);
  return (await isSpent(ctx, pool, nullifierHash(nullifier))) ? 0n : note.value;
}
