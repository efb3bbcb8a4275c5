import { hashPrecommitment } from '@0xbow/privacy-pools-core-sdk';
import { type Address, encodeFunctionData, erc20Abi, parseEventLogs } from 'viem';
import type { SentTransaction } from '../../../chain/txSender.ts';
import type { PoolNote, PrivacyPool } from '../../privacyPool.ts';
import { entrypointAbi, poolAbi } from '../abi.ts';
import { depositStep, GAS_HEADROOM_PERCENT, minedAttempt, SEND_ATTEMPTS, untilNotReverted } from './attempts.ts';
import { type AssetPool, blockTime, depositSecrets, type PoolContext, poolOf } from './context.ts';

/** `PrivacyPool.deposit`: approves the Entrypoint, then deposits from the route's account, a new attempt after each revert. */
export async function deposit(
  ctx: PoolContext,
  { routeId, owner, asset, amount, noteIndex }: Parameters<PrivacyPool['deposit']>[0],
): ReturnType<PrivacyPool['deposit']> {
  const { sender, chainId, entrypoint } = ctx;
  const pool = await poolOf(ctx, asset);
  const { nullifier, secret } = await depositSecrets(ctx, pool, noteIndex);
  await sender.send({
    routeId,
    step: 'shield:approve',
    chainId,
    account: owner,
    to: asset,
    data: encodeFunctionData({ abi: erc20Abi, functionName: 'approve', args: [entrypoint, amount] }),
  });
  // A reverted deposit moved nothing (and used none of the allowance): the next attempt is a new transaction.
  return untilNotReverted(
    depositStep,
    async (step) => {
      const sent = await sender.send({
        routeId,
        step,
        chainId,
        account: owner,
        to: entrypoint,
        data: encodeFunctionData({ abi: entrypointAbi, functionName: 'deposit', args: [asset, amount, hashPrecommitment(nullifier, secret)] }),
        gasHeadroomPercent: GAS_HEADROOM_PERCENT,
      });
      return describeDeposit(ctx, pool, asset, sent);
    },
    `the pool deposit of route ${routeId} reverted ${SEND_ATTEMPTS} times; an operator must look at the pool`,
  );
}

/** `PrivacyPool.minedDeposit`: the note of the route's deposit attempt that mined, if any (read only). */
export async function minedDeposit(ctx: PoolContext, { routeId, asset }: Parameters<PrivacyPool['minedDeposit']>[0]): ReturnType<PrivacyPool['minedDeposit']> {
  const sent = await minedAttempt(ctx, routeId, depositStep);
  return sent && describeDeposit(ctx, await poolOf(ctx, asset), asset, sent);
}

async function describeDeposit(ctx: PoolContext, pool: AssetPool, asset: Address, sent: SentTransaction): Promise<PoolNote> {
  const [event] = parseEventLogs({ abi: poolAbi, eventName: 'Deposited', logs: sent.receipt.logs }).filter(
    (log) => log.address.toLowerCase() === pool.address.toLowerCase(),
  );
  if (!event) throw new Error('a deposit transaction emitted no Deposited event of the pool');
  return {
    asset,
    label: event.args._label.toString(),
    commitment: event.args._commitment.toString(),
    value: event.args._value,
    txHash: sent.txHash,
    blockNumber: sent.receipt.blockNumber,
    timestamp: await blockTime(ctx, sent.receipt.blockNumber),
  };
}
