/** The drill's transfers, through the stack's API as a sender would use it, and how far they got in Postgres. */
import { inArray, sql } from 'drizzle-orm';
import { type Address, erc20Abi } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { ledgerEntries, transfers, txIntents } from '../../src/db/schema.ts';
import { chainsOf, type DrillContext, stackOf } from './context.ts';
import { type CreatedTransfer, createdTransfers, type TransferStatus } from './events.ts';
import { DrillError } from './types.ts';

async function apiCall<T>(ctx: DrillContext, method: 'GET' | 'POST', route: string, body?: unknown, statusToken?: string): Promise<T> {
  const response = await fetch(`${stackOf(ctx).apiUrl}${route}`, {
    method,
    headers: {
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      ...(statusToken ? { authorization: `Bearer ${statusToken}` } : {}),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(30_000),
  });
  const json = (await response.json()) as { success: boolean; data?: T; error?: string };
  if (!json.success || json.data === undefined) throw new DrillError(`${method} ${route} answered ${response.status}: ${json.error ?? 'no data'}`);
  return json.data;
}

/** Creates `count` transfers one after another and funds each from the faucet, as its sender would. */
export async function createAndFundTransfers(ctx: DrillContext, count: number): Promise<void> {
  for (let n = 0; n < count; n++) {
    const i = createdTransfers(ctx.events.events).length;
    const transfer = await createTransfer(ctx, i);
    ctx.events.append({ type: 'transfer-created', transfer });
    await fund(ctx, transfer);
    ctx.settings.log(`created and funded ${transfer.routeId} (${amountOf(i)} ${transfer.route})`);
  }
}

/** The drill's i-th amount, in USDC: a different one for each transfer. */
const amountOf = (i: number) => `${20 + 7 * i}.${(13 * i) % 100}`;

/**
 * The drill's i-th transfer, to a fresh recipient. Relay: USDC → USDC and USDC → WETH on the destination chain.
 * CCTP (USDC only): one in three pays on the hub (direct leg).
 */
async function createTransfer(ctx: DrillContext, i: number): Promise<CreatedTransfer> {
  const { chain } = chainsOf(ctx);
  const bridge = ctx.settings.bridge;
  const destRole: 'destination' | 'hub' = bridge === 'cctp' && i % 3 === 2 ? 'hub' : 'destination';
  const destSymbol = bridge === 'relay' && i % 2 === 1 ? 'WETH' : 'USDC';
  const recipient = privateKeyToAccount(generatePrivateKey()).address;
  const t = await apiCall<{ routeId: string; statusToken: string; amount: string; quotedOutputAmount: string; depositAddress: Address }>(
    ctx,
    'POST',
    '/api/private-route',
    {
      sourceChainId: chain('source').chainId,
      destChainId: chain(destRole).chainId,
      amount: amountOf(i),
      tokenSymbol: 'USDC',
      destTokenSymbol: destSymbol,
      userDestinationAddress: recipient,
    },
  );
  return {
    routeId: t.routeId,
    statusToken: t.statusToken,
    route: `USDC → ${destSymbol}${destRole === 'hub' ? ' on the hub' : ''}`,
    amount: BigInt(t.amount),
    quoted: BigInt(t.quotedOutputAmount),
    depositAddress: t.depositAddress,
    recipient,
    destRole,
    destSymbol,
    exact: bridge === 'relay' || destRole === 'hub',
  };
}

async function fund(ctx: DrillContext, transfer: CreatedTransfer): Promise<void> {
  const { faucet, token, client } = chainsOf(ctx);
  const hash = await faucet.writeContract({
    chain: null,
    address: token('source', 'USDC'),
    abi: erc20Abi,
    functionName: 'transfer',
    args: [transfer.depositAddress, transfer.amount],
  });
  await client('source').waitForTransactionReceipt({ hash, timeout: 30_000 });
}

/** Every transfer's status in the creator's view. */
export async function transferStatuses(ctx: DrillContext): Promise<TransferStatus[]> {
  return Promise.all(
    createdTransfers(ctx.events.events).map(async (c) => {
      const view = await apiCall<{ status: string; error: string | null; needsAttention: boolean }>(
        ctx,
        'GET',
        `/api/private-route/${c.routeId}`,
        undefined,
        c.statusToken,
      );
      return { routeId: c.routeId, status: view.status, error: view.error, needsAttention: view.needsAttention };
    }),
  );
}

/** What moves when a transfer makes progress: its projected status, ledger, intents and their outcomes (null: no transfer yet, or Postgres is away). */
export async function progressMark(ctx: DrillContext): Promise<string | null> {
  const ids = createdTransfers(ctx.events.events).map((c) => c.routeId);
  if (ids.length === 0) return null;
  try {
    const [row] = await stackOf(ctx).service.db.execute<{ seq: string; ledger: string; intents: string; mined: string }>(sql`
      select
        (select coalesce(sum(${transfers.statusSeq}), 0) from ${transfers} where ${inArray(transfers.routeId, ids)}) as seq,
        (select count(*) from ${ledgerEntries} where ${inArray(ledgerEntries.routeId, ids)}) as ledger,
        (select count(*) from ${txIntents} where ${inArray(txIntents.routeId, ids)}) as intents,
        (select count(*) from ${txIntents} where ${inArray(txIntents.routeId, ids)} and ${txIntents.status} = 'mined') as mined`);
    return row ? `${row.seq}/${row.ledger}/${row.intents}/${row.mined}` : null;
  } catch {
    return null;
  }
}
