import type { LocalAccount, TransactionReceipt } from 'viem';
import { describe, type Intent, intentAtNonce, markReorged, markVoided } from '../intentStore.ts';
import { push } from './broadcast.ts';
import { reload, type SenderContext, sleep, usedNonces } from './context.ts';
import { headMove, nextMove, reorgMove, roundEnd, usedNonceMove } from './decide.ts';
import { IntentVoidedError, NonceConsumedError, TransactionPendingError, TransactionRevertedError } from './errors.ts';
import { minedAttempt, minedSibling, recordMined } from './receipts.ts';
import { replace } from './replace.ts';
import type { SentTransaction } from './types.ts';

/** Waits until the intent's nonce is used, keeping the sender's queue moving meanwhile. */
export async function settle(ctx: SenderContext, initial: Intent, account: LocalAccount): Promise<SentTransaction> {
  if (initial.fromAddress.toLowerCase() !== account.address.toLowerCase())
    throw new Error(`${describe(initial)} was signed by another account than ${account.address}`);
  const { receiptTimeoutMs } = ctx.timings;
  let row = initial;
  const deadline = Date.now() + receiptTimeoutMs;
  let pushed = false;
  let headLookedAt = Date.now();
  for (;;) {
    const usedNonce = await usedNonces(ctx, row);
    const now = Date.now();
    const move = nextMove({ intent: row, usedNonce, pushed, now, headLookedAt }, ctx.timings);
    switch (move.kind) {
      case 'resolve-used-nonce':
        return settleUsedNonce(ctx, row);
      case 'refuse-voided':
        throw new IntentVoidedError(
          `${describe(row)} was voided (${row.voidReason ?? 'no reason recorded'}); it is not broadcast again. The step's next try signs anew`,
        );
      case 'push':
        row = await push(ctx, row, account);
        pushed = true;
        break;
      case 'move-head':
        headLookedAt = now;
        row = await moveHead(ctx, row, usedNonce, account);
        break;
      case 'confirm-reorged': {
        const mined = await confirmReorged(ctx, row);
        if (mined) return mined;
        row = await reload(ctx, row);
        pushed = false;
        continue;
      }
      case 'wait':
        break;
    }
    const end = roundEnd({ intent: row, usedNonce, now: Date.now(), deadline });
    if (end.kind === 'time-out') {
      const behind = end.behind > 0 ? ` behind ${end.behind} earlier transaction(s) of ${row.fromAddress}` : '';
      throw new TransactionPendingError(
        `${describe(row)} is not mined after ${Math.round(receiptTimeoutMs / 1000)} s (attempt ${row.attempt})${behind}; the next try waits on`,
      );
    }
    await sleep(ctx.timings.pollIntervalMs);
    row = await reload(ctx, row);
  }
}

/**
 * An intent recorded mined whose nonce the chain reports unused: mined after all (a node that lags), or taken by a
 * reorg, and then pending again so that the caller broadcasts it again (null).
 */
async function confirmReorged(ctx: SenderContext, row: Intent): Promise<SentTransaction | null> {
  for (let look = 0; ; look++) {
    const receipt = await minedAttempt(ctx, row);
    const move = reorgMove({ look, receipt });
    switch (move.kind) {
      case 'finish-mined':
        if (move.receipt.status === 'reverted') throw new TransactionRevertedError(`${describe(row)} reverted on chain ${row.chainId}`);
        return { txHash: move.receipt.transactionHash, receipt: move.receipt };
      case 'reopen':
        await markReorged(ctx.db, row);
        return null;
      case 'look-again':
        await sleep(ctx.timings.pollIntervalMs);
    }
  }
}

/**
 * The head of the sender's queue (maybe this intent; `head` is the sender's next nonce to mine) has waited: push
 * it, or replace it with higher fees once it has waited `replaceAfterMs`. Returns this intent as recorded now.
 */
async function moveHead(ctx: SenderContext, row: Intent, head: number, account: LocalAccount): Promise<Intent> {
  let blocking = await intentAtNonce(ctx.db, row, head);
  if (!blocking) {
    // Nothing of ours pending at the head, yet the chain waits there: an intent recorded mined that a reorg took
    // (another route's, on a shared sender) is pending again and broadcast, or the queue behind it never moves.
    const mined = await intentAtNonce(ctx.db, row, head, 'mined');
    // (A receipt found, even a reverted one, means it is mined after all: nothing to move.)
    const reopened =
      mined &&
      (await confirmReorged(ctx, mined).then(
        (found) => !found,
        () => false,
      ));
    if (reopened) blocking = await intentAtNonce(ctx.db, row, head);
  }
  const move = headMove(blocking, Date.now(), ctx.timings);
  if (blocking && move.kind === 'replace') await push(ctx, await replace(ctx, blocking, account), account);
  else if (blocking && move.kind === 'push') await push(ctx, blocking, account);
  return reload(ctx, row);
}

/**
 * The chain used the intent's nonce: by one of its attempts (finished), by another intent of ours (this one is
 * voided), or by a stranger. Looked at a few times: a load-balanced RPC may answer the nonce from a node ahead of
 * the one asked for receipts.
 */
async function settleUsedNonce(ctx: SenderContext, initial: Intent): Promise<SentTransaction> {
  let look = 0;
  // Re-read at every look: another process (a later send of the same sender) may have replaced it meanwhile.
  let row = await reload(ctx, initial);
  let receipt: TransactionReceipt | null = await minedAttempt(ctx, row);
  let sibling: Intent | null | undefined;
  for (;;) {
    const move = usedNonceMove({ intent: row, look, receipt, minedSibling: sibling });
    switch (move.kind) {
      case 'finish-mined':
        await recordMined(ctx, row, move.receipt.transactionHash);
        return { txHash: move.receipt.transactionHash, receipt: move.receipt };
      case 'finish-reverted':
        await recordMined(ctx, row, move.receipt.transactionHash);
        throw new TransactionRevertedError(`${describe(row)} reverted on chain ${row.chainId}`);
      case 'look-for-mined-sibling':
        sibling = await minedSibling(ctx, row);
        break;
      case 'void-for-sibling':
        await markVoided(ctx.db, row, `its nonce was used by intent #${move.sibling.id} (${move.sibling.step})`);
        throw new IntentVoidedError(
          `${describe(row)} can never mine: intent #${move.sibling.id} (${move.sibling.step}) used its nonce. It is voided; the step's next try signs anew`,
        );
      case 'look-again':
        await sleep(ctx.timings.pollIntervalMs);
        look++;
        row = await reload(ctx, row);
        receipt = await minedAttempt(ctx, row);
        sibling = undefined;
        break;
      case 'refuse-voided':
        throw new IntentVoidedError(
          `${describe(row)} was voided and never mined: a transaction that is not ours used its nonce. The step's next try signs anew`,
        );
      case 'refuse-stranger':
        throw new NonceConsumedError(
          `${describe(row)}: its nonce was used by a transaction that is not ours, so it will never mine. Find out who holds the key; then \`routectl void ${row.id}\` lets the step sign anew`,
          row.id,
        );
    }
  }
}
