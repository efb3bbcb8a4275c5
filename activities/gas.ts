import type { Address, LocalAccount } from 'viem';
import type { ActivityDeps } from './deps.ts';

/** Gas units a per-route account needs for its sends in one step (approve + shield is the largest). */
const GAS_UNITS_PER_STEP = 400_000n;

/**
 * Makes sure `address` can pay for one step's transactions. Earlier top-ups of the step are settled first
 * (never re-signed), then the chain decides: a new top-up is sent only when the balance is still short.
 * Top-ups come from `funder` (the gas account before the pool, the pool's relayer after it), never from route funds.
 */
export async function ensureGas(deps: ActivityDeps, routeId: string, step: string, chainId: number, address: Address, funder: LocalAccount = deps.gasAccount): Promise<void> {
  const client = deps.chains.publicClient(chainId);
  for (let n = 0; ; n++) {
    const key = `${step}:gas:${n}`;
    const base = { routeId, step: key, chainId, account: funder, to: address };
    if (await deps.sender.intent(routeId, key)) {
      await deps.sender.send({ ...base, value: 0n });
      continue;
    }
    const [balance, fees] = await Promise.all([client.getBalance({ address }), client.estimateFeesPerGas()]);
    const needed = GAS_UNITS_PER_STEP * fees.maxFeePerGas;
    if (balance >= needed) return;
    await deps.sender.send({ ...base, value: 2n * needed - balance });
  }
}
