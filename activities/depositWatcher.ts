import { heartbeat, sleep } from '@temporalio/activity';
import { and, eq, inArray, sql } from 'drizzle-orm';
import { erc20Abi, getAddress, parseAbiItem, type Address, type Log, type PublicClient } from 'viem';
import { depositTokens, depositWatchCursors, transfers } from '../src/db/schema.ts';
import type { ActivityDeps } from './deps.ts';

/** Transfer logs are read at most this many blocks at a time (providers cap eth_getLogs ranges). */
const LOG_BLOCK_RANGE = 500n;
/** Blocks below the cursor read again on every pass, so a log that a short reorg moved is still seen. */
export const REORG_MARGIN_BLOCKS = 12n;

const TRANSFER_EVENT = parseAbiItem('event Transfer(address indexed from, address indexed to, uint256 value)');
type TransferLog = Log<bigint, number, false, typeof TRANSFER_EVENT>;

/** What the watcher tells a waiting transfer: its deposit address's balance of the route's token at a block. */
export interface DepositObservation {
  balance: string;
  blockNumber: number;
}

/** How the watcher reaches the transfer workflows (a Temporal signal in production; tests inject their own). */
export interface WorkflowNotifier {
  /** Resolves quietly when the route's workflow is no longer running. */
  depositObserved(routeId: string, observation: DepositObservation): Promise<void>;
}

export interface WatchDepositsInput {
  chainId: number;
  /** The activity returns after this long, so its workflow can continue as new with a short history. */
  runForSeconds: number;
}

/**
 * Deposit detection that costs O(blocks), not O(routes): one watcher per source chain reads every ERC-20
 * Transfer log of each new block (any token contract), looks their recipients up among the deposit addresses,
 * and then:
 * - tells a transfer still awaiting its deposit the balance of its token at its address (a signal; the
 *   workflow itself only waits on a durable timer for its deadline, holding no activity slot);
 * - records any other token sent to a deposit address (held or refunded by the stray-deposit check);
 * - marks the route as seen, so a finished route's surplus, second or late deposit is checked (activities/strays.ts).
 * The cursor is durable (deposit_watch_cursors); each pass re-reads REORG_MARGIN_BLOCKS below it.
 */
export function depositWatcherActivities(deps: ActivityDeps) {
  async function startBlock(client: PublicClient, chainId: number, head: bigint): Promise<bigint> {
    const [cursor] = await deps.db.select().from(depositWatchCursors).where(eq(depositWatchCursors.chainId, chainId));
    if (cursor) return BigInt(cursor.nextBlock);
    // First run on this chain: from when its oldest unfinished route was created (deposits that arrived before
    // the watcher existed are still found), or from the head when there is none.
    const [oldest] = await deps.db
      .select({ createdAt: sql<Date>`min(${transfers.createdAt})`.mapWith((v) => new Date(v)) })
      .from(transfers)
      .where(and(eq(transfers.sourceChainId, chainId), sql`${transfers.status} not in ('COMPLETED', 'FAILED')`));
    if (!oldest?.createdAt || Number.isNaN(oldest.createdAt.getTime())) return head;
    return firstBlockAtOrAfter(client, BigInt(Math.floor(oldest.createdAt.getTime() / 1000) - 60), head);
  }

  /** Handles the new Transfer logs of one block range; `seen` keeps those already handled (the reorg margin is read twice). */
  async function handleLogs(chainId: number, client: PublicClient, logs: TransferLog[], seen: Map<string, bigint>, atBlock: bigint): Promise<void> {
    const fresh = logs.filter((log) => {
      // ERC-20 only: ERC-721's Transfer has the same signature with an indexed third topic.
      if (log.topics.length !== 3 || !log.args.to || log.transactionHash === null || log.blockNumber === null) return false;
      const key = `${log.transactionHash}:${log.logIndex}`;
      if (seen.has(key)) return false;
      seen.set(key, log.blockNumber);
      return true;
    });
    if (fresh.length === 0) return;
    const recipients = [...new Set(fresh.map((log) => getAddress(log.args.to!)))];
    const routes = await deps.db
      .select({ routeId: transfers.routeId, depositAddress: transfers.depositAddress, sourceToken: transfers.sourceToken, status: transfers.status })
      .from(transfers)
      .where(and(eq(transfers.sourceChainId, chainId), inArray(transfers.depositAddress, recipients)));
    if (routes.length === 0) return;
    const byAddress = new Map(routes.map((r) => [r.depositAddress, r]));
    const matched = fresh.flatMap((log) => {
      const route = byAddress.get(getAddress(log.args.to!));
      return route ? [{ log, route }] : [];
    });

    const otherTokens = matched
      .filter(({ log, route }) => getAddress(log.address) !== getAddress(route.sourceToken))
      .map(({ log, route }) => ({ routeId: route.routeId, chainId, token: getAddress(log.address), txHash: log.transactionHash!, blockNumber: Number(log.blockNumber) }));
    if (otherTokens.length > 0) await deps.db.insert(depositTokens).values(otherTokens).onConflictDoNothing();
    await deps.db
      .update(transfers)
      .set({ depositSeenAt: sql`now()` })
      .where(inArray(transfers.routeId, [...new Set(matched.map((m) => m.route.routeId))]));

    const awaiting = new Map(
      matched
        .filter(({ log, route }) => route.status === 'AWAITING_DEPOSIT' && getAddress(log.address) === getAddress(route.sourceToken))
        .map(({ route }) => [route.routeId, route]),
    );
    for (const route of awaiting.values()) {
      const balance = await client.readContract({
        address: route.sourceToken as Address,
        abi: erc20Abi,
        functionName: 'balanceOf',
        args: [route.depositAddress as Address],
        blockNumber: atBlock,
      });
      await notifier().depositObserved(route.routeId, { balance: balance.toString(), blockNumber: Number(atBlock) });
    }
  }

  function notifier(): WorkflowNotifier {
    if (!deps.notifier) throw new Error('the deposit watcher needs a WorkflowNotifier (startTransferWorker provides one)');
    return deps.notifier;
  }

  return {
    /**
     * Follows one chain's Transfer logs for `runForSeconds`, then returns (its workflow starts the next run).
     * Idempotent: a retry resumes from the durable cursor, and a deposit reported twice changes nothing.
     */
    async watchDeposits(input: WatchDepositsInput): Promise<{ nextBlock: number }> {
      const client = deps.chains.publicClient(input.chainId);
      const confirmations = BigInt(deps.depositConfirmations ?? 0);
      const stopAt = Date.now() + input.runForSeconds * 1000;
      const seen = new Map<string, bigint>();
      let next = await startBlock(client, input.chainId, await client.getBlockNumber());
      for (;;) {
        const head = await client.getBlockNumber();
        const safe = head - confirmations;
        if (safe >= next) {
          for (let from = next > REORG_MARGIN_BLOCKS ? next - REORG_MARGIN_BLOCKS : 0n; from <= safe; ) {
            const to = from + LOG_BLOCK_RANGE - 1n < safe ? from + LOG_BLOCK_RANGE - 1n : safe;
            const logs = await client.getLogs({ event: TRANSFER_EVENT, fromBlock: from, toBlock: to, strict: false });
            await handleLogs(input.chainId, client, logs, seen, to);
            if (to + 1n > next) {
              next = to + 1n;
              await deps.db
                .insert(depositWatchCursors)
                .values({ chainId: input.chainId, nextBlock: Number(next) })
                .onConflictDoUpdate({ target: depositWatchCursors.chainId, set: { nextBlock: Number(next), updatedAt: new Date() } });
            }
            heartbeat({ chainId: input.chainId, nextBlock: Number(next), head: Number(head) });
            from = to + 1n;
          }
          for (const [key, block] of seen) if (block + REORG_MARGIN_BLOCKS < next) seen.delete(key);
        }
        if (Date.now() >= stopAt) return { nextBlock: Number(next) };
        await sleep(Math.min(deps.pollIntervalMs, Math.max(0, stopAt - Date.now())));
      }
    },
  };
}

/** The first block whose timestamp is at or after `time` (seconds), by binary search over the chain. */
export async function firstBlockAtOrAfter(client: PublicClient, time: bigint, head: bigint): Promise<bigint> {
  let low = 0n;
  let high = head;
  while (low < high) {
    const mid = (low + high) / 2n;
    const block = await client.getBlock({ blockNumber: mid });
    heartbeat({ searching: 'first block to read', block: Number(mid) });
    if (block.timestamp < time) low = mid + 1n;
    else high = mid;
  }
  return low;
}
