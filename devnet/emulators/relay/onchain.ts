import {
  createPublicClient,
  createWalletClient,
  defineChain,
  encodeFunctionData,
  erc20Abi,
  http,
  keccak256,
  parseAbiItem,
  TransactionReceiptNotFoundError,
  type Address,
  type Hex,
  type PublicClient,
  type TransactionReceipt,
  type WalletClient,
} from 'viem';
import { privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import type { DevnetManifest } from '../../manifest.ts';
import { isNative } from './currencies.ts';

const transferEvent = parseAbiItem('event Transfer(address indexed from, address indexed to, uint256 value)');

/**
 * The emulator's view of the devnet chains: balance reads and solver transfers, of ERC20s and of the native currency
 * (token = the zero address, as Relay names it). Reads go one RPC call per address (anvil has no multicall3).
 */
export interface Onchain {
  solver: Address;
  balanceOf(chainId: number, token: Address, owner: Address): Promise<bigint>;
  blockNumber(chainId: number): Promise<bigint>;
  /** Hashes of the token transfers into `to` since `fromBlock` (native: the transactions sending it value). */
  transfersTo(chainId: number, token: Address, to: Address, fromBlock: bigint): Promise<Hex[]>;
  /** Signs (does not send) a solver transfer; the hash is known before broadcasting. */
  signTransfer(chainId: number, token: Address, to: Address, amount: bigint): Promise<{ rawTx: Hex; txHash: Hex }>;
  broadcast(chainId: number, rawTx: Hex): Promise<void>;
  /** The receipt, or null while the transaction is not mined. */
  receipt(chainId: number, hash: Hex): Promise<TransactionReceipt | null>;
}

export function connectOnchain(manifest: DevnetManifest, solverPrivateKey: Hex): Onchain {
  const account: PrivateKeyAccount = privateKeyToAccount(solverPrivateKey);
  const clients = new Map<number, { public: PublicClient; wallet: WalletClient }>();
  for (const c of manifest.chains) {
    const chain = defineChain({
      id: c.chainId,
      name: c.displayName,
      nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
      rpcUrls: { default: { http: [c.rpcUrl] } },
    });
    clients.set(c.chainId, {
      public: createPublicClient({ chain, transport: http(c.rpcUrl) }),
      wallet: createWalletClient({ account, chain, transport: http(c.rpcUrl) }),
    });
  }
  const client = (chainId: number) => {
    const found = clients.get(chainId);
    if (!found) throw new Error(`chain ${chainId} is not in the devnet manifest`);
    return found;
  };

  return {
    solver: account.address,
    async balanceOf(chainId, token, owner) {
      if (isNative({ address: token })) return client(chainId).public.getBalance({ address: owner });
      return client(chainId).public.readContract({
        address: token,
        abi: erc20Abi,
        functionName: 'balanceOf',
        args: [owner],
      });
    },
    async blockNumber(chainId) {
      return client(chainId).public.getBlockNumber({ cacheTime: 0 });
    },
    async transfersTo(chainId, token, to, fromBlock) {
      if (isNative({ address: token })) return nativeTransfersTo(client(chainId).public, to, fromBlock);
      const logs = await client(chainId).public.getLogs({ address: token, event: transferEvent, args: { to }, fromBlock });
      return logs.flatMap((l) => (l.transactionHash ? [l.transactionHash] : []));
    },
    async signTransfer(chainId, token, to, amount) {
      const { wallet } = client(chainId);
      // Relay's solver fills the native currency with a plain transaction carrying the value.
      const native = isNative({ address: token });
      const call = native
        ? { to, data: '0x' as Hex, value: amount }
        : { to: token, data: encodeFunctionData({ abi: erc20Abi, functionName: 'transfer', args: [to, amount] }), value: 0n };
      const request = await wallet.prepareTransactionRequest({
        account,
        chain: wallet.chain,
        ...call,
        type: 'eip1559',
      });
      const rawTx = await account.signTransaction({
        type: 'eip1559',
        chainId,
        nonce: request.nonce,
        ...call,
        gas: request.gas,
        maxFeePerGas: request.maxFeePerGas,
        maxPriorityFeePerGas: request.maxPriorityFeePerGas,
      });
      return { rawTx, txHash: keccak256(rawTx) };
    },
    async broadcast(chainId, rawTx) {
      await client(chainId).public.sendRawTransaction({ serializedTransaction: rawTx });
    },
    async receipt(chainId, hash) {
      try {
        return await client(chainId).public.getTransactionReceipt({ hash });
      } catch (err) {
        if (err instanceof TransactionReceiptNotFoundError) return null;
        throw err;
      }
    },
  };
}

/** The transactions of blocks `fromBlock`… that send value to `to` (direct sends only: the emulator's deposits are). */
async function nativeTransfersTo(client: PublicClient, to: Address, fromBlock: bigint): Promise<Hex[]> {
  const head = await client.getBlockNumber({ cacheTime: 0 });
  const hashes: Hex[] = [];
  for (let n = fromBlock; n <= head; n++) {
    const block = await client.getBlock({ blockNumber: n, includeTransactions: true });
    for (const tx of block.transactions) if (tx.to?.toLowerCase() === to.toLowerCase() && tx.value > 0n) hashes.push(tx.hash);
  }
  return hashes;
}
