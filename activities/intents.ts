import { ApplicationFailure } from '@temporalio/activity';
import { eq } from 'drizzle-orm';
import type { LocalAccount } from 'viem';
import { type Intent, VoidRefusedError } from '../src/chain/txSender.ts';
import { transfers } from '../src/db/schema.ts';
import type { ActivityDeps } from './deps.ts';

/** What an operator sees of an intent after a void or cancel. */
export interface IntentSummary {
  id: number;
  routeId: string;
  step: string;
  status: string;
  voidReason: string | null;
  minedTxHash: string | null;
}

const summary = (row: Intent): IntentSummary => ({ id: row.id, routeId: row.routeId, step: row.step, status: row.status, voidReason: row.voidReason, minedTxHash: row.minedTxHash });

/** A refusal is final for this request: the operator reads why and decides. */
const refused = (error: unknown) => (error instanceof VoidRefusedError ? ApplicationFailure.nonRetryable(error.message, 'VoidRefused') : error);

/** Operator actions on recorded sends (`routectl void`), and what ending a route does to its unsent ones. */
export function intentActivities(deps: ActivityDeps) {
  /** The worker's key that signed the intent: a shared sender, or one of its route's accounts. */
  async function signerOf(row: Intent): Promise<LocalAccount> {
    const from = row.fromAddress.toLowerCase();
    for (const account of [deps.gasAccount, deps.poolRelayer]) if (account.address.toLowerCase() === from) return account;
    const [route] = await deps.db.select({ accountIndex: transfers.accountIndex }).from(transfers).where(eq(transfers.routeId, row.routeId));
    if (route) {
      const own = Object.values(deps.keyring.routeAccounts(route.accountIndex)).find((account) => account.address.toLowerCase() === from);
      if (own) return own;
    }
    throw ApplicationFailure.nonRetryable(`no key of this worker signs for ${row.fromAddress} (intent #${row.id})`, 'VoidRefused');
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

    /** `routectl void`: voids an intent whose nonce is used by another transaction; refuses while it may still mine. */
    async voidIntent(input: { intentId: number; reason: string }): Promise<IntentSummary> {
      try {
        return summary(await deps.sender.void(input.intentId, `operator: ${input.reason}`));
      } catch (error) {
        throw refused(error);
      }
    },

    /** `routectl void --cancel`: a 0-value self-send at the intent's nonce, with higher fees, so that it can never mine. */
    async cancelIntent(input: { intentId: number }): Promise<{ replaced: boolean; txHash: string }> {
      const row = await deps.sender.get(input.intentId);
      if (!row) throw ApplicationFailure.nonRetryable(`there is no intent #${input.intentId}`, 'VoidRefused');
      try {
        return await deps.sender.cancel(row.id, await signerOf(row));
      } catch (error) {
        throw refused(error);
      }
    },
  };
}
