import type { Address, LocalAccount } from 'viem';
import { feeCap, offeredFees } from '../src/chain/fees.ts';
import { IntentVoidedError, NonceConsumedError, type SendRequest } from '../src/chain/txSender.ts';
import { ROUTE_ACCOUNT_GAS_PER_STEP } from '../src/quote/gasCost.ts';
import type { ActivityDeps } from './deps.ts';

/**
 * Makes sure `address` can pay for one step's transactions. Earlier top-ups of the step are settled first
 * (never re-signed), then the chain decides: a new top-up is sent only when the balance is still short.
 * Top-ups come from `funder` (the gas account before the pool, the pool's relayer after it), never from route funds.
 */
export async function ensureGas(
  deps: ActivityDeps,
  routeId: string,
  step: string,
  chainId: number,
  address: Address,
  funder: LocalAccount = deps.gasAccount,
): Promise<void> {
  const client = deps.chains.publicClient(chainId);
  for (let n = 0; ; ) {
    const key = `${step}:gas:${n}`;
    const base = { routeId, step: key, chainId, account: funder, to: address };
    if ((await deps.sender.intent(routeId, key)) && (await settleTopUp(deps, { ...base, value: 0n }))) {
      n++;
      continue;
    }
    const [balance, fees] = await Promise.all([client.getBalance({ address }), offeredFees(client, deps.chains.chain(chainId))]);
    // The fee the account's own transactions will offer (the sender signs with the same policy).
    const needed = ROUTE_ACCOUNT_GAS_PER_STEP * feeCap(fees);
    if (balance >= needed) return;
    await deps.sender.send({ ...base, value: 2n * needed - balance });
  }
}

/**
 * Settles a recorded top-up. False when it can never mine because its nonce went to another transaction (ours:
 * the sender voided it; a stranger's: voided here): the top-up never happened, so the balance decides again.
 */
async function settleTopUp(deps: ActivityDeps, request: SendRequest): Promise<boolean> {
  try {
    await deps.sender.send(request);
    return true;
  } catch (error) {
    if (error instanceof NonceConsumedError) {
      await deps.sender.void(error.intentId, 'gas top-up whose nonce a transaction that is not ours used; the balance decides again');
      return false;
    }
    if (error instanceof IntentVoidedError) return false;
    throw error;
  }
}
