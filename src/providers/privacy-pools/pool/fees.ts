import type { PrivacyPool } from '../../privacyPool.ts';
import { assetConfig, type PoolContext } from './context.ts';

/** `PrivacyPool.fees`: the pool's vetting fee and minimum deposit, read from the Entrypoint on every call, and our relay fee. */
export async function fees(ctx: PoolContext, asset: Parameters<PrivacyPool['fees']>[0]): ReturnType<PrivacyPool['fees']> {
  const config = await assetConfig(ctx, asset);
  return { depositFeeBps: config.vettingFeeBps, withdrawalFeeBps: ctx.opts.relayFeeBps, minimumDeposit: config.minimumDeposit };
}
