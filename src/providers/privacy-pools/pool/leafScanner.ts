import { generateMerkleProof } from '@0xbow/privacy-pools-core-sdk';
import { type Address, getAbiItem } from 'viem';
import { poolAbi } from '../abi.ts';
import type { LeafStore } from './leafStore.ts';
import type { PrivacyPoolsOptions } from './options.ts';

/** Blocks per eth_getLogs request when scanning the pool's events, at most… */
const MAX_LOG_RANGE = 10_000n;
/** …and fewer while a provider refuses that many: halved down to one block, then doubled back after each range it answers. */
const MIN_LOG_RANGE = 1n;

const leafInsertedEvent = getAbiItem({ abi: poolAbi, name: 'LeafInserted' });

/**
 * A pool's events of one kind from `fromBlock` to `toBlock` (default: the head), in ranges the RPC accepts: `range`
 * is the scanner's current range, kept between scans. One block refused is an outage: the error is thrown.
 */
async function scanLogs<E extends typeof leafInsertedEvent>(
  opts: PrivacyPoolsOptions,
  address: Address,
  event: E,
  range: { blocks: bigint },
  fromBlock: bigint,
  toBlock?: bigint,
) {
  const client = opts.clients.publicClient(opts.chainId);
  const head = toBlock ?? (await client.getBlockNumber());
  const logs = [];
  for (let start = fromBlock; start <= head; ) {
    const end = start + range.blocks - 1n < head ? start + range.blocks - 1n : head;
    try {
      logs.push(...(await client.getLogs({ address, event, fromBlock: start, toBlock: end })));
    } catch (error) {
      if (range.blocks === MIN_LOG_RANGE) throw error;
      range.blocks = range.blocks / 2n > MIN_LOG_RANGE ? range.blocks / 2n : MIN_LOG_RANGE;
      continue;
    }
    start = end + 1n;
    range.blocks = range.blocks * 2n < MAX_LOG_RANGE ? range.blocks * 2n : MAX_LOG_RANGE;
  }
  return logs;
}

export interface LeafScanner {
  /** Every commitment ever inserted into the pool's state tree, in order; concurrent callers share one scan. */
  scan(): Promise<{ leaves: bigint[] }>;
}

/** Leaves this many blocks below the head are final: only those are kept in the leaf store. */
export const FINAL_DEPTH = 64n;

/**
 * A pool's state-tree leaves, scanned from its LeafInserted events once and then incrementally, and checked
 * against the root the pool reports at the same block. With a store, the final leaves are kept between starts: a
 * worker reads the blocks since the last one it kept, not the pool's whole history.
 */
export function createLeafScanner(opts: PrivacyPoolsOptions, address: Address, store?: LeafStore): LeafScanner {
  const leaves: bigint[] = [];
  /** The block each leaf was inserted in (the store's cursor for the leaves loaded from it). */
  const blocks: bigint[] = [];
  let scannedTo = opts.fromBlock - 1n;
  let kept = { count: 0, to: opts.fromBlock - 1n };
  let loaded = store === undefined;
  /** The last scan did not match the root and the next reads again from the kept leaves. */
  let retriedFromKept = false;
  let scanning: Promise<{ leaves: bigint[] }> | null = null;
  const range = { blocks: MAX_LOG_RANGE };

  async function startOver() {
    leaves.length = 0;
    blocks.length = 0;
    scannedTo = opts.fromBlock - 1n;
    kept = { count: 0, to: opts.fromBlock - 1n };
    await store?.clear(address);
  }

  async function scan() {
    if (!loaded && store) {
      const saved = await store.load(address);
      if (saved && saved.scannedTo >= scannedTo) {
        // One by one: a spread of a big pool's leaves would pass each as an argument (the stack's limit is ~125,000).
        for (const leaf of saved.leaves) {
          leaves.push(leaf);
          blocks.push(saved.scannedTo);
        }
        scannedTo = saved.scannedTo;
        kept = { count: saved.leaves.length, to: saved.scannedTo };
      }
      loaded = true;
    }
    const client = opts.clients.publicClient(opts.chainId);
    const head = await client.getBlockNumber();
    for (const log of await scanLogs(opts, address, leafInsertedEvent, range, scannedTo + 1n, head)) {
      leaves[Number(log.args._index!) - 1] = log.args._leaf!;
      blocks[Number(log.args._index!) - 1] = log.blockNumber;
    }
    scannedTo = head;
    const root = await client.readContract({ address, abi: poolAbi, functionName: 'currentRoot', blockNumber: head });
    const complete = leaves.every((leaf) => leaf !== undefined) && Object.keys(leaves).length === leaves.length;
    if (!complete || (leaves.length > 0 && generateMerkleProof(leaves, leaves[0]!).root !== root)) {
      // A gap or a reorg near the head (or a node lagging behind its own head): read again from the kept leaves,
      // which matched a root once; only when that fails as well, start over from the deployment block.
      if (kept.count > 0 && !retriedFromKept) {
        retriedFromKept = true;
        leaves.length = kept.count;
        blocks.length = kept.count;
        scannedTo = kept.to;
      } else await startOver();
      throw new Error(`the pool's scanned leaves do not match its root ${root} at block ${head}; rescanning`);
    }
    retriedFromKept = false;
    // Keep what no reorg can move any more.
    const finalTo = head - FINAL_DEPTH;
    if (store && finalTo > kept.to) {
      let finalCount = kept.count;
      while (finalCount < leaves.length && blocks[finalCount]! <= finalTo) finalCount++;
      await store.save(address, kept.count, leaves.slice(kept.count, finalCount), finalTo);
      kept = { count: finalCount, to: finalTo };
    }
    return { leaves: [...leaves] };
  }

  return {
    scan() {
      scanning ??= scan().finally(() => {
        scanning = null;
      });
      return scanning;
    },
  };
}
