import type { LocalAccount } from 'viem';
import { senderQueue } from './lookups.ts';
import type { SenderContext } from './context.ts';
import type { SendRequest } from './types.ts';

/**
 * Which of several accounts signs a new intent: the one with the fewest transactions queued (recorded, not yet
 * mined) on the chain, so one stuck at its head (a nonce the node cannot mine, a fee below the base fee) holds up
 * only what it already signed; among equals, the next one after the last chosen, so they take turns.
 */
export async function pickAccount(ctx: SenderContext, request: Pick<SendRequest, 'account' | 'chainId'>): Promise<LocalAccount> {
  const accounts = accountList(request.account);
  if (accounts.length === 1) return accounts[0]!;
  const queued = await Promise.all(accounts.map(async (account) => (await senderQueue(ctx, request.chainId, account.address)).length));
  const turn = ctx.turns.get(request.chainId) ?? 0;
  const chosen = leastQueued(queued, turn);
  ctx.turns.set(request.chainId, chosen + 1);
  return accounts[chosen]!;
}

/** The index of the shortest queue, looking from `turn` onward (wrapping): ties go to the next in turn. */
export function leastQueued(queued: readonly number[], turn: number): number {
  if (queued.length === 0) throw new RangeError('no account to choose from');
  let best = -1;
  for (let step = 0; step < queued.length; step++) {
    const index = (((turn + step) % queued.length) + queued.length) % queued.length;
    if (best < 0 || queued[index]! < queued[best]!) best = index;
  }
  return best;
}

/** The account that signed a recorded intent, among the request's. */
export function signingAccount(request: Pick<SendRequest, 'account'>, fromAddress: string): LocalAccount {
  const accounts = accountList(request.account);
  const found = accounts.find((account) => account.address.toLowerCase() === fromAddress.toLowerCase());
  // settle() names the mismatch when none is: the first one then carries it.
  return found ?? accounts[0]!;
}

const accountList = (account: SendRequest['account']): readonly LocalAccount[] => {
  const list = Array.isArray(account) ? account : [account as LocalAccount];
  if (list.length === 0) throw new RangeError('a send names no account');
  return list;
};
