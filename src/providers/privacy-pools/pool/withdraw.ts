import { getCommitment, type Secret } from '@0xbow/privacy-pools-core-sdk';
import { encodeFunctionData, parseEventLogs } from 'viem';
import type { SentTransaction } from '../../../chain/txSender.ts';
import type { PoolWithdrawal, PrivacyPool } from '../../privacyPool.ts';
import { entrypointAbi } from '../abi.ts';
import { GAS_HEADROOM_PERCENT, minedAttempt, SEND_ATTEMPTS, untilNotReverted, withdrawalStep } from './attempts.ts';
import { blockTime, depositSecrets, isSpent, nullifierHash, type PoolContext, poolOf } from './context.ts';
import { contractProof } from './contractProof.ts';
import { PoolNoteSpentError } from './errors.ts';
import { proveWithdrawal, type WithdrawInput } from './withdrawalProof.ts';

/** `PrivacyPool.withdraw`: proves and relays the route's withdrawal, a new attempt after each revert. */
export async function withdraw(ctx: PoolContext, input: WithdrawInput): ReturnType<PrivacyPool['withdraw']> {
  const { sender, chainId, entrypoint, opts } = ctx;
  // Each attempt has its own write-ahead record: a relay that reverted (the ASP root moved between the
  // proof and its block) spent nothing, so the next attempt proves again against fresh roots.
  return untilNotReverted(
    withdrawalStep,
    async (step) => {
      if (!(await sender.intent(input.routeId, step))) await proveAndRecord(ctx, input, step);
      const sent = await sender.send({ routeId: input.routeId, step, chainId, account: opts.relaySenders, to: entrypoint });
      return describeWithdrawal(ctx, sent);
    },
    `the withdrawal of route ${input.routeId} reverted ${SEND_ATTEMPTS} times; an operator must look at the pool and the ASP`,
  );
}

/** `PrivacyPool.minedWithdrawal`: the route's withdrawal attempt that mined, if any (read only). */
export async function minedWithdrawal(
  ctx: PoolContext,
  { routeId }: Parameters<PrivacyPool['minedWithdrawal']>[0],
): ReturnType<PrivacyPool['minedWithdrawal']> {
  const sent = await minedAttempt(ctx, routeId, withdrawalStep);
  return sent && describeWithdrawal(ctx, sent);
}

/**
 * Proves the withdrawal and records its signed relay transaction under `step` (broadcast by txSender after the
 * record). Its destination is asked for only once the proof slot is taken, so a bridge order it names is fresh.
 */
async function proveAndRecord(ctx: PoolContext, input: WithdrawInput, step: string): Promise<void> {
  const { opts, entrypoint } = ctx;
  const pool = await poolOf(ctx, input.note.asset);
  const label = BigInt(input.note.label);
  const generation = input.generation ?? 0;
  // The deposit note's secrets, or those of the change an earlier withdrawal left (withdrawal secrets of the label).
  const { nullifier, secret } =
    generation === 0 ? await depositSecrets(ctx, pool, input.noteIndex) : await ctx.opts.secrets.withdrawalSecrets(label, BigInt(generation - 1));
  const commitment = getCommitment(input.note.value, label, nullifier as Secret, secret as Secret);
  // A change note's commitment is the one its secrets give (nothing recorded it); the proof needs it in the state tree.
  if (generation === 0 && commitment.hash.toString() !== input.note.commitment)
    throw new Error(`the note of route ${input.routeId} does not derive from this signer's keys`);
  if (await isSpent(ctx, pool, nullifierHash(nullifier as Secret))) {
    throw new PoolNoteSpentError(
      `the pool note of route ${input.routeId} is already spent, by no transaction this service recorded; an operator must investigate`,
    );
  }

  const change = await opts.secrets.withdrawalSecrets(label, BigInt(generation));
  const { withdrawal, proof } = await proveWithdrawal(ctx, input, { pool, commitment, label, change });
  await ctx.sender.send({
    routeId: input.routeId,
    step,
    chainId: ctx.chainId,
    account: opts.relaySenders,
    to: entrypoint,
    data: encodeFunctionData({ abi: entrypointAbi, functionName: 'relay', args: [withdrawal, contractProof(proof, 8), pool.scope] }),
    gasHeadroomPercent: GAS_HEADROOM_PERCENT,
  });
}

async function describeWithdrawal(ctx: PoolContext, sent: SentTransaction): Promise<PoolWithdrawal> {
  const [event] = parseEventLogs({ abi: entrypointAbi, eventName: 'WithdrawalRelayed', logs: sent.receipt.logs }).filter(
    (log) => log.address.toLowerCase() === ctx.entrypoint.toLowerCase(),
  );
  // Transaction hashes stay out of error texts: with the routeId beside them they would link the route's two sides in logs.
  if (!event) throw new Error('a withdrawal transaction emitted no WithdrawalRelayed event of the Entrypoint');
  return {
    txHash: sent.txHash,
    delivered: event.args._amount - event.args._feeAmount,
    fee: event.args._feeAmount,
    blockNumber: sent.receipt.blockNumber,
    timestamp: await blockTime(ctx, sent.receipt.blockNumber),
  };
}
