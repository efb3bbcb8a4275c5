/**
 * The attacker's eyes: everything it reads comes from the chains' public JSON-RPC (blocks with their
 * transactions, logs, contract code) and from the service's public quote endpoint. No database, no Temporal,
 * no GET of routes it did not create, no keys.
 */

export type Role = 'source' | 'hub' | 'destination';

/** What anyone knows without asking the service: chain RPCs, token and protocol contract addresses, the API URL. */
export interface PublicKnowledge {
  apiUrl: string;
  chains: Array<{ role: Role; chainId: number; rpcUrl: string; tokens: Array<{ symbol: string; address: string; decimals: number }> }>;
  /** The Privacy Pools Entrypoint and the USDC pool on the hub: published protocol contracts. */
  entrypoint: string;
  pool: string;
}

export interface ChainTx {
  hash: string;
  from: string;
  to: string | null;
  value: bigint;
  input: string;
  blockNumber: number;
  index: number;
  timestamp: number;
}

export interface ChainLog {
  address: string;
  topics: string[];
  data: string;
  blockNumber: number;
  logIndex: number;
  txHash: string;
  timestamp: number;
}

/** One chain as an observer with a full node sees it. Addresses are lowercase. */
export interface ChainData {
  role: Role;
  chainId: number;
  txs: ChainTx[];
  txByHash: Map<string, ChainTx>;
  logs: ChainLog[];
  logsByTx: Map<string, ChainLog[]>;
  /** Addresses (lowercase) that hold contract code. */
  contracts: Set<string>;
}

export interface PublicView {
  known: PublicKnowledge;
  chains: Record<Role, ChainData>;
}

const BATCH = 50;
const RPC_TIMEOUT_MS = 20_000;

interface RpcTx {
  hash: string;
  from: string;
  to: string | null;
  value: string;
  input: string;
  blockNumber: string;
  transactionIndex: string;
}
interface RpcBlock {
  number: string;
  timestamp: string;
  transactions: RpcTx[];
}
interface RpcLog {
  address: string;
  topics: string[];
  data: string;
  blockNumber: string;
  logIndex: string;
  transactionHash: string;
}

/** One JSON-RPC batch; throws on any error answer. */
async function rpcBatch<T>(rpcUrl: string, calls: Array<{ method: string; params: unknown[] }>): Promise<T[]> {
  if (calls.length === 0) return [];
  const body = calls.map((c, id) => ({ jsonrpc: '2.0', id, method: c.method, params: c.params }));
  const res = await fetch(rpcUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(RPC_TIMEOUT_MS),
  });
  if (!res.ok) throw new Error(`RPC ${rpcUrl} answered HTTP ${res.status}`);
  const answers = (await res.json()) as Array<{ id: number; result?: T; error?: { message: string } }>;
  const byId = new Map(answers.map((a) => [a.id, a]));
  return calls.map((c, id) => {
    const answer = byId.get(id);
    if (!answer || answer.error || answer.result === undefined) throw new Error(`RPC ${c.method} failed: ${answer?.error?.message ?? 'no answer'}`);
    return answer.result;
  });
}

const num = (hex: string) => Number.parseInt(hex, 16);

async function fetchBlocks(rpcUrl: string, head: number): Promise<RpcBlock[]> {
  const blocks: RpcBlock[] = [];
  for (let start = 0; start <= head; start += BATCH) {
    const numbers = Array.from({ length: Math.min(BATCH, head - start + 1) }, (_, i) => start + i);
    blocks.push(
      ...(await rpcBatch<RpcBlock>(
        rpcUrl,
        numbers.map((n) => ({ method: 'eth_getBlockByNumber', params: [`0x${n.toString(16)}`, true] })),
      )),
    );
  }
  return blocks;
}

async function fetchContracts(rpcUrl: string, addresses: string[]): Promise<Set<string>> {
  const contracts = new Set<string>();
  for (let i = 0; i < addresses.length; i += BATCH) {
    const chunk = addresses.slice(i, i + BATCH);
    const codes = await rpcBatch<string>(
      rpcUrl,
      chunk.map((a) => ({ method: 'eth_getCode', params: [a, 'latest'] })),
    );
    codes.forEach((code, j) => {
      if (code && code !== '0x') contracts.add(chunk[j]!);
    });
  }
  return contracts;
}

/** Every block, transaction and log of one chain, from genesis to its head. */
export async function observeChain(role: Role, chainId: number, rpcUrl: string): Promise<ChainData> {
  const [headHex] = await rpcBatch<string>(rpcUrl, [{ method: 'eth_blockNumber', params: [] }]);
  const head = num(headHex!);
  const blocks = await fetchBlocks(rpcUrl, head);
  const timeOf = new Map(blocks.map((b) => [num(b.number), num(b.timestamp)]));
  const txs: ChainTx[] = blocks.flatMap((b) =>
    b.transactions.map((t) => ({
      hash: t.hash.toLowerCase(),
      from: t.from.toLowerCase(),
      to: t.to?.toLowerCase() ?? null,
      value: BigInt(t.value),
      input: t.input,
      blockNumber: num(t.blockNumber),
      index: num(t.transactionIndex),
      timestamp: num(b.timestamp),
    })),
  );
  const [rawLogs] = await rpcBatch<RpcLog[]>(rpcUrl, [{ method: 'eth_getLogs', params: [{ fromBlock: '0x0', toBlock: `0x${head.toString(16)}` }] }]);
  const logs: ChainLog[] = rawLogs!.map((l) => ({
    address: l.address.toLowerCase(),
    topics: l.topics.map((t) => t.toLowerCase()),
    data: l.data,
    blockNumber: num(l.blockNumber),
    logIndex: num(l.logIndex),
    txHash: l.transactionHash.toLowerCase(),
    timestamp: timeOf.get(num(l.blockNumber)) ?? 0,
  }));
  const logsByTx = new Map<string, ChainLog[]>();
  for (const log of logs) logsByTx.set(log.txHash, [...(logsByTx.get(log.txHash) ?? []), log]);

  const seen = new Set<string>();
  for (const t of txs) {
    seen.add(t.from);
    if (t.to) seen.add(t.to);
  }
  for (const l of logs) {
    seen.add(l.address);
    for (const topic of l.topics.slice(1)) if (/^0x0{24}[0-9a-f]{40}$/.test(topic)) seen.add(`0x${topic.slice(26)}`);
  }
  return { role, chainId, txs, txByHash: new Map(txs.map((t) => [t.hash, t])), logs, logsByTx, contracts: await fetchContracts(rpcUrl, [...seen]) };
}

/** The three chains, read in full. */
export async function observe(known: PublicKnowledge): Promise<PublicView> {
  const chain = (role: Role) => {
    const c = known.chains.find((x) => x.role === role);
    if (!c) throw new Error(`no ${role} chain in the public knowledge`);
    return observeChain(role, c.chainId, c.rpcUrl);
  };
  const [source, hub, destination] = await Promise.all([chain('source'), chain('hub'), chain('destination')]);
  return { known, chains: { source, hub, destination } };
}

/** The service's public quote: what `amount` (human decimal, source token) pays out, in destination smallest units. */
export async function publicQuote(known: PublicKnowledge, amount: string): Promise<bigint | null> {
  const chainId = (role: Role) => known.chains.find((c) => c.role === role)!.chainId;
  const res = await fetch(`${known.apiUrl}/api/private-route/quote`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ sourceChainId: chainId('source'), destChainId: chainId('destination'), amount, destTokenSymbol: 'USDC' }),
    signal: AbortSignal.timeout(RPC_TIMEOUT_MS),
  });
  const body = (await res.json()) as { success: boolean; data?: { quotedOutputAmount: string } };
  return body.success && body.data ? BigInt(body.data.quotedOutputAmount) : null;
}
