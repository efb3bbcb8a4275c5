import { encodeFunctionData, parseEventLogs } from 'viem';
import type { PrivacyPool } from '../../privacyPool.ts';
import { poolAbi } from '../abi.ts';
import { ragequitStep, SEND_ATTEMPTS, untilNotReverted } from './attempts.ts';
import { depositSecrets, isSpent, nullifierHash, type PoolContext, poolOf } from './context.ts';
import { contractProof } from './contractProof.ts';
import { PoolNoteSpentError } from './errors.ts';

/** `PrivacyPool.ragequit`: the depositor takes the note back, a new attempt (proved anew) after each revert. */
export async function ragequit(
  ctx: PoolContext,
  { routeId, owner, note, noteIndex }: Parameters<PrivacyPool['ragequit']>[0],
): ReturnType<PrivacyPool['ragequit']> {
  const { sender, chainId, prover } = ctx;
  const pool = await poolOf(ctx, note.asset);
  const { nullifier, secret } = await depositSecrets(ctx, pool, noteIndex);
  // A reverted ragequit moved nothing: the next attempt looks at the note again and proves anew.
  return untilNotReverted(
    ragequitStep,
    async (step, attempt) => {
      if (!(await sender.intent(routeId, step))) {
        if (await isSpent(ctx, pool, nullifierHash(nullifier))) {
          // After a reverted attempt: a withdrawal spent the note first (the route's money is on its way out).
          if (attempt > 1) return null;
          throw new PoolNoteSpentError(`the pool note of route ${routeId} is already spent; nothing to ragequit`);
        }
        const proof = await prover.proveCommitment(note.value, BigInt(note.label), nullifier, secret);
        const data = encodeFunctionData({ abi: poolAbi, functionName: 'ragequit', args: [contractProof(proof, 4)] });
        // Signed, recorded and waited for: a fresh attempt that reverts is passed over like a recorded one.
        await sender.send({ routeId, step, chainId, account: owner, to: pool.address, data });
      }
      const { txHash, receipt } = await sender.send({ routeId, step, chainId, account: owner, to: pool.address });
      const [event] = parseEventLogs({ abi: poolAbi, eventName: 'Ragequit', logs: receipt.logs }).filter(
        (log) => log.address.toLowerCase() === pool.address.toLowerCase(),
      );
      if (!event) throw new Error('a ragequit transaction emitted no Ragequit event of the pool');
      return { txHash, amount: event.args._value };
    },
    `the ragequit of route ${routeId} reverted ${SEND_ATTEMPTS} times; an operator must look at the pool`,
  );
}
