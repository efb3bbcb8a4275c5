/**
 * The drill's end checks: what each transfer left on the chains and in the ledger (read here), judged against
 * what was quoted and funded (judgeTransfer, no I/O); and the pool's deposits and withdrawals in all.
 */
import { eq, sql } from 'drizzle-orm';
import { type Address, erc20Abi, getAbiItem } from 'viem';
import { transfers, txIntents } from '../../src/db/schema.ts';
import { entrypointAbi, poolAbi } from '../../src/providers/privacy-pools/abi.ts';
import { chainsOf, type DrillContext, stackOf } from './context.ts';
import { type CreatedTransfer, createdTransfers, finalStatuses, type TransferStatus } from './events.ts';
import type { TransferOutcome } from './types.ts';
import { ledgerOfRoute } from '../../src/transfers/ledgerStore.ts';

const transferEvent = getAbiItem({ abi: erc20Abi, name: 'Transfer' });
const depositedEvent = getAbiItem({ abi: poolAbi, name: 'Deposited' });
const withdrawalEvent = getAbiItem({ abi: entrypointAbi, name: 'WithdrawalRelayed' });

/** What one transfer left behind. Transaction hashes are lowercase. */
interface TransferTraces {
  /** The recipient's balance of the destination token (a fresh address: all of it came from us). */
  received: bigint;
  /** The token transfers to the recipient on its chain. */
  payoutTxs: string[];
  /** The values of the token transfers out of the deposit address on the source chain. */
  depositSends: bigint[];
  /** The pool deposits by the route's hub account. */
  poolDepositTxs: string[];
  ledger: Array<{ entryKey: string; amount: string; txHash: string | null }>;
  /** The route's live intents the chain never mined. */
  unmined: Array<{ id: number; step: string }>;
}

/** Checks every transfer the drill created: a transfer-checked event each. */
export async function checkTransfers(ctx: DrillContext): Promise<void> {
  const { client, hubStartBlock } = chainsOf(ctx);
  const withdrawals = await client('hub').getLogs({
    address: stackOf(ctx).manifest.privacyPools.entrypoint,
    event: withdrawalEvent,
    fromBlock: hubStartBlock,
    toBlock: 'latest',
  });
  const relayed = new Set(withdrawals.map((w) => w.transactionHash.toLowerCase()));
  const statuses = finalStatuses(ctx.events.events);
  /** The route whose ledger claimed each withdrawal so far: no two routes may claim one. */
  const claimedBy = new Map<string, string>();
  for (const transfer of createdTransfers(ctx.events.events)) {
    const traces = await tracesOf(ctx, transfer);
    const outcome = judgeTransfer(
      transfer,
      statuses.find((s) => s.routeId === transfer.routeId),
      traces,
      { relayed, claimedBy },
    );
    const unshieldTx = traces.ledger.find((e) => e.entryKey === 'unshielded')?.txHash?.toLowerCase();
    if (unshieldTx) claimedBy.set(unshieldTx, transfer.routeId);
    ctx.events.append({ type: 'transfer-checked', outcome });
  }
}

async function tracesOf(ctx: DrillContext, c: CreatedTransfer): Promise<TransferTraces> {
  const stack = stackOf(ctx);
  const { client, token, hubStartBlock } = chainsOf(ctx);
  const destToken = token(c.destRole, c.destSymbol);
  const dest = client(c.destRole);
  const received = await dest.readContract({ address: destToken, abi: erc20Abi, functionName: 'balanceOf', args: [c.recipient] });
  const paidLogs = await dest.getLogs({ address: destToken, event: transferEvent, args: { to: c.recipient }, fromBlock: 0n, toBlock: 'latest' });
  const outLogs = await client('source').getLogs({
    address: token('source', 'USDC'),
    event: transferEvent,
    args: { from: c.depositAddress },
    fromBlock: 0n,
    toBlock: 'latest',
  });
  const [row] = await stack.service.db.select({ hubAccount: transfers.hubAccount }).from(transfers).where(eq(transfers.routeId, c.routeId));
  const poolLogs = row
    ? await client('hub').getLogs({
        address: stack.manifest.privacyPools.pool,
        event: depositedEvent,
        args: { _depositor: row.hubAccount as Address },
        fromBlock: hubStartBlock,
        toBlock: 'latest',
      })
    : [];
  const ledger = await ledgerOfRoute(stack.service.db, c.routeId);
  const unmined = await stack.service.db
    .select({ id: txIntents.id, step: txIntents.step })
    .from(txIntents)
    .where(sql`${txIntents.routeId} = ${c.routeId} and ${txIntents.status} = 'pending'`);
  return {
    received,
    payoutTxs: paidLogs.map((l) => l.transactionHash.toLowerCase()),
    depositSends: outLogs.map((l) => l.args.value ?? 0n),
    poolDepositTxs: poolLogs.map((l) => l.transactionHash.toLowerCase()),
    ledger,
    unmined,
  };
}

/**
 * The transfer's outcome and its problems: COMPLETED; the recipient paid the quote exactly (CCTP to another chain:
 * between the quote and the burn), once; the deposit address emptied once; one pool deposit; a ledger that agrees
 * with all of it and claims a relayed withdrawal no other route claimed; no intent left unmined.
 */
function judgeTransfer(
  c: CreatedTransfer,
  view: TransferStatus | undefined,
  traces: TransferTraces,
  withdrawals: { relayed: Set<string>; claimedBy: Map<string, string> },
): TransferOutcome {
  const { received, payoutTxs, depositSends, poolDepositTxs, ledger, unmined } = traces;
  const problems: string[] = [];
  const status = view?.status ?? 'UNKNOWN';
  if (status !== 'COMPLETED') problems.push(`ended ${status}${view?.error ? `: ${view.error}` : ''}`);

  const entry = (kind: string) => ledger.find((e) => e.entryKey === kind);
  const amountOf = (kind: string) => (entry(kind) ? BigInt(entry(kind)!.amount) : null);
  const [shielded, bridgedOut, fee] = [amountOf('shielded'), amountOf('bridged_out'), amountOf('service_fee')];
  const depositSent = depositSends.reduce((sum, value) => sum + value, 0n);
  if (c.exact && received !== c.quoted) problems.push(`the recipient holds ${received}, quoted ${c.quoted}`);
  if (!c.exact && (received < c.quoted || bridgedOut === null || received > bridgedOut))
    problems.push(`the recipient holds ${received}: not between the quote ${c.quoted} and the burn ${bridgedOut}`);
  if (payoutTxs.length !== 1) problems.push(`${payoutTxs.length} token transfers to the recipient (one expected)`);
  if (depositSends.length !== 1 || depositSent !== c.amount)
    problems.push(`the deposit address sent ${depositSends.length} transfers of ${depositSent} in all (one of ${c.amount} expected)`);
  if (poolDepositTxs.length !== 1) problems.push(`${poolDepositTxs.length} pool deposits by its hub account (one expected)`);

  if (amountOf('received') !== c.amount) problems.push(`ledger: received ${amountOf('received')}, funded ${c.amount}`);
  if (amountOf('paid') !== (c.exact ? c.quoted : received))
    problems.push(`ledger: paid ${amountOf('paid')}, ${c.exact ? `quoted ${c.quoted}` : `received ${received}`}`);
  if (payoutTxs.length === 1 && entry('paid')?.txHash?.toLowerCase() !== payoutTxs[0])
    problems.push('ledger: the paid transaction is not the one that paid the recipient');
  if (poolDepositTxs.length === 1 && entry('shielded')?.txHash?.toLowerCase() !== poolDepositTxs[0])
    problems.push('ledger: the shielded transaction is not the pool deposit of its hub account');
  const unshieldTx = entry('unshielded')?.txHash?.toLowerCase();
  const withdrawalFound = !!unshieldTx && withdrawals.relayed.has(unshieldTx) && !withdrawals.claimedBy.has(unshieldTx);
  if (!withdrawalFound)
    problems.push(
      unshieldTx && withdrawals.claimedBy.has(unshieldTx)
        ? `ledger: its withdrawal is also ${withdrawals.claimedBy.get(unshieldTx)}'s`
        : 'ledger: no relayed withdrawal matches its unshielded entry',
    );
  if (shielded === null || bridgedOut === null || fee === null || shielded - bridgedOut !== fee)
    problems.push(`ledger: service fee ${fee} is not shielded ${shielded} − bridged out ${bridgedOut}`);
  if (unmined.length > 0) problems.push(`${unmined.length} recorded transaction(s) never mined: ${unmined.map((u) => `#${u.id} ${u.step}`).join(', ')}`);

  return {
    routeId: c.routeId,
    route: c.route,
    status,
    error: view?.error ?? null,
    amount: c.amount,
    quoted: c.quoted,
    exact: c.exact,
    received,
    payouts: payoutTxs.length,
    depositSends: depositSends.length,
    depositSent,
    poolDeposits: poolDepositTxs.length,
    withdrawalFound,
    unminedIntents: unmined.length,
    problems,
  };
}

/** The pool's deposits and the Entrypoint's relayed withdrawals since the stack started. */
export async function countPool(ctx: DrillContext): Promise<void> {
  const stack = stackOf(ctx);
  const { client, hubStartBlock } = chainsOf(ctx);
  const withdrawals = await client('hub').getLogs({
    address: stack.manifest.privacyPools.entrypoint,
    event: withdrawalEvent,
    fromBlock: hubStartBlock,
    toBlock: 'latest',
  });
  const deposits = await client('hub').getLogs({
    address: stack.manifest.privacyPools.pool,
    event: depositedEvent,
    fromBlock: hubStartBlock,
    toBlock: 'latest',
  });
  ctx.events.append({ type: 'pool-counted', deposits: deposits.length, withdrawals: withdrawals.length });
}
