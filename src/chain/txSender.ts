import type { Database } from '../db/client.ts';
import type { ChainClients } from './clients.ts';
import { cancel } from './sender/cancel.ts';
import { senderContext } from './sender/context.ts';
import { intentRecord, senderQueue, stepTransaction } from './sender/lookups.ts';
import { send } from './sender/send.ts';
import type { IntentControl, TxSender, TxSenderOptions } from './sender/types.ts';
import { voidIntent } from './sender/voidIntent.ts';
import { voidUnsent } from './sender/voidUnsent.ts';

export { type Intent, type QueuedIntent, senderQueues } from './intentStore.ts';
export { MAX_ATTEMPTS } from './sender/decide.ts';
export {
  IntentConflictError,
  IntentVoidedError,
  NonceConsumedError,
  SenderUnderfundedError,
  TransactionPendingError,
  TransactionRevertedError,
  VoidRefusedError,
} from './sender/errors.ts';
export { receiptOrNull } from './sender/receipts.ts';
export type { IntentControl, SendRequest, SentTransaction, TxSender, TxSenderOptions } from './sender/types.ts';

/**
 * Sends transactions with a write-ahead record so that a retried activity never pays twice:
 * 1. if (routeId, step) has a live intent, settle it: wait until one of its attempts mines, re-broadcasting it if
 *    the node lost it, and replacing it at the same nonce with higher fees when the node rejects its fees or it
 *    waits too long at the head of its sender's queue (each replacement recorded before it is broadcast);
 * 2. otherwise, under a per-sender advisory lock, pick the nonce, sign and record the signed transaction in
 *    Postgres; only once that record is committed is it broadcast.
 * All attempts of an intent share its nonce and its effect, so at most one of them is mined. A nonce used by
 * another intent of ours voids the intent (the step may sign again); one used by a stranger stops the step.
 * Every broadcast re-reads the intent under its sender's lock: a voided intent is never broadcast. A voided intent
 * that mined after all counts as the step's transaction (recorded as mined), never as absent.
 *
 * What to do at each point is decided by the pure functions of src/chain/sender/decide.ts (its header shows the
 * intent's states); the other files of src/chain/sender/ gather the facts and carry out the moves, one action each.
 */
export function createTxSender(db: Database, clients: ChainClients, opts: TxSenderOptions = {}): TxSender & IntentControl {
  const ctx = senderContext(db, clients, opts);
  return {
    send: (request) => send(ctx, request),
    intent: (routeId, step) => stepTransaction(ctx, routeId, step),
    get: (id) => intentRecord(ctx, id),
    queue: (chainId, from) => senderQueue(ctx, chainId, from),
    void: (id, reason) => voidIntent(ctx, id, reason),
    cancel: (id, account) => cancel(ctx, id, account),
    voidUnsent: (routeId, reason) => voidUnsent(ctx, routeId, reason),
  };
}
