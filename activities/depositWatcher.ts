import { CancelledFailure, heartbeat, sleep } from '@temporalio/activity';
import { and, eq, inArray, min, sql } from 'drizzle-orm';
import { erc20Abi, getAddress, parseAbiItem, type Address, type Hex, type Log, type PublicClient, zeroAddress } from 'viem';
import { depositTokens, depositWatchCursors, transfers } from '../src/db/schema.ts';
import type { DepositTransfer } from '../src/domain/funding.ts';
import { fundingOfRoute, recordDepositTransfers, recordFunding } from '../src/transfers/depositTransferStore.ts';
import { NATIVE_TOKEN } from '../src/chain/erc20.ts';
import { type ActivityDeps, requireNotifier } from './deps.ts';

/**
 * How the watcher sizes its eth_getLogs calls. Each call names up to `addressesPerCall` deposit addresses (viem puts
 * them in topic 2 as an OR list) over a block range that starts at `initialRange`, halves down to one block when a
 * provider refuses it (too many logs or blocks), and doubles up to `maxRange` while the calls return at most
 * `fewLogs` logs each: a quiet filter catches up in few calls.
 */
export interface DepositWatchTuning {
  addressesPerCall: number;
  initialRange: bigint;
  maxRange: bigint;
  fewLogs: number;
  /** Blocks read whole for native deposits in one pass at most (one call each): a long gap is caught up over passes. */
  nativeBlocksPerPass: bigint;
}

export const DEFAULT_DEPOSIT_WATCH_TUNING: DepositWatchTuning = {
  addressesPerCall: 1_000,
  initialRange: 500n,
  maxRange: 5_000n,
  fewLogs: 1_000,
  nativeBlocksPerPass: 200n,
};

const MIN_LOG_BLOCK_RANGE = 1n;
const ADDRESS_LOOKUP_CHUNK = 5_000;
/** Blocks below the cursor read again on every pass, so a log that a short reorg moved is still seen. */
export const REORG_MARGIN_BLOCKS = 12n;
/**
 * A finished route's deposit address is still watched this long after the route ended (completed_at), so a surplus,
 * second or late deposit marks it for the stray check (activities/strays.ts), which looks at every finished route once
 * anyway. A transfer into an address that ended longer ago is not seen: the funds stay there until an operator looks.
 */
export const STRAY_WATCH_DAYS = 30;
/**
 * The finished routes' addresses are read once every this many passes (a minute at production's 1 s poll), over every
 * block since their own cursor: they are most of the watched addresses (30 days of routes) and strays into them are
 * rare, so they cost a call per 1,000 a minute instead of a call per 1,000 a pass.
 */
export const FINISHED_READ_EVERY_POLLS = 60;

/** The ERC-20 Transfer event (ERC-721's has the same signature with an indexed third topic). */
export const TRANSFER_EVENT = parseAbiItem('event Transfer(address indexed from, address indexed to, uint256 value)');
type TransferLog = Log<bigint, number, false, typeof TRANSFER_EVENT>;

/** A Transfer log into a deposit address as the route's funding records it (src/domain/funding.ts). */
export function depositTransferOf(log: {
  args: { from?: Address; value?: bigint };
  blockNumber: bigint | null;
  logIndex: number | null;
  transactionHash: Hex | null;
}): DepositTransfer {
  return {
    from: getAddress(log.args.from ?? zeroAddress),
    value: log.args.value ?? 0n,
    blockNumber: Number(log.blockNumber),
    logIndex: log.logIndex!,
    txHash: log.transactionHash!,
  };
}

/**
 * The native-currency deposits into `watched` addresses in blocks [from, to]: transactions that send value to one of
 * them directly, as the route's funding records them (the transaction's index in its block stands for the log index).
 * ETH passed on by a contract (an internal call) leaves no transaction to an address: the balance still counts it, but
 * its sender is not recorded.
 */
export async function nativeDepositsIn(
  client: PublicClient,
  watched: ReadonlySet<Address>,
  from: bigint,
  to: bigint,
  onBlock: (blockNumber: bigint) => void = () => {},
): Promise<Array<{ to: Address; transfer: DepositTransfer }>> {
  const found: Array<{ to: Address; transfer: DepositTransfer }> = [];
  for (let n = from; n <= to; n++) {
    const block = await client.getBlock({ blockNumber: n, includeTransactions: true });
    onBlock(n);
    for (const tx of block.transactions) {
      const payee = tx.to ? getAddress(tx.to) : null;
      if (!payee || tx.value === 0n || !watched.has(payee)) continue;
      found.push({
        to: payee,
        transfer: { from: getAddress(tx.from), value: tx.value, blockNumber: Number(n), logIndex: tx.transactionIndex, txHash: tx.hash },
      });
    }
  }
  return found;
}

export interface WatchDepositsInput {
  chainId: number;
  /** The activity returns after this long, so its workflow can continue as new with a short history. */
  runForSeconds: number;
}

/**
 * Deposit detection that costs O(blocks × watched addresses / addressesPerCall), whatever the chain's other traffic:
 * one watcher per source chain reads the ERC-20 Transfer logs into the deposit addresses it watches (any token
 * contract; see unfinishedAddresses and finishedAddresses) in each new block, and then:
 * - tells a transfer still awaiting its deposit the balance of its token at its address (a signal; the
 *   workflow itself only waits on a durable timer for its deadline, holding no activity slot);
 * - records any other token sent to a deposit address (held or refunded by the stray-deposit check);
 * - marks the route as seen, so a finished route's surplus, second or late deposit is checked (activities/strays.ts).
 * The cursor is durable (deposit_watch_cursors); each pass re-reads REORG_MARGIN_BLOCKS below it.
 */
export function depositWatcherActivities(deps: ActivityDeps, tuning: DepositWatchTuning = DEFAULT_DEPOSIT_WATCH_TUNING) {
  async function startBlock(client: PublicClient, chainId: number, head: bigint): Promise<{ next: bigint; finishedNext?: bigint; nativeNext?: bigint }> {
    const [cursor] = await deps.db.select().from(depositWatchCursors).where(eq(depositWatchCursors.chainId, chainId));
    if (cursor)
      return {
        next: BigInt(cursor.nextBlock),
        ...(cursor.finishedNextBlock !== null && { finishedNext: BigInt(cursor.finishedNextBlock) }),
        ...(cursor.nativeNextBlock !== null && { nativeNext: BigInt(cursor.nativeNextBlock) }),
      };
    // First run on this chain: from when its oldest transfer still awaiting a deposit was created (a deposit that
    // arrived before the watcher existed is still reported), or from the head. Finished routes need no history:
    // the stray check reads each one's balance once anyway.
    const [oldest] = await deps.db
      .select({ createdAt: min(transfers.createdAt) })
      .from(transfers)
      .where(and(eq(transfers.sourceChainId, chainId), eq(transfers.status, 'AWAITING_DEPOSIT')));
    if (!oldest?.createdAt) return { next: head };
    return { next: await firstBlockAtOrAfter(client, BigInt(Math.floor(new Date(oldest.createdAt).getTime() / 1000) - 60), head) };
  }

  /**
   * The deposit addresses this chain's watcher reads Transfer logs into on every pass: every route not finished yet
   * (awaiting its deposit, or in flight: a stray is refunded while the route runs). Answered by the partial index
   * transfers_unfinished_watch_idx (the statuses are written into the SQL, as in its predicate, so a prepared plan
   * still matches it).
   */
  async function unfinishedAddresses(chainId: number): Promise<Address[]> {
    const rows = await deps.db.execute<{ deposit_address: string }>(sql`
      select deposit_address from transfers where source_chain_id = ${chainId} and status not in ('COMPLETED', 'FAILED')`);
    return rows.map((r) => r.deposit_address as Address);
  }

  /**
   * …and every FINISHED_READ_EVERY_POLLS passes: the finished ones for STRAY_WATCH_DAYS after they ended (a failed
   * route that never started has no completed_at: its last update counts), on transfers_finished_watch_idx.
   */
  async function finishedAddresses(chainId: number): Promise<Address[]> {
    const rows = await deps.db.execute<{ deposit_address: string }>(sql`
      select deposit_address from transfers
       where source_chain_id = ${chainId} and status in ('COMPLETED', 'FAILED')
         and coalesce(completed_at, updated_at) > now() - make_interval(days => ${STRAY_WATCH_DAYS})`);
    return rows.map((r) => r.deposit_address as Address);
  }

  /** The routes of this chain whose deposit address is among `addresses` (looked up in chunks: one query has at most 65,535 parameters). */
  async function routesPaidIn(chainId: number, addresses: Address[]) {
    const found = [];
    for (let i = 0; i < addresses.length; i += ADDRESS_LOOKUP_CHUNK) {
      found.push(
        ...(await deps.db
          .select({
            routeId: transfers.routeId,
            depositAddress: transfers.depositAddress,
            sourceToken: transfers.sourceToken,
            status: transfers.status,
            amount: transfers.amount,
          })
          .from(transfers)
          .where(and(eq(transfers.sourceChainId, chainId), inArray(transfers.depositAddress, addresses.slice(i, i + ADDRESS_LOOKUP_CHUNK))))),
      );
    }
    return found;
  }

  /** Handles the Transfer logs of one block range; `seen` keeps the deposits already handled (the reorg margin is read twice). */
  async function handleLogs(chainId: number, client: PublicClient, logs: TransferLog[], seen: Map<string, bigint>, atBlock: bigint): Promise<void> {
    // ERC-20 only: ERC-721's Transfer has the same signature with an indexed third topic.
    const erc20 = logs.filter((log) => log.topics.length === 3 && log.args.to && log.transactionHash !== null && log.blockNumber !== null);
    if (erc20.length === 0) return;
    const routes = await routesPaidIn(chainId, [...new Set(erc20.map((log) => getAddress(log.args.to!)))]);
    if (routes.length === 0) return;
    const byAddress = new Map(routes.map((r) => [r.depositAddress, r]));
    const matched = erc20.flatMap((log) => {
      const route = byAddress.get(getAddress(log.args.to!));
      const key = `${log.transactionHash}:${log.logIndex}`;
      if (!route || seen.has(key)) return [];
      seen.set(key, log.blockNumber!);
      return [{ log, route }];
    });
    if (matched.length === 0) return;

    const otherTokens = matched
      .filter(({ log, route }) => getAddress(log.address) !== getAddress(route.sourceToken))
      .map(({ log, route }) => ({
        routeId: route.routeId,
        chainId,
        token: getAddress(log.address),
        txHash: log.transactionHash!,
        blockNumber: Number(log.blockNumber),
      }));
    if (otherTokens.length > 0) await deps.db.insert(depositTokens).values(otherTokens).onConflictDoNothing();
    await deps.db
      .update(transfers)
      .set({ depositSeenAt: sql`now()` })
      .where(inArray(transfers.routeId, [...new Set(matched.map((m) => m.route.routeId))]));

    const deposits = matched.filter(({ log, route }) => route.status === 'AWAITING_DEPOSIT' && getAddress(log.address) === getAddress(route.sourceToken));
    // Every transfer of the route's own token while it awaits its deposit is kept; who funded it is computed from them
    // all (src/domain/funding.ts), so a poke (a zero-value transferFrom naming anyone, dust after) changes nothing.
    const byRoute = new Map<string, { route: (typeof deposits)[number]['route']; seen: DepositTransfer[] }>();
    for (const { log, route } of deposits) {
      const entry = byRoute.get(route.routeId) ?? { route, seen: [] };
      entry.seen.push(depositTransferOf(log));
      byRoute.set(route.routeId, entry);
    }
    for (const { route, seen } of byRoute.values()) {
      await recordDepositTransfers(deps.db, route.routeId, seen);
      await recordFunding(deps.db, route.routeId, await fundingOfRoute(deps.db, route.routeId, BigInt(route.amount)));
    }
    for (const { route } of byRoute.values()) {
      const balance = await client.readContract({
        address: route.sourceToken as Address,
        abi: erc20Abi,
        functionName: 'balanceOf',
        args: [route.depositAddress as Address],
        blockNumber: atBlock,
      });
      await requireNotifier(deps).depositObserved(route.routeId, { balance: balance.toString(), blockNumber: Number(atBlock) });
    }
  }

  /** The native-currency routes of this chain the watcher follows: unfinished, or finished within STRAY_WATCH_DAYS. */
  async function nativeRoutesWatched(chainId: number) {
    return deps.db
      .select({ routeId: transfers.routeId, depositAddress: transfers.depositAddress, amount: transfers.amount, status: transfers.status })
      .from(transfers)
      .where(
        and(
          eq(transfers.sourceChainId, chainId),
          eq(transfers.sourceToken, NATIVE_TOKEN),
          sql`(${transfers.status} not in ('COMPLETED', 'FAILED') or coalesce(${transfers.completedAt}, ${transfers.updatedAt}) > now() - make_interval(days => ${STRAY_WATCH_DAYS}))`,
        ),
      );
  }

  /**
   * The native currency has no Transfer log: the blocks [from, safe] are read for transactions sending value to a
   * watched native route's address (who funded a route awaiting its deposit; a surplus, second or late deposit marks
   * the route for the stray check), and the routes awaiting their deposit are read by balance at `safe` on every pass
   * (a signal when it changed). Each block is read whole (one call per block), whatever the number of addresses, at
   * most `nativeBlocksPerPass` a pass: returns the next block to read.
   */
  async function followNative(chainId: number, client: PublicClient, from: bigint, safe: bigint, reported: Map<string, bigint>): Promise<bigint> {
    const routes = await nativeRoutesWatched(chainId);
    if (routes.length === 0) return safe + 1n > from ? safe + 1n : from;
    const watched = new Set(routes.map((r) => getAddress(r.depositAddress)));
    const to = safe - from >= tuning.nativeBlocksPerPass ? from + tuning.nativeBlocksPerPass - 1n : safe;
    const deposits = from <= to ? await nativeDepositsIn(client, watched, from, to, (n) => heartbeat({ chainId, nativeBlock: Number(n) })) : [];
    for (const route of routes) {
      const seen = deposits.filter((d) => d.to === getAddress(route.depositAddress)).map((d) => d.transfer);
      if (seen.length > 0) await deps.db.update(transfers).set({ depositSeenAt: sql`now()` }).where(eq(transfers.routeId, route.routeId));
      if (route.status !== 'AWAITING_DEPOSIT') continue;
      if (seen.length > 0) {
        await recordDepositTransfers(deps.db, route.routeId, seen);
        await recordFunding(deps.db, route.routeId, await fundingOfRoute(deps.db, route.routeId, BigInt(route.amount)));
      }
      const balance = await client.getBalance({ address: route.depositAddress as Address, blockNumber: safe });
      if (balance === (reported.get(route.routeId) ?? 0n)) continue;
      reported.set(route.routeId, balance);
      await requireNotifier(deps).depositObserved(route.routeId, { balance: balance.toString(), blockNumber: Number(safe) });
    }
    return to + 1n > from ? to + 1n : from;
  }

  return {
    /**
     * Follows one chain's Transfer logs for `runForSeconds`, then returns (its workflow starts the next run).
     * Idempotent: a retry resumes from the durable cursor, and a deposit reported twice changes nothing.
     */
    async watchDeposits(input: WatchDepositsInput): Promise<{ nextBlock: number }> {
      const client = deps.chains.publicClient(input.chainId);
      const confirmations = BigInt(deps.confirmationsOf?.(input.chainId) ?? 0);
      const stopAt = Date.now() + input.runForSeconds * 1000;
      const seen = new Map<string, bigint>();
      let range = tuning.initialRange;
      /** The next block to read for the unfinished routes' addresses, and for the finished ones' (never ahead of it). */
      let next: bigint | undefined;
      let finishedNext: bigint | undefined;
      /** Passes since the finished routes' addresses were last read: due at once when a run starts. */
      let sinceFinishedRead = FINISHED_READ_EVERY_POLLS;
      /** The next block read for native deposits, and the balance last reported per native route. */
      let nativeNext: bigint | undefined;
      const nativeReported = new Map<string, bigint>();

      const saveCursors = async () => {
        const values = {
          nextBlock: Number(next),
          finishedNextBlock: Number(finishedNext),
          nativeNextBlock: nativeNext === undefined ? null : Number(nativeNext),
        };
        await deps.db
          .insert(depositWatchCursors)
          .values({ chainId: input.chainId, ...values })
          .onConflictDoUpdate({ target: depositWatchCursors.chainId, set: { ...values, updatedAt: new Date() } });
      };

      /** The Transfer logs into `addresses` over [from, to], one call per batch of addresses; throws when one is refused. */
      const readLogs = async (addresses: Address[], from: bigint, to: bigint) => {
        const logs: TransferLog[] = [];
        let mostInOneCall = 0;
        for (let i = 0; i < addresses.length; i += tuning.addressesPerCall) {
          const batch = await client.getLogs({
            event: TRANSFER_EVENT,
            args: { to: addresses.slice(i, i + tuning.addressesPerCall) },
            fromBlock: from,
            toBlock: to,
            strict: false,
          });
          logs.push(...batch);
          mostInOneCall = Math.max(mostInOneCall, batch.length);
        }
        return { logs, mostInOneCall };
      };

      /** Reads and handles the logs into `addresses` from `cursor` (less the reorg margin) to `safe`, range by range; each range done moves the cursor by `advance`. */
      const follow = async (addresses: Address[], cursor: bigint, safe: bigint, advance: (next: bigint) => void, head: bigint) => {
        if (addresses.length === 0) {
          advance(safe + 1n);
          await saveCursors();
          return;
        }
        for (let from = cursor > REORG_MARGIN_BLOCKS ? cursor - REORG_MARGIN_BLOCKS : 0n; from <= safe; ) {
          const to = from + range - 1n < safe ? from + range - 1n : safe;
          let read: Awaited<ReturnType<typeof readLogs>>;
          try {
            read = await readLogs(addresses, from, to);
          } catch (error) {
            // Too many logs (or blocks) for this provider: a smaller range; one block it refuses is an outage (retried).
            if (range === MIN_LOG_BLOCK_RANGE || error instanceof CancelledFailure) throw error;
            range = range / 2n > MIN_LOG_BLOCK_RANGE ? range / 2n : MIN_LOG_BLOCK_RANGE;
            continue;
          }
          await handleLogs(input.chainId, client, read.logs, seen, to);
          if (to + 1n > cursor) {
            advance(to + 1n);
            await saveCursors();
          }
          heartbeat({ chainId: input.chainId, nextBlock: Number(next), head: Number(head), watched: addresses.length });
          from = to + 1n;
          // Back up to the initial range after a refusal, and beyond it while the filter is quiet.
          if (range < tuning.initialRange || read.mostInOneCall <= tuning.fewLogs) range = range * 2n < tuning.maxRange ? range * 2n : tuning.maxRange;
        }
      };

      for (;;) {
        const head = await client.getBlockNumber();
        if (next === undefined) {
          const started = await startBlock(client, input.chainId, head);
          next = started.next;
          finishedNext = started.finishedNext ?? started.next;
          nativeNext = started.nativeNext;
        }
        const safe = head - confirmations;
        // The native deposits' blocks from where this pass's logs start (re-read after a restart: recorded ones are kept).
        const nativeFrom = nativeNext ?? (next > REORG_MARGIN_BLOCKS ? next - REORG_MARGIN_BLOCKS : 0n);
        if (safe >= next) {
          // Read after the head: a deposit in a block up to it was sent to an address its route had already committed.
          await follow(await unfinishedAddresses(input.chainId), next, safe, (n) => (next = n), head);
        }
        const nativeTo = await followNative(input.chainId, client, nativeFrom, safe, nativeReported);
        if (nativeTo !== nativeNext) {
          nativeNext = nativeTo;
          await saveCursors();
        }
        if (sinceFinishedRead >= FINISHED_READ_EVERY_POLLS && safe >= finishedNext!) {
          // A route that finished since the last read was read as unfinished up to `next`, beyond this cursor: no gap.
          await follow(await finishedAddresses(input.chainId), finishedNext!, safe, (n) => (finishedNext = n), head);
          sinceFinishedRead = 0;
        }
        sinceFinishedRead++;
        const oldest = finishedNext! < next ? finishedNext! : next;
        for (const [key, block] of seen) if (block + REORG_MARGIN_BLOCKS < oldest) seen.delete(key);
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
