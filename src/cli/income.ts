import { INCOME_SWEEP_WORKFLOW_ID, INCOME_SWEEP_WORKFLOW_TYPE, type IncomeSweepResult } from '../../workflows/income.ts';
import { unsweptChangeNotes } from '../income/changeNoteStore.ts';
import { type OperatorContext, print, usageError } from './context.ts';
import { audited, type Operator, runWorkflow } from './operator.ts';

/** `routectl income [--json]`: the service's income still in the pool, as change notes, by asset and age. */
export async function listIncome(ctx: OperatorContext, json: boolean): Promise<void> {
  const notes = await unsweptChangeNotes(ctx.db);
  const now = Date.now() / 1000;
  if (json) return print(notes.map((n) => ({ ...n, value: n.value.toString(), ageHours: Math.round((now - n.leftAt) / 360) / 10 })));
  const byAsset = new Map<string, { count: number; total: bigint }>();
  for (const note of notes) {
    const sum = byAsset.get(note.asset) ?? { count: 0, total: 0n };
    byAsset.set(note.asset, { count: sum.count + 1, total: sum.total + note.value });
  }
  if (notes.length === 0) return print('no income waits in the pool');
  for (const [asset, { count, total }] of byAsset) print(`${asset}: ${count} change notes, ${total} in smallest units`);
  print(
    'a sweep takes grid amounts of the notes older than INCOME_SWEEP_MIN_AGE_HOURS, once INCOME_SWEEP_MIN_BATCH routes are due: routectl income sweep --reason "…"',
  );
}

/** `routectl income sweep --reason "…" [--spread-hours H]`: one sweep of what is due, to INCOME_TREASURY_ADDRESS. */
export async function sweepIncome(ctx: OperatorContext, who: Operator, spreadHours: string | undefined): Promise<void> {
  const hours = spreadHours === undefined ? 6 : Number(spreadHours);
  if (!Number.isFinite(hours) || hours < 0 || hours > 168) throw usageError('--spread-hours takes hours from 0 to 168');
  const result = await audited(ctx, who, { routeId: null, action: 'income-sweep', params: { spreadHours: hours } }, async () => {
    const value = await runWorkflow<IncomeSweepResult>(
      ctx,
      INCOME_SWEEP_WORKFLOW_TYPE,
      INCOME_SWEEP_WORKFLOW_ID,
      { spreadSeconds: Math.round(hours * 3600) },
      'an income sweep is already running (routectl income sweep waits for none; see the Temporal UI, workflow id income-sweep)',
    );
    return { value, detail: `${value.swept.length} swept of ${value.due} due (${value.reason})` };
  });
  if (result.swept.length === 0) {
    print(
      result.reason === 'batch-too-small' ? `${result.due} notes due, fewer routes than INCOME_SWEEP_MIN_BATCH: nothing swept` : 'nothing due: nothing swept',
    );
    return;
  }
  for (const s of result.swept) print(`swept ${s.amount} (delivered ${s.delivered}) tx ${s.txHash}`);
  print(`${result.swept.length} of ${result.due} due swept`);
}
