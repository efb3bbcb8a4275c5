import { ApplicationFailure } from '@temporalio/activity';
import { type Address, type Hex, zeroHash } from 'viem';
import { bookSweep, changeNoteOf, unsweptChangeNotes } from '../src/income/changeNoteStore.ts';
import { type PlannedSweep, planSweep } from '../src/income/sweepPlan.ts';
import { recordLedger } from '../src/transfers/ledgerStore.ts';
import type { ActivityDeps } from './deps.ts';

/** A planned sweep as it crosses Temporal (amounts as decimal strings). */
export interface SweepOrder {
  routeId: string;
  generation: number;
  amount: string;
}

/** The intents of a sweep are keyed apart from its route's own steps. */
export const sweepKey = (routeId: string, generation: number) => `income:${routeId}:${generation}`;

/** Income sweeps (docs/operations.md, "Collecting the income"): what is due, and one change note's sweep. */
export function incomeActivities(deps: ActivityDeps) {
  const settings = () => {
    const sweeps = deps.incomeSweeps;
    if (!sweeps?.treasury) throw ApplicationFailure.nonRetryable('INCOME_TREASURY_ADDRESS is not set: income sweeps have nowhere to go', 'IncomeNotConfigured');
    return { ...sweeps, treasury: sweeps.treasury };
  };
  return {
    /** The change notes a sweep takes now (src/income/sweepPlan.ts), or why none. */
    async planIncomeSweep(): Promise<{ sweeps: SweepOrder[]; reason: string; due: number }> {
      const plan = planSweep(await unsweptChangeNotes(deps.db), Math.floor(Date.now() / 1000), settings());
      const sweeps = plan.sweeps.map((s: PlannedSweep) => ({ routeId: s.routeId, generation: s.generation, amount: s.amount.toString() }));
      return { sweeps, reason: plan.reason, due: plan.reason === 'batch' ? sweeps.length : plan.due };
    },

    /** Withdraws `amount` of one change note to the treasury, through the relayer; its rest stays as the next generation. */
    async sweepChangeNote(order: SweepOrder): Promise<{ txHash: string; delivered: string }> {
      const { treasury } = settings();
      const note = await changeNoteOf(deps.db, order.routeId, order.generation);
      if (!note) throw ApplicationFailure.nonRetryable(`route ${order.routeId} has no change note of generation ${order.generation}`, 'UnknownChangeNote');
      const amount = BigInt(order.amount);
      if (note.sweptTxHash) return { txHash: note.sweptTxHash, delivered: note.sweptAmount ?? '0' };
      if (amount <= 0n || amount > BigInt(note.value)) {
        throw ApplicationFailure.nonRetryable(
          `a sweep of ${amount} does not fit change note ${order.routeId}/${order.generation} (${note.value})`,
          'SweepAmountInvalid',
        );
      }
      const withdrawal = await deps.pool.withdraw({
        routeId: sweepKey(order.routeId, order.generation),
        note: {
          asset: note.asset as Address,
          label: note.label,
          commitment: '',
          value: BigInt(note.value),
          txHash: zeroHash as Hex,
          blockNumber: 0n,
          timestamp: Math.floor(note.leftAt.getTime() / 1000),
        },
        noteIndex: 0,
        generation: order.generation,
        destination: async () => ({ to: treasury, amount }),
      });
      await bookSweep(deps.db, note, { amount, txHash: withdrawal.txHash, at: new Date(withdrawal.timestamp * 1000) });
      await recordLedger(deps.db, {
        routeId: order.routeId,
        kind: 'income_swept',
        key: `g${order.generation}`,
        chainId: deps.pool.chainId,
        token: note.asset,
        amount: withdrawal.delivered.toString(),
        txHash: withdrawal.txHash,
      });
      return { txHash: withdrawal.txHash, delivered: withdrawal.delivered.toString() };
    },
  };
}
