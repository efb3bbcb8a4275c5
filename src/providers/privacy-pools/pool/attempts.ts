import { receiptOrNull, type SentTransaction, TransactionRevertedError } from '../../../chain/txSender.ts';
import { client, type PoolContext } from './context.ts';

/** Recorded attempts of a deposit, a withdrawal or a ragequit per route (each reverted one moved nothing); then an operator looks. */
export const SEND_ATTEMPTS = 10;
/** Deposits and withdrawals insert into the tree, whose cost grows when other inserts land first. */
export const GAS_HEADROOM_PERCENT = 30;

export const depositStep = (attempt: number) => (attempt === 1 ? 'shield' : `shield#${attempt}`);
export const withdrawalStep = (attempt: number) => (attempt === 1 ? 'unshield' : `unshield#${attempt}`);
export const ragequitStep = (attempt: number) => (attempt === 1 ? 'ragequit' : `ragequit#${attempt}`);

/** The recorded attempt that was mined successfully, if any. Read only: an attempt that never reached the chain is not pushed out. */
export async function minedAttempt(ctx: PoolContext, routeId: string, stepOf: (attempt: number) => string): Promise<SentTransaction | null> {
  for (let attempt = 1; attempt <= SEND_ATTEMPTS; attempt++) {
    const intent = await ctx.sender.intent(routeId, stepOf(attempt));
    if (!intent) return null;
    // An RPC failure is thrown (the caller retries), never taken for "not mined".
    const receipt = await receiptOrNull(client(ctx), intent.txHash);
    if (receipt?.status === 'success') return { txHash: intent.txHash, receipt };
  }
  return null;
}

/**
 * Runs `attempt` for the attempts 1, 2, … of a step (`stepOf` names each one's recorded send) until one does not
 * revert: a reverted attempt moved nothing, so the next is a new transaction. Any other error is thrown as it is.
 * After SEND_ATTEMPTS reverts, throws `exhausted` (what an operator must look at).
 */
export async function untilNotReverted<T>(
  stepOf: (attempt: number) => string,
  attempt: (step: string, attempt: number) => Promise<T>,
  exhausted: string,
): Promise<T> {
  for (let n = 1; n <= SEND_ATTEMPTS; n++) {
    try {
      return await attempt(stepOf(n), n);
    } catch (error) {
      if (!(error instanceof TransactionRevertedError)) throw error;
    }
  }
  throw new Error(exhausted);
}
