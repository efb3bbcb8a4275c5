import { WorkflowExecutionAlreadyStartedError, WorkflowUpdateFailedError } from '@temporalio/client';
import { and, asc, desc, eq, type SQL } from 'drizzle-orm';
import { isAddress } from 'viem';
import { ledgerEntries, transfers } from '../db/schema.ts';
import { formatAmount } from '../money/amount.ts';
import { failUpdate, retryUpdate, stateQuery } from '../../workflows/definitions.ts';
import { refundWorkflowId } from '../../workflows/refunds.ts';
import { REFUND_WORKFLOW_TYPE, TRANSFER_STATUSES, type TransferState } from '../../workflows/types.ts';
import { loadRoute, notAllowed, type OperatorContext, print, usageError } from './context.ts';

const TERMINAL = new Set(['COMPLETED', 'FAILED']);

export async function list(ctx: OperatorContext, opts: { status?: string; stuck: boolean; json: boolean; limit: number }): Promise<void> {
  const filters: SQL[] = [];
  if (opts.status) {
    const status = opts.status.toUpperCase();
    if (!(TRANSFER_STATUSES as readonly string[]).includes(status)) throw usageError(`unknown status ${opts.status}; one of ${TRANSFER_STATUSES.join(', ')}`);
    filters.push(eq(transfers.status, status));
  }
  if (opts.stuck) filters.push(eq(transfers.needsAttention, true));
  const rows = await ctx.db
    .select({
      routeId: transfers.routeId,
      status: transfers.status,
      needsAttention: transfers.needsAttention,
      parkedStep: transfers.parkedStep,
      parkedSince: transfers.parkedSince,
      lastError: transfers.lastError,
      heldFunds: transfers.heldFunds,
      updatedAt: transfers.updatedAt,
    })
    .from(transfers)
    .where(filters.length ? and(...filters) : undefined)
    .orderBy(desc(transfers.updatedAt))
    .limit(opts.limit);
  if (opts.json) return print(rows);
  if (rows.length === 0) return print('no transfers match');
  for (const row of rows) {
    const attention = row.needsAttention ? `  NEEDS ATTENTION${row.parkedStep ? ` (parked at ${row.parkedStep} since ${row.parkedSince?.toISOString()})` : ''}: ${row.lastError ?? ''}` : '';
    print(`${row.routeId}  ${row.status.padEnd(16)} ${row.updatedAt.toISOString()}${attention}`);
  }
}

export async function show(ctx: OperatorContext, routeId: string, json: boolean): Promise<void> {
  const row = await loadRoute(ctx, routeId);
  const ledger = await ctx.db.select().from(ledgerEntries).where(eq(ledgerEntries.routeId, routeId)).orderBy(asc(ledgerEntries.id));
  const handle = ctx.temporal.workflow.getHandle(routeId);
  const workflow = await handle.describe().then(
    (d) => ({ status: d.status.name, startTime: d.startTime.toISOString(), closeTime: d.closeTime?.toISOString() ?? null }),
    (error: unknown) => ({ error: error instanceof Error ? error.message : String(error) }),
  );
  const state: TransferState | null = 'status' in workflow && workflow.status === 'RUNNING' ? await handle.query(stateQuery).catch(() => null) : null;
  if (json) return print({ transfer: row, workflow: { ...workflow, state }, ledger });

  print(`route       ${row.routeId}`);
  print(`status      ${row.status}${row.error ? `  (${row.error})` : ''}`);
  print(`workflow    ${'status' in workflow ? `${workflow.status}, started ${workflow.startTime}${state?.step ? `, step ${state.step}` : ''}` : workflow.error}`);
  if (row.needsAttention) {
    print(`ATTENTION   ${row.parkedStep ? `parked at ${row.parkedStep} since ${row.parkedSince?.toISOString()}` : 'holds funds for an operator decision'}`);
    print(`last error  ${row.lastError ?? ''}`);
    if (row.parkedStep) print(`decide      routectl retry ${row.routeId}   |   routectl fail ${row.routeId} --reason "…"`);
  }
  print(`amount      ${formatAmount(BigInt(row.amount), row.sourceDecimals)} ${row.symbol} on ${row.sourceChainId} -> ${formatAmount(BigInt(row.quotedOutputAmount), row.destDecimals)} ${row.destSymbol} on ${row.destChainId}`);
  print(`deposit     ${row.depositAddress} (deadline ${row.depositDeadline.toISOString()})`);
  print(`hub         ${row.hubAccount}   exit ${row.exitAccount}`);
  print(`recipient   ${row.userDestinationAddress}${row.refundAddress ? `   refunds to ${row.refundAddress}` : '   (no refundAddress)'}`);
  if (row.payoutTxHash) print(`payout tx   ${row.payoutTxHash}`);
  for (const held of row.heldFunds ?? []) print(`held        ${held.amount} of ${held.token} at ${held.place} ${held.address} on chain ${held.chainId}`);
  print('ledger:');
  for (const entry of ledger) print(`  ${entry.entryKey.padEnd(22)} ${entry.amount.padStart(24)}  chain ${entry.chainId}  ${entry.txHash ?? ''}`);
}

async function assertNotTerminal(ctx: OperatorContext, routeId: string, verb: string) {
  const row = await loadRoute(ctx, routeId);
  if (TERMINAL.has(row.status)) throw notAllowed(`route ${routeId} is ${row.status}; nothing to ${verb}`);
  return row;
}

async function update(run: () => Promise<string>): Promise<string> {
  try {
    return await run();
  } catch (error) {
    if (error instanceof WorkflowUpdateFailedError) throw notAllowed(error.cause?.message ?? error.message);
    throw error;
  }
}

export async function retry(ctx: OperatorContext, routeId: string): Promise<void> {
  await assertNotTerminal(ctx, routeId, 'retry');
  const result = await update(() => ctx.temporal.workflow.getHandle(routeId).executeUpdate(retryUpdate));
  print(`${routeId}: ${result}`);
}

export async function fail(ctx: OperatorContext, routeId: string, reason: string | undefined): Promise<void> {
  if (!reason?.trim()) throw usageError('fail needs --reason "…"');
  await assertNotTerminal(ctx, routeId, 'fail');
  await update(() => ctx.temporal.workflow.getHandle(routeId).executeUpdate(failUpdate, { args: [{ reason }] }));
  const row = await waitForTerminal(ctx, routeId, 30_000);
  print(`${routeId}: ${row.status}${row.error ? ` (${row.error})` : ''}`);
  for (const held of row.heldFunds ?? []) print(`  holds ${held.amount} of ${held.token} at ${held.place} ${held.address} on chain ${held.chainId}`);
}

export async function refund(ctx: OperatorContext, routeId: string, to: string | undefined): Promise<void> {
  if (!to || !isAddress(to, { strict: true })) throw usageError('refund needs --to <0x address>');
  const row = await loadRoute(ctx, routeId);
  if (!TERMINAL.has(row.status)) throw notAllowed(`route ${routeId} is ${row.status}; refunds are for finished routes (fail it first if it must end)`);
  if (!row.heldFunds?.some((h) => h.place === 'deposit')) throw notAllowed(`route ${routeId} holds nothing at its deposit address`);
  try {
    const handle = await ctx.temporal.workflow.start(REFUND_WORKFLOW_TYPE, {
      workflowId: refundWorkflowId(routeId),
      taskQueue: ctx.taskQueue,
      args: [{ routeId, to, reason: 'operator refund' }],
      workflowIdReusePolicy: 'ALLOW_DUPLICATE',
    });
    const result = (await handle.result()) as { amount: string; txHash: string };
    print(`${routeId}: refunded ${result.amount} to ${to} (tx ${result.txHash})`);
  } catch (error) {
    if (error instanceof WorkflowExecutionAlreadyStartedError) throw notAllowed(`a refund of ${routeId} is already running`);
    throw error;
  }
}

export async function watch(ctx: OperatorContext, routeId: string, timeoutMs: number): Promise<boolean> {
  let last = '';
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const row = await loadRoute(ctx, routeId);
    const line = `${row.status}${row.needsAttention ? `  NEEDS ATTENTION: ${row.lastError ?? ''}` : ''}${row.error ? `  (${row.error})` : ''}`;
    if (line !== last) print(`${new Date().toISOString()}  ${line}`);
    last = line;
    if (TERMINAL.has(row.status)) return row.status === 'COMPLETED';
    if (Date.now() > deadline) throw notAllowed(`still ${row.status} after ${timeoutMs / 1000} s`);
    await new Promise((r) => setTimeout(r, 500));
  }
}

async function waitForTerminal(ctx: OperatorContext, routeId: string, timeoutMs: number) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const row = await loadRoute(ctx, routeId);
    if (TERMINAL.has(row.status) || Date.now() > deadline) return row;
    await new Promise((r) => setTimeout(r, 200));
  }
}
