import {
  BaseError,
  BlockNotFoundError,
  ContractFunctionRevertedError,
  createPublicClient,
  createWalletClient,
  defineChain,
  getAbiItem,
  http,
  type Address,
  type Hex,
} from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { entrypointAbi } from '../../artifacts/Entrypoint.ts';
import { privacyPoolAbi } from '../../artifacts/PrivacyPool.ts';
import type { PrivacyPoolsDeployment } from '../../manifest.ts';

const POOL_EVENTS = [getAbiItem({ abi: privacyPoolAbi, name: 'Deposited' }), getAbiItem({ abi: privacyPoolAbi, name: 'LeafInserted' })];
const RECEIPT_TIMEOUT_MS = 30_000;

export type PoolEvent =
  | {
      kind: 'deposit';
      depositor: Address;
      commitment: bigint;
      label: bigint;
      value: bigint;
      precommitmentHash: bigint;
      txHash: Hex;
      blockNumber: number;
      /** Seconds. */
      timestamp: number;
    }
  | { kind: 'leaf' /** 0-based position in the state tree. */; index: number; leaf: bigint };

/** What the ASP emulator reads from and writes to the hub chain. */
export interface AspChain {
  head(): Promise<{ number: number; hash: Hex }>;
  /** Null when the chain has no such block. */
  blockHash(blockNumber: number): Promise<Hex | null>;
  /** The pool's Deposited and LeafInserted events in [fromBlock, toBlock], in chain order. */
  poolEvents(fromBlock: number, toBlock: number): Promise<PoolEvent[]>;
  /** Entrypoint.latestRoot(); null while no root was ever posted (NoRootsAvailable). */
  latestRoot(): Promise<bigint | null>;
  /** Entrypoint.updateRoot from the postman account; resolves once mined, throws if it reverted. */
  updateRoot(root: bigint, ipfsCid: string): Promise<Hex>;
}

export function connectAspChain(opts: { chainId: number; rpcUrl: string; deployment: PrivacyPoolsDeployment; postmanPrivateKey: Hex }): AspChain {
  const { deployment } = opts;
  const chain = defineChain({
    id: opts.chainId,
    name: `hub-${opts.chainId}`,
    nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
    rpcUrls: { default: { http: [opts.rpcUrl] } },
  });
  const client = createPublicClient({ chain, transport: http(opts.rpcUrl), pollingInterval: 50 });
  const wallet = createWalletClient({ account: privateKeyToAccount(opts.postmanPrivateKey), chain, transport: http(opts.rpcUrl) });

  async function timestamps(blockNumbers: bigint[]): Promise<Map<bigint, number>> {
    const unique = [...new Set(blockNumbers)];
    const blocks = await Promise.all(unique.map((blockNumber) => client.getBlock({ blockNumber })));
    return new Map(blocks.map((b) => [b.number, Number(b.timestamp)]));
  }

  return {
    async head() {
      const block = await client.getBlock({ blockTag: 'latest' });
      return { number: Number(block.number), hash: block.hash };
    },

    async blockHash(blockNumber) {
      try {
        return (await client.getBlock({ blockNumber: BigInt(blockNumber) })).hash;
      } catch (err) {
        // Only a missing block is an answer; an unreachable RPC must not look like another chain.
        if (err instanceof BlockNotFoundError) return null;
        throw err;
      }
    },

    async poolEvents(fromBlock, toBlock) {
      const logs = await client.getLogs({
        address: deployment.pool,
        events: POOL_EVENTS,
        fromBlock: BigInt(fromBlock),
        toBlock: BigInt(toBlock),
        strict: true,
      });
      const deposits = logs.filter((l) => l.eventName === 'Deposited');
      const times = await timestamps(deposits.map((l) => l.blockNumber));
      return logs
        .sort((a, b) => Number(a.blockNumber - b.blockNumber) || a.logIndex - b.logIndex)
        .map((l): PoolEvent => {
          if (l.eventName === 'LeafInserted') return { kind: 'leaf', index: Number(l.args._index) - 1, leaf: l.args._leaf };
          return {
            kind: 'deposit',
            depositor: l.args._depositor,
            commitment: l.args._commitment,
            label: l.args._label,
            value: l.args._value,
            precommitmentHash: l.args._precommitmentHash,
            txHash: l.transactionHash,
            blockNumber: Number(l.blockNumber),
            timestamp: times.get(l.blockNumber) ?? 0,
          };
        });
    },

    async latestRoot() {
      try {
        return await client.readContract({ address: deployment.entrypoint, abi: entrypointAbi, functionName: 'latestRoot' });
      } catch (err) {
        if (revertedWith(err, 'NoRootsAvailable')) return null;
        throw err;
      }
    },

    async updateRoot(root, ipfsCid) {
      const hash = await wallet.writeContract({ address: deployment.entrypoint, abi: entrypointAbi, functionName: 'updateRoot', args: [root, ipfsCid] });
      const receipt = await client.waitForTransactionReceipt({ hash, timeout: RECEIPT_TIMEOUT_MS });
      if (receipt.status !== 'success') throw new Error(`updateRoot transaction ${hash} reverted`);
      return hash;
    },
  };
}

function revertedWith(err: unknown, errorName: string): boolean {
  if (!(err instanceof BaseError)) return false;
  const reverted = err.walk((e) => e instanceof ContractFunctionRevertedError);
  return reverted instanceof ContractFunctionRevertedError && reverted.data?.errorName === errorName;
}
