import type { Address, LocalAccount } from 'viem';
import { feeCap, offeredFees } from '../src/chain/fees.ts';
import { IntentVoidedError, NonceConsumedError, type SendRequest } from '../src/chain/txSender.ts';
import { gridFloor, ROUTE_ACCOUNT_GAS_PER_STEP } from '../src/quote/gasCost.ts';
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
  /** Native currency the step itself sends as value (a native-currency route's funds): not gas, so not counted as such. */
  sending = 0n,
): Promise<void> {
  const client = deps.chains.publicClient(chainId);
  for (let n = 0; ; ) {
    const key = `${step}:gas:${n}`;
    const base = { routeId, step: key, chainId, account: funder, to: address };
    if ((await deps.sender.intent(routeId, key)) && (await settleTopUp(deps, { ...base, value: 0n }))) {
      n++;
      continue;
    }
    const [held, fees] = await Promise.all([client.getBalance({ address }), offeredFees(client, deps.chains.chain(chainId))]);
    const balance = held > sending ? held - sending : 0n;
    // The fee the account's own transactions will offer (the sender signs with the same policy).
    const needed = ROUTE_ACCOUNT_GAS_PER_STEP * feeCap(fees);
    if (balance >= needed) return;
    await deps.sender.send({ ...base, value: topUpValue(needed, balance) });
  }
}

/**
 * A top-up's value: the largest value of the 1-2-5 grid of wei (0.0001, 0.0002, 0.0005 ETH …: the round sums wallets
 * and exchanges send) within two and a half times what the step needs, less what the account holds. The grid's steps
 * are at most 2.5 apart, so it always covers the step; the quotes charge the 2.5 times (src/quote/gasCost.ts). The
 * exact "twice what is needed" of before marked every route account the service funds, and the same formula on both
 * sides of the pool joined the gas account and the relayer (docs/privacy.md, "What marks the service's pool traffic").
 */
export function topUpValue(needed: bigint, balance: bigint): bigint {
  return gridFloor((5n * needed) / 2n - balance);
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
