import os from 'node:os';
import { ApplicationFailure, WorkflowExecutionAlreadyStartedError, WorkflowFailedError, WorkflowUpdateFailedError } from '@temporalio/client';
import { and, asc, desc, eq, inArray, isNotNull, type SQL } from 'drizzle-orm';
import { isAddress } from 'viem';
import { senderQueues } from '../chain/txSender.ts';
import { transfers, txIntents, webhookDeliveries } from '../db/schema.ts';
import { formatAmount } from '../money/amount.ts';
import { urlOrigin } from '../redact.ts';
import {
  finishAction,
  listActions,
  OPERATOR_REFUSED,
  type OperatorAction,
  type OperatorActionKind,
  recoverTooSoon,
  requestAction,
} from '../operators/audit.ts';
import { operatorFailUpdate, operatorRetryUpdate, stateQuery } from '../../workflows/definitions.ts';
import { RECOVER_WORKFLOW_TYPE, type RecoverResult, recoverWorkflowId, VOID_INTENT_WORKFLOW_TYPE, voidIntentWorkflowId } from '../../workflows/operator.ts';
import { refundScheduleQuery, refundWorkflowId } from '../../workflows/refunds.ts';
import { REFUND_WORKFLOW_TYPE } from '../../workflows/types.ts';
import { isTerminalStatus, TRANSFER_STATUSES, type TransferState } from '../domain/status.ts';
import type { IntentSummary } from '../domain/operatorResults.ts';
import { chainClients, CliError, loadRoute, notAllowed, type OperatorContext, print, usageError } from './context.ts';
import { ledgerOfRoute } from '../transfers/ledgerStore.ts';
import { type PoolNoteRow, poolNoteOfRoute } from '../transfers/poolNoteStore.ts';

/** Who runs a mutating command, and why: written to operator_actions with the action. */
export interface Operator {
  operator: string;
  reason: string;
  /** Where the identity came from: --operator, ROUTECTL_OPERATOR, or the login (user@host) when neither is given. */
  identity: 'flag' | 'env' | 'os';
}

/**
 * The operator of a mutating command. --operator, else ROUTECTL_OPERATOR, else the login as user@host: declared, not
 * proven (whoever reaches Postgres and Temporal can write any name), but never blank, and the audit row says which.
 * The reason is required: an action nobody can explain later is not taken.
 */
export function operatorOf(command: string, flags: { operator?: string; reason?: string }, env: NodeJS.ProcessEnv = process.env): Operator {
  const reason = flags.reason?.trim();
  if (!reason) {
    throw usageError(
      `${command} needs --reason "…": why you do it, recorded in the audit log (routectl actions) with your identity (--operator <name> or ROUTECTL_OPERATOR)`,
    );
  }
  if (reason.length > 500) throw usageError('--reason is at most 500 characters');
  const declared =
    flags.operator !== undefined
      ? { name: flags.operator.trim(), identity: 'flag' as const }
      : env.ROUTECTL_OPERATOR
        ? { name: env.ROUTECTL_OPERATOR.trim(), identity: 'env' as const }
        : null;
  if (declared && !/^[^\s\p{C}][^\p{C}]{0,119}$/u.test(declared.name)) {
    throw usageError(
      `${declared.identity === 'flag' ? '--operator' : 'ROUTECTL_OPERATOR'} must be a name of 1-120 printable characters, e.g. alice@example.com`,
    );
  }
  if (declared) return { operator: declared.name, reason, identity: declared.identity };
  return { operator: `${os.userInfo().username}@${os.hostname()}`, reason, identity: 'os' };
}

/**
 * Runs one operator action with its audit row: written ahead (requested), ended after (done with `detail`, refused
 * when it was not allowed now, failed otherwise). An activity that checked the action may have ended it first, with
 * its own detail; that stands.
 */
export async function audited<T>(
  ctx: OperatorContext,
  who: Operator,
  action: { routeId: string | null; action: OperatorActionKind; params?: Record<string, unknown> },
  run: (actionId: number) => Promise<{ value: T; detail: string }>,
): Promise<T> {
  const actionId = await requestAction(ctx.db, { ...action, operator: who.operator, reason: who.reason, params: { ...action.params, identity: who.identity } });
  try {
    const { value, detail } = await run(actionId);
    await finishAction(ctx.db, actionId, 'done', detail);
    return value;
  } catch (error) {
    const refused = error instanceof CliError && error.exitCode === 4;
    await finishAction(ctx.db, actionId, refused ? 'refused' : 'failed', error instanceof Error ? error.message : String(error));
    throw error;
  }
}

const request = (who: Operator, actionId: number) => ({ operator: who.operator, reason: who.reason, actionId });

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
    const attention = row.needsAttention
      ? `  NEEDS ATTENTION${row.parkedStep ? ` (parked at ${row.parkedStep} since ${row.parkedSince?.toISOString()})` : ''}: ${row.lastError ?? ''}`
      : '';
    print(`${row.routeId}  ${row.status.padEnd(16)} ${row.updatedAt.toISOString()}${attention}`);
  }
}

export async function show(ctx: OperatorContext, routeId: string, json: boolean): Promise<void> {
  const row = await loadRoute(ctx, routeId);
  const ledger = await ledgerOfRoute(ctx.db, routeId);
  const handle = ctx.temporal.workflow.getHandle(routeId);
  const workflow = await handle.describe().then(
    (d) => ({ status: d.status.name, startTime: d.startTime.toISOString(), closeTime: d.closeTime?.toISOString() ?? null }),
    (error: unknown) => ({ error: error instanceof Error ? error.message : String(error) }),
  );
  const state: TransferState | null = 'status' in workflow && workflow.status === 'RUNNING' ? await handle.query(stateQuery).catch(() => null) : null;
  const actions = await listActions(ctx.db, { routeId, limit: 50 });
  const webhooks = await ctx.db.select().from(webhookDeliveries).where(eq(webhookDeliveries.routeId, routeId)).orderBy(asc(webhookDeliveries.statusSeq));
  // The webhook URL's path and query may carry the client's own secret: operators see its origin only.
  const webhookOrigin = row.webhookUrl ? urlOrigin(row.webhookUrl) : null;
  const note = await poolNoteOfRoute(ctx.db, routeId);
  // The seed would tell when the note's future draws come up: it is no operator's business.
  const pool = note && (({ exitSeed: _seed, ...rest }) => rest)(note);
  if (json)
    return print({ transfer: { ...row, webhookUrl: webhookOrigin }, workflow: { ...workflow, state }, pool, ledger, actions, webhookDeliveries: webhooks });

  print(`route       ${row.routeId}`);
  print(`status      ${row.status}${row.error ? `  (${row.error})` : ''}`);
  print(
    `workflow    ${'status' in workflow ? `${workflow.status}, started ${workflow.startTime}${state?.step ? `, step ${state.step}` : ''}` : workflow.error}`,
  );
  if (row.needsAttention) {
    print(`ATTENTION   ${row.parkedStep ? `parked at ${row.parkedStep} since ${row.parkedSince?.toISOString()}` : 'holds funds for an operator decision'}`);
    print(`last error  ${row.lastError ?? ''}`);
    if (row.parkedStep) print(`decide      routectl retry ${row.routeId}   |   routectl fail ${row.routeId} --reason "…"`);
  }
  print(
    `amount      ${formatAmount(BigInt(row.amount), row.sourceDecimals)} ${row.symbol} on ${row.sourceChainId} -> ${formatAmount(BigInt(row.quotedOutputAmount), row.destDecimals)} ${row.destSymbol} on ${row.destChainId}`,
  );
  print(`deposit     ${row.depositAddress} (deadline ${row.depositDeadline.toISOString()})`);
  print(`hub         ${row.hubAccount}   exit ${row.exitAccount ?? '(not yet: the worker records it at the bridge-in)'}`);
  print(`recipient   ${row.userDestinationAddress}${row.refundAddress ? `   refunds to ${row.refundAddress}` : '   (no refundAddress)'}`);
  if (row.payoutTxHash) print(`payout tx   ${row.payoutTxHash}`);
  for (const held of row.heldFunds ?? []) print(`held        ${held.amount} of ${held.token} at ${held.place} ${held.address} on chain ${held.chainId}`);
  for (const line of privacyLines(note, { minimum: row.minAnonymitySet ?? 1, reported: row.anonymitySet })) print(line);
  print('ledger:');
  for (const entry of ledger) print(`  ${entry.entryKey.padEnd(22)} ${entry.amount.padStart(24)}  chain ${entry.chainId}  ${entry.txHash ?? ''}`);
  print(actions.length > 0 ? 'operator actions (newest first):' : 'operator actions: none');
  for (const action of actions) print(`  ${actionLine(action)}`);
  print(webhookOrigin ? `webhook deliveries (to ${webhookOrigin}/…):` : 'webhook deliveries: none (no webhookUrl)');
  for (const delivery of webhooks) print(`  ${webhookDeliveryLine(delivery)}`);
}

/**
 * The route's way through the pool for `routectl show` (docs/privacy.md, "Timing"): when its note entered and was
 * approved, its gate and what the last gate decision counted, the exit drawn, the withdrawal and the set reported.
 */
export function privacyLines(note: PoolNoteRow | null, route: { minimum: number; reported: number | null }): string[] {
  if (!note) return [];
  const at = (date: Date | null) => date?.toISOString() ?? '-';
  const lines = [`pool        entered ${at(note.depositedAt)}, approved ${at(note.approvedAt)}, asks for a set of ${route.minimum}`];
  const log = note.gateLog;
  const gate = note.gatedAt
    ? `open from the exit epoch ${at(note.gatedAt)} (${note.gateReason === 'max-wait' ? 'its longest wait passed' : 'its set was reached'})`
    : 'closed';
  lines.push(`gate        ${gate}`);
  if (log) {
    lines.push(
      `  counted   for the epoch ${log.epoch}: set ${log.set} (minimum ${log.minimum}, ${log.method}); ${log.candidates} gated peers of ${log.clients} clients, itself included; a cohort of ${log.cohort} opening together`,
      `            ${log.withdrawals} withdrawals of the class before it (exits drawn count as made), ${log.settled} of them settled; ${log.waiting} notes still at their gates, not counted`,
    );
  }
  if (note.withdrawnAt) lines.push(`withdrawn   ${at(note.withdrawnAt)} in the exit epoch ${at(note.exitEpochAt)}; set reported ${route.reported ?? '-'}`);
  else if (note.exitAt) lines.push(`exit        drawn for ${at(note.exitAt)} (the exit epoch ${at(note.exitEpochAt)})`);
  else if (note.ragequitAt) lines.push(`ragequit    ${at(note.ragequitAt)}`);
  return lines;
}

/** One webhook delivery of `routectl show`: the status it reports, its state, attempts, last answer and times. */
export function webhookDeliveryLine(d: typeof webhookDeliveries.$inferSelect): string {
  const answer = d.lastResponseStatus !== null ? `last answer ${d.lastResponseStatus}` : d.attempts > 0 ? 'no answer' : 'not tried yet';
  const times = [
    `created ${d.createdAt.toISOString()}`,
    d.state === 'pending' && (d.deliverAfter ? `goes out from ${d.deliverAfter.toISOString()}` : 'held until the route ends'),
    d.lastAttemptAt && `last attempt ${d.lastAttemptAt.toISOString()}`,
    d.deliveredAt && `delivered ${d.deliveredAt.toISOString()}`,
  ]
    .filter(Boolean)
    .join(', ');
  return `#${d.statusSeq} ${d.status.padEnd(16)} ${d.state.padEnd(9)} attempts ${d.attempts}  ${answer}${d.lastError ? ` (${d.lastError})` : ''}  ${times}`;
}

/** `routectl actions`: the audit log, newest first. */
export async function actions(ctx: OperatorContext, filter: { routeId?: string; operator?: string; limit: number; json: boolean }): Promise<void> {
  const rows = await listActions(ctx.db, filter);
  if (filter.json) return print(rows);
  if (rows.length === 0) return print('no operator actions match');
  for (const row of rows) print(`${row.routeId ?? '-'}  ${actionLine(row)}`);
}

function actionLine(row: OperatorAction): string {
  const params = Object.entries(row.params)
    .filter(([key]) => key !== 'identity')
    .map(([key, value]) => `${key}=${String(value)}`)
    .join(' ');
  const identity = row.params.identity === 'os' ? ' (login)' : '';
  return `#${row.id}  ${row.createdAt.toISOString()}  ${row.operator}${identity}  ${row.action}${params ? ` ${params}` : ''}  "${row.reason}"  ${row.outcome}${row.detail ? `: ${row.detail}` : ''}`;
}

async function assertNotTerminal(ctx: OperatorContext, routeId: string, verb: string) {
  const row = await loadRoute(ctx, routeId);
  if (isTerminalStatus(row.status)) throw notAllowed(`route ${routeId} is ${row.status}; nothing to ${verb}`);
  return row;
}

async function retryOne(ctx: OperatorContext, who: Operator, routeId: string, params: Record<string, unknown> = {}): Promise<string> {
  return audited(ctx, who, { routeId, action: 'retry', params }, async (actionId) => {
    await assertNotTerminal(ctx, routeId, 'retry');
    const result = await update(() => ctx.temporal.workflow.getHandle(routeId).executeUpdate(operatorRetryUpdate, { args: [request(who, actionId)] }));
    return { value: result, detail: result };
  });
}

async function update(run: () => Promise<string>): Promise<string> {
  try {
    return await run();
  } catch (error) {
    if (error instanceof WorkflowUpdateFailedError) throw notAllowed(error.cause?.message ?? error.message);
    throw error;
  }
}

export async function retry(ctx: OperatorContext, who: Operator, routeId: string): Promise<void> {
  await loadRoute(ctx, routeId);
  print(`${routeId}: ${await retryOne(ctx, who, routeId)}`);
}

/**
 * Retries every parked transfer that matches the filters (after a provider outage parked many at once).
 * Each gets the same `retry` update as `routectl retry`; one that is no longer parked is reported and skipped.
 */
export async function retryAllParked(
  ctx: OperatorContext,
  who: Operator | null,
  filter: { step?: string; status?: string; error?: string; dryRun: boolean },
): Promise<void> {
  const conditions: SQL[] = [eq(transfers.needsAttention, true), isNotNull(transfers.parkedStep)];
  if (filter.step) conditions.push(eq(transfers.parkedStep, filter.step));
  if (filter.status) conditions.push(eq(transfers.status, filter.status.toUpperCase()));
  const parked = (
    await ctx.db
      .select({ routeId: transfers.routeId, parkedStep: transfers.parkedStep, lastError: transfers.lastError })
      .from(transfers)
      .where(and(...conditions))
      .orderBy(asc(transfers.parkedSince))
  ).filter((row) => !filter.error || (row.lastError ?? '').includes(filter.error));
  if (parked.length === 0) return print('no parked transfers match');
  let retried = 0;
  for (const row of parked) {
    if (filter.dryRun || !who) {
      print(`${row.routeId}: would retry ${row.parkedStep}`);
      continue;
    }
    try {
      print(`${row.routeId}: ${await retryOne(ctx, who, row.routeId, { step: row.parkedStep, allParked: true })}`);
      retried += 1;
    } catch (error) {
      print(`${row.routeId}: not retried: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
  if (!filter.dryRun) print(`retried ${retried} of ${parked.length} parked transfers`);
  if (retried < parked.length && !filter.dryRun) throw new CliError(`${parked.length - retried} parked transfers were not retried`, 1);
}

export async function fail(ctx: OperatorContext, who: Operator, routeId: string): Promise<void> {
  await loadRoute(ctx, routeId);
  const row = await audited(ctx, who, { routeId, action: 'fail' }, async (actionId) => {
    await assertNotTerminal(ctx, routeId, 'fail');
    await update(() => ctx.temporal.workflow.getHandle(routeId).executeUpdate(operatorFailUpdate, { args: [request(who, actionId)] }));
    const ended = await waitForTerminal(ctx, routeId, 30_000);
    return { value: ended, detail: `${ended.status}${ended.error ? ` (${ended.error})` : ''}` };
  });
  print(`${routeId}: ${row.status}${row.error ? ` (${row.error})` : ''}`);
  for (const held of row.heldFunds ?? []) print(`  holds ${held.amount} of ${held.token} at ${held.place} ${held.address} on chain ${held.chainId}`);
  if (row.heldFunds?.length)
    print(
      `move them: routectl refund ${routeId} --to <its refundAddress> (deposit; never its recipient) | routectl recover ${routeId} --side deposit (pool, hub) | --side exit (exit), at unrelated times`,
    );
}

/**
 * `routectl refund`: what a finished route's deposit address holds, to its refundAddress or an allowed address (its
 * recipient, or any other, only with `--override "<why>"`). By default the refund is checked now and sent after a
 * random delay (REFUND_DELAY_MIN..MAX_SECONDS, as strays are): a refund right after the route ended would time its
 * funds' way back next to its end. `--now` sends it at once; both are recorded in the audit log.
 */
export async function refund(
  ctx: OperatorContext,
  who: Operator,
  routeId: string,
  opts: { to: string | undefined; override?: string; now?: boolean },
): Promise<void> {
  const { to } = opts;
  if (!to || !isAddress(to, { strict: true })) throw usageError('refund needs --to <0x address>');
  const row = await loadRoute(ctx, routeId);
  const params = { to, ...(opts.override?.trim() && { override: opts.override.trim() }), now: opts.now === true };
  const precheck = () => {
    if (!isTerminalStatus(row.status)) throw notAllowed(`route ${routeId} is ${row.status}; refunds are for finished routes (fail it first if it must end)`);
    if (!row.heldFunds?.some((h) => h.place === 'deposit')) throw notAllowed(`route ${routeId} holds nothing at its deposit address`);
  };
  if (!opts.now) {
    const scheduled = await scheduleRefund(ctx, who, routeId, params, precheck);
    print(
      `${routeId}: refund to ${to} checked and scheduled for ${new Date(scheduled).toISOString()} (a random delay; --now sends at once). ` +
        `routectl actions --route ${routeId} shows it done`,
    );
    return;
  }
  const result = await audited(ctx, who, { routeId, action: 'refund', params }, async (actionId) => {
    precheck();
    const refunded = await runWorkflow<{ amount: string; txHash: string; to?: string; earlier?: string }>(
      ctx,
      REFUND_WORKFLOW_TYPE,
      refundWorkflowId(routeId),
      { routeId, to, ...request(who, actionId) },
      `a refund of ${routeId} is already running`,
    );
    return { value: refunded, detail: `refunded ${refunded.amount} to ${refunded.to ?? to} (tx ${refunded.txHash})` };
  });
  // An earlier refund run's refund that mined unbooked is booked and reported instead of signing a second one.
  if (result.earlier)
    print(
      `${routeId}: an earlier refund (refund:${result.earlier}) had sent ${result.amount} to ${result.to}; booked now, nothing new was sent (tx ${result.txHash})`,
    );
  else print(`${routeId}: refunded ${result.amount} to ${result.to ?? to} (tx ${result.txHash})`);
}

/**
 * Starts a delayed refund and waits only for its check: the audit row stays `requested` until the worker sends the
 * refund (and marks it done) or refuses it. Returns when it will be sent.
 */
async function scheduleRefund(
  ctx: OperatorContext,
  who: Operator,
  routeId: string,
  params: { to: string; override?: string; now: boolean },
  precheck: () => void,
): Promise<number> {
  const actionId = await requestAction(ctx.db, {
    routeId,
    action: 'refund',
    operator: who.operator,
    reason: who.reason,
    params: { ...params, identity: who.identity },
  });
  try {
    precheck();
    const handle = await ctx.temporal.workflow
      .start(REFUND_WORKFLOW_TYPE, {
        workflowId: refundWorkflowId(routeId),
        taskQueue: ctx.taskQueue,
        args: [{ routeId, to: params.to, operatorDelay: true, ...request(who, actionId) }],
        workflowIdReusePolicy: 'ALLOW_DUPLICATE',
      })
      .catch((error: unknown) => {
        throw error instanceof WorkflowExecutionAlreadyStartedError ? notAllowed(`a refund of ${routeId} is already running`) : error;
      });
    const deadline = Date.now() + 60_000;
    for (;;) {
      const schedule = await handle.query(refundScheduleQuery).catch(() => null);
      if (schedule?.checked) return schedule.sendsAt ?? Date.now();
      const { status } = await handle.describe();
      // Refused by its check (the worker marked the audit row): the workflow's failure says why.
      if (status.name !== 'RUNNING') await handle.result();
      if (Date.now() > deadline)
        throw new CliError(`the refund of ${routeId} was not checked within 60 s; is the worker running? (workflow ${handle.workflowId})`, 1);
      await new Promise((r) => setTimeout(r, 250));
    }
  } catch (error) {
    const refusal = asRefusal(error);
    await finishAction(ctx.db, actionId, refusal.exitCode === 4 ? 'refused' : 'failed', refusal.message);
    throw refusal;
  }
}

/**
 * `routectl recover --side deposit|exit`: one side of a FAILED route goes to its own address (deposit side: pool note
 * by ragequit and hub account, to its refundAddress; exit side: exit account, to its recipient) or, with `--to`, to
 * an allowed address; anything else, or the other side within an hour of this one, needs `--override "<why>"`.
 */
export async function recover(
  ctx: OperatorContext,
  who: Operator,
  routeId: string,
  opts: { side: string | undefined; to: string | undefined; override: string | undefined },
): Promise<void> {
  const { side, override } = opts;
  if (side !== 'deposit' && side !== 'exit') {
    throw usageError('recover needs --side deposit (pool note and hub account, to the refundAddress) or --side exit (exit account, to the recipient)');
  }
  const row = await loadRoute(ctx, routeId);
  const to = opts.to ?? (side === 'deposit' ? row.refundAddress : row.userDestinationAddress);
  if (!to) throw usageError(`route ${routeId} has no refundAddress: pass --to <0x address on the hub chain> (and --override "<why>" unless it is allowed)`);
  if (opts.to !== undefined && !isAddress(opts.to, { strict: true })) throw usageError('recover needs --to <0x address on the hub chain>');
  const params = { to, side, ...(override?.trim() && { override: override.trim() }) };
  const result = await audited(ctx, who, { routeId, action: 'recover', params }, async (actionId) => {
    if (row.status !== 'FAILED') throw notAllowed(`route ${routeId} is ${row.status}; recover is for FAILED routes (fail it first if it must end)`);
    const tooSoon = recoverTooSoon(await listActions(ctx.db, { routeId }), routeId, side, params.override);
    if (tooSoon) throw notAllowed(tooSoon);
    const recovered = await runWorkflow<RecoverResult>(
      ctx,
      RECOVER_WORKFLOW_TYPE,
      recoverWorkflowId(routeId),
      { routeId, ...params, ...request(who, actionId) },
      `a recovery of ${routeId} is already running`,
    );
    return {
      value: recovered,
      detail: recovered.recovered.map((m) => `${m.key} ${m.amount} (tx ${m.txHash})`).join(', ') || 'nothing held at hub, pool or exit',
    };
  });
  if (result.recovered.length === 0) print(`${routeId}: nothing held at the hub account, in the pool or at the exit account`);
  for (const moved of result.recovered) {
    if (moved.place === 'pool') print(`${routeId}: pool note of ${moved.amount} back to the hub account (ragequit, tx ${moved.txHash})`);
    else print(`${routeId}: ${moved.amount} sent from the ${moved.place} account (ledger recovered:${moved.key}, tx ${moved.txHash})`);
  }
  for (const held of result.held) {
    print(
      `  still holds ${held.amount} of ${held.token} at ${held.place} ${held.address} on chain ${held.chainId}${held.place === 'deposit' ? ' (routectl refund)' : ''}`,
    );
  }
}

/** `routectl senders`: every sender's pending transactions (what the chain has not mined), oldest nonce first. */
export async function senders(ctx: OperatorContext, json: boolean): Promise<void> {
  const queue = await senderQueues(ctx.db, chainClients());
  const routeIds = [...new Set(queue.map((q) => q.routeId))];
  const routes = routeIds.length > 0 ? await ctx.db.select().from(transfers).where(inArray(transfers.routeId, routeIds)) : [];
  // A route's own account, or a sender all routes share (the gas account, the pool's relayer).
  const roleOf = (routeId: string, sender: string) => {
    const route = routes.find((r) => r.routeId === routeId);
    const places = { deposit: route?.depositAddress, hub: route?.hubAccount, exit: route?.exitAccount };
    return Object.entries(places).find(([, address]) => address?.toLowerCase() === sender.toLowerCase())?.[0] ?? 'shared';
  };
  const rows = queue.map((q) => ({ ...q, senderRole: roleOf(q.routeId, q.sender) }));
  if (json) return print(rows);
  if (rows.length === 0) return print('no pending transactions');
  let current = '';
  for (const row of rows) {
    if (`${row.chainId}:${row.sender}` !== current) {
      current = `${row.chainId}:${row.sender}`;
      print(`chain ${row.chainId}  ${row.sender}  ${row.senderRole === 'shared' ? 'shared sender' : `${row.senderRole} account of ${row.routeId}`}`);
    }
    const state = `${row.head ? 'next to mine' : 'queued'}, ${row.atNode ? 'at the node' : 'NOT at the node'}`;
    print(`  nonce ${row.nonce}  #${row.id}  ${row.routeId}  ${row.step}  attempt ${row.attempts}  age ${row.ageSeconds} s  (${state})`);
  }
  print('void one: routectl void <id> once its nonce is used, or routectl void <id> --cancel to replace it first');
}

/** `routectl void`: ends an intent that can never mine (or first makes sure of that with a 0-value replacement). */
export async function voidIntent(ctx: OperatorContext, who: Operator, idArg: string, opts: { cancel: boolean }): Promise<void> {
  const id = Number(idArg);
  if (!/^\d+$/.test(idArg) || !Number.isSafeInteger(id) || id <= 0) throw usageError('void needs an intent id (a number, as routectl senders lists it)');
  const reason = who.reason;
  const [intent] = await ctx.db.select({ routeId: txIntents.routeId, step: txIntents.step }).from(txIntents).where(eq(txIntents.id, id));
  const result = await audited(
    ctx,
    who,
    { routeId: intent?.routeId ?? null, action: 'void', params: { intentId: id, cancel: opts.cancel, step: intent?.step ?? null } },
    async (actionId) => {
      const voided = await runWorkflow<{ intent: IntentSummary | null; cancelTxHash: string | null; originalMined: boolean }>(
        ctx,
        VOID_INTENT_WORKFLOW_TYPE,
        voidIntentWorkflowId(id),
        { intentId: id, cancel: opts.cancel, ...request(who, actionId) },
        `intent #${id} is already being voided`,
      );
      if (voided.originalMined || !voided.intent) throw notAllowed(`intent #${id} mined before its replacement did; nothing voided`);
      return { value: voided, detail: `voided${voided.cancelTxHash ? ` after its replacement (tx ${voided.cancelTxHash}) mined` : ''}` };
    },
  );
  const { routeId, step, voidReason } = result.intent!;
  print(
    `intent #${id} (${routeId} ${step}): voided${result.cancelTxHash ? ` after its replacement (tx ${result.cancelTxHash}) mined` : ''}: ${voidReason ?? reason}`,
  );
}

/** Failures of the refund, recover and void workflows that mean "not now" (exit 4); any other is a failure (exit 1). */
const REFUSALS = new Set(['NothingToRefund', 'RefundBelowMinimum', 'RouteSendPending', 'UnknownRoute', 'RouteNotFailed', 'VoidRefused', OPERATOR_REFUSED]);

/** Starts an operator workflow and waits for its result; a failure is reported with its own message. */
export async function runWorkflow<T>(ctx: OperatorContext, type: string, workflowId: string, input: unknown, busy: string): Promise<T> {
  try {
    const handle = await ctx.temporal.workflow.start(type, { workflowId, taskQueue: ctx.taskQueue, args: [input], workflowIdReusePolicy: 'ALLOW_DUPLICATE' });
    return (await handle.result()) as T;
  } catch (error) {
    if (error instanceof WorkflowExecutionAlreadyStartedError) throw notAllowed(busy);
    throw asRefusal(error);
  }
}

/** A failed operator workflow as routectl reports it: its root cause, exit code 4 for a refusal; other errors as they are. */
function asRefusal(error: unknown): Error & { exitCode?: number } {
  if (error instanceof CliError) return error;
  if (!(error instanceof WorkflowFailedError)) return error instanceof Error ? error : new Error(String(error));
  let cause: Error = error;
  while (cause.cause instanceof Error) cause = cause.cause;
  const refusal = cause instanceof ApplicationFailure && cause.type !== undefined && cause.type !== null && REFUSALS.has(cause.type);
  return new CliError(cause.message, refusal ? 4 : 1);
}

export async function watch(ctx: OperatorContext, routeId: string, timeoutMs: number): Promise<boolean> {
  let last = '';
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const row = await loadRoute(ctx, routeId);
    const line = `${row.status}${row.needsAttention ? `  NEEDS ATTENTION: ${row.lastError ?? ''}` : ''}${row.error ? `  (${row.error})` : ''}`;
    if (line !== last) print(`${new Date().toISOString()}  ${line}`);
    last = line;
    if (isTerminalStatus(row.status)) return row.status === 'COMPLETED';
    if (Date.now() > deadline) throw notAllowed(`still ${row.status} after ${timeoutMs / 1000} s`);
    await new Promise((r) => setTimeout(r, 500));
  }
}

async function waitForTerminal(ctx: OperatorContext, routeId: string, timeoutMs: number) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const row = await loadRoute(ctx, routeId);
    if (isTerminalStatus(row.status) || Date.now() > deadline) return row;
    await new Promise((r) => setTimeout(r, 200));
  }
}
