import { ApplicationFailure } from '@temporalio/activity';
import type { LocalAccount } from 'viem';
import { type Intent, VoidRefusedError } from '../src/chain/txSender.ts';
import { finishAction, refuseAction, requireRequestedAction } from '../src/operators/audit.ts';
import type { ActivityDeps } from './deps.ts';
import type { IntentSummary } from '../src/domain/operatorResults.ts';
import { failure } from '../src/failures.ts';
import { transferOf } from '../src/transfers/transferStore.ts';

const summary = (row: Intent): IntentSummary => ({
  id: row.id,
  routeId: row.routeId,
  step: row.step,
  status: row.status,
  voidReason: row.voidReason,
  minedTxHash: row.minedTxHash,
});

/** A refusal is final for this request: the operator reads why and decides. */
const refused = (error: unknown) => (error instanceof VoidRefusedError ? failure('VoidRefused', error.message) : error);

/** Operator actions on recorded sends (`routectl void`), and what ending a route does to its unsent ones. */
export function intentActivities(deps: ActivityDeps) {
  /** The worker's key that signed the intent: a shared sender, or one of its route's accounts. */
  async function signerOf(row: Intent): Promise<LocalAccount> {
    const from = row.fromAddress.toLowerCase();
    for (const account of [deps.gasAccount, ...deps.relaySenders]) if (account.address.toLowerCase() === from) return account;
    const route = await transferOf(deps.db, row.routeId);
    if (route) {
      const own = Object.values(deps.keyring.routeAccounts(route.accountIndex)).find((account) => account.address.toLowerCase() === from);
      if (own) return own;
    }
    throw failure('VoidRefused', `no key of this worker signs for ${row.fromAddress} (intent #${row.id})`);
  }

  /** The operator's audit row for voiding this intent, checked here so that a void workflow started in Temporal needs one. */
  async function requireVoidAction(input: { intentId: number; actionId?: number }): Promise<Intent | null> {
    const row = await deps.sender.get(input.intentId);
    await requireRequestedAction(deps.db, { actionId: input.actionId, action: 'void', routeId: row?.routeId ?? null, params: { intentId: input.intentId } });
    return row;
  }

  return {
    /**
     * A route is ending: its sends that no node has (recorded, then never broadcast) must not be pushed out by a
     * later send of the same account (a refund would first re-broadcast a stale bridge-in). They are voided.
     */
    async voidUnsentIntents(input: { routeId: string }): Promise<number> {
      const voided = await deps.sender.voidUnsent(input.routeId, 'the route ended before this transaction reached a node');
      return voided.length;
    },

    /**
     * `routectl void`: voids an intent whose nonce is used by another transaction; refuses while it may still mine.
     * Only as the operator's audit row `actionId` asked (this intent), which ends done or refused here.
     */
    async voidIntent(input: { intentId: number; reason: string; actionId?: number }): Promise<IntentSummary> {
      await requireVoidAction(input);
      try {
        const voided = summary(await deps.sender.void(input.intentId, `operator: ${input.reason}`));
        if (input.actionId) await finishAction(deps.db, input.actionId, 'done', `intent #${voided.id} (${voided.step}) voided`);
        return voided;
      } catch (error) {
        const failure = refused(error);
        if (failure instanceof ApplicationFailure && input.actionId) await finishAction(deps.db, input.actionId, 'refused', failure.message);
        throw failure;
      }
    },

    /** `routectl void --cancel`: a 0-value self-send at the intent's nonce, with higher fees, so that it can never mine. */
    async cancelIntent(input: { intentId: number; actionId?: number }): Promise<{ replaced: boolean; txHash: string }> {
      const row = await requireVoidAction(input);
      if (!row) throw await refuseAction(deps.db, input.actionId, `there is no intent #${input.intentId}`, 'VoidRefused');
      try {
        const cancel = await deps.sender.cancel(row.id, await signerOf(row));
        if (!cancel.replaced && input.actionId)
          await finishAction(deps.db, input.actionId, 'refused', `intent #${row.id} mined before its replacement did; nothing voided`);
        return cancel;
      } catch (error) {
        const failure = refused(error);
        if (failure instanceof ApplicationFailure && input.actionId) await finishAction(deps.db, input.actionId, 'refused', failure.message);
        throw failure;
      }
    },
  };
}
