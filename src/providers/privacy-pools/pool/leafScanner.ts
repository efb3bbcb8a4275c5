import { generateMerkleProof } from '@0xbow/privacy-pools-core-sdk';
import { type Address, getAbiItem } from 'viem';
import { poolAbi } from '../abi.ts';
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

/**
 * A pool's state-tree leaves, scanned from its LeafInserted events once and then incrementally, and checked
 * against the root the pool reports at the same block.
 */
export function createLeafScanner(opts: PrivacyPoolsOptions, address: Address): LeafScanner {
  const leaves: bigint[] = [];
  let scannedTo = opts.fromBlock - 1n;
  let scanning: Promise<{ leaves: bigint[] }> | null = null;
  const range = { blocks: MAX_LOG_RANGE };

  async function scan() {
    const client = opts.clients.publicClient(opts.chainId);
    const head = await client.getBlockNumber();
    for (const log of await scanLogs(opts, address, leafInsertedEvent, range, scannedTo + 1n, head)) {
      leaves[Number(log.args._index!) - 1] = log.args._leaf!;
    }
    scannedTo = head;
    const root = await client.readContract({ address, abi: poolAbi, functionName: 'currentRoot', blockNumber: head });
    const complete = leaves.every((leaf) => leaf !== undefined) && Object.keys(leaves).length === leaves.length;
    if (!complete || (leaves.length > 0 && generateMerkleProof(leaves, leaves[0]!).root !== root)) {
      // A gap or a reorg: start over from the deployment block on the next call.
      leaves.length = 0;
      scannedTo = opts.fromBlock - 1n;
      throw new Error(`the pool's scanned leaves do not match its root ${root} at block ${head}; rescanning`);
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
