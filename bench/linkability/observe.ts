/**
 * The attacker's eyes: everything it reads comes from the chains' public JSON-RPC (blocks with their
 * transactions, logs, contract code), the service's public quote endpoint, Relay's public request history
 * (GET /requests/v2, what Relay's explorer shows) and the ASP's public API (the approved labels). No database,
 * no Temporal, no GET of routes it did not create, no keys.
 */

export type Role = 'source' | 'hub' | 'destination';

/** What anyone knows without asking the service: chain RPCs, token and protocol contract addresses, public API URLs. */
export interface PublicKnowledge {
  apiUrl: string;
  /** The service's bridge (visible on chain anyway: Relay deposit addresses or CCTP burns). */
  mode: 'relay' | 'cctp';
  chains: Array<{ role: Role; chainId: number; rpcUrl: string; tokens: Array<{ symbol: string; address: string; decimals: number }> }>;
  /** The Privacy Pools Entrypoint and the USDC pool on the hub: published protocol contracts. */
  entrypoint: string;
  pool: string;
  /** The pool's SCOPE() (decimal): the ASP's API wants it in X-Pool-Scope. */
  poolScope: string;
  /** The ASP's public API (0xbow: api.0xbow.io); null when unknown. */
  aspUrl: string | null;
  /** Relay's public API (api.relay.link); null in burn-and-mint mode. */
  relayUrl: string | null;
  /** CCTP v2 contracts per chain (public deployments); null in deposit-address mode. */
  cctp: Array<{ chainId: number; domain: number; tokenMessenger: string; messageTransmitter: string }> | null;
  /** The service's published deposit timeout: a transfer is funded at most this long after it was created. */
  depositTimeoutSeconds: number;
  /** Its published privacy rules (docs/privacy.md): exit epochs, the longest wait for a set, a note's minimum age. */
  exitEpochSeconds: number;
  maxWaitSeconds: number;
  minPeerAgeSeconds: number;
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
  /** Relay's public request history; null when there is none (burn-and-mint mode, or an API without it). */
  relayRequests: RelayRequest[] | null;
  /** The ASP's approved labels in insertion order; null when its API does not answer. */
  aspLeaves: bigint[] | null;
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

/** The three chains, read in full, with Relay's request history and the ASP's approved labels. */
export async function observe(known: PublicKnowledge): Promise<PublicView> {
  const chain = (role: Role) => {
    const c = known.chains.find((x) => x.role === role);
    if (!c) throw new Error(`no ${role} chain in the public knowledge`);
    return observeChain(role, c.chainId, c.rpcUrl);
  };
  const [source, hub, destination, requests, leaves] = await Promise.all([
    chain('source'),
    chain('hub'),
    chain('destination'),
    relayRequests(known),
    aspLeaves(known),
  ]);
  return { known, chains: { source, hub, destination }, relayRequests: requests, aspLeaves: leaves };
}

export interface QuoteAnswer {
  /** quotedOutputAmount (destination smallest units). */
  value: bigint;
  /** amountClass.value; null for a service without amount classes (the payout itself is then the prediction). */
  classValue: bigint | null;
  /** amountClass.priceHeldUntil; null when nothing is converted (or no amount classes). */
  heldUntil: string | null;
}

/** The chain id of a role. */
export function chainIdOf(known: PublicKnowledge, role: Role): number {
  const chain = known.chains.find((c) => c.role === role);
  if (!chain) throw new Error(`no ${role} chain in the public knowledge`);
  return chain.chainId;
}

/** A destination the attacker asks the quote about: a chain (by role) and a token symbol. */
export interface QuoteDestination {
  role: Role;
  tokenSymbol: string;
}

export const destinationKey = (d: QuoteDestination) => `${d.role}:${d.tokenSymbol}`;

/**
 * The service's public quote: what `amount` (human decimal, source USDC) pays out at `dest` (destination smallest
 * units); null when the service declines to quote it.
 */
export async function publicQuote(
  known: PublicKnowledge,
  amount: string,
  dest: QuoteDestination = { role: 'destination', tokenSymbol: 'USDC' },
): Promise<QuoteAnswer | null> {
  const res = await fetch(`${known.apiUrl}/api/private-route/quote`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      sourceChainId: chainIdOf(known, 'source'),
      destChainId: chainIdOf(known, dest.role),
      amount,
      tokenSymbol: 'USDC',
      destTokenSymbol: dest.tokenSymbol,
    }),
    signal: AbortSignal.timeout(RPC_TIMEOUT_MS),
  });
  const body = (await res.json()) as {
    success: boolean;
    data?: { quotedOutputAmount: string; amountClass?: { value: string; priceHeldUntil: string | null } };
  };
  if (!body.success || !body.data) return null;
  return {
    value: BigInt(body.data.quotedOutputAmount),
    classValue: body.data.amountClass ? BigInt(body.data.amountClass.value) : null,
    heldUntil: body.data.amountClass?.priceHeldUntil ?? null,
  };
}

/** What the service's quote answers for each source amount (human decimal) and destination the attacker asked about. */
export async function quoteInversions(
  known: PublicKnowledge,
  amounts: string[],
  destinations: QuoteDestination[],
): Promise<Map<string, Map<string, QuoteAnswer>>> {
  const out = new Map<string, Map<string, QuoteAnswer>>();
  for (const amount of [...new Set(amounts)]) {
    const byDest = new Map<string, QuoteAnswer>();
    for (const dest of destinations) {
      const answer = await publicQuote(known, amount, dest).catch(() => null);
      if (answer) byDest.set(destinationKey(dest), answer);
    }
    out.set(amount, byDest);
  }
  return out;
}

/** One public quote of a fixed input, taken by the attacker while transfers were being created. */
export interface QuoteSample {
  /** When the answer came (ms epoch). */
  at: number;
  /** The class (or, without classes, the payout) it quoted. */
  value: bigint;
  heldUntil: string | null;
}

export interface QuoteSampler {
  /** Stops sampling and returns every sample, in time order. */
  stop(): Promise<QuoteSample[]>;
}

/** Samples the public quote of `amount` to `dest` every `intervalMs` until stopped (failed quotes are gaps). */
export function startQuoteSampler(known: PublicKnowledge, amount: string, dest: QuoteDestination, intervalMs: number): QuoteSampler {
  const samples: QuoteSample[] = [];
  let stopped = false;
  let wake: () => void = () => {};
  const loop = (async () => {
    while (!stopped) {
      const answer = await publicQuote(known, amount, dest).catch(() => null);
      if (answer) samples.push({ at: Date.now(), value: answer.classValue ?? answer.value, heldUntil: answer.heldUntil });
      await new Promise<void>((resolve) => {
        wake = resolve;
        setTimeout(resolve, intervalMs);
      });
    }
  })();
  return {
    async stop() {
      stopped = true;
      wake();
      await loop;
      return samples;
    },
  };
}

/** A request of Relay's public history (GET /requests/v2), the fields the attacker uses. */
export interface RelayRequest {
  id: string;
  status: string;
  depositAddress: string | null;
  inTxs: Array<{ hash: string; chainId: number }>;
  outTxs: Array<{ hash: string; chainId: number }>;
}

/** Relay's whole public request history, page by page; null when the API has none (404: an older emulator). */
export async function relayRequests(known: PublicKnowledge): Promise<RelayRequest[] | null> {
  if (!known.relayUrl) return null;
  const all: RelayRequest[] = [];
  let continuation: string | undefined;
  for (let page = 0; page < 1000; page++) {
    const url = new URL(`${known.relayUrl}/requests/v2`);
    url.searchParams.set('limit', '50');
    if (continuation) url.searchParams.set('continuation', continuation);
    const res = await fetch(url, { signal: AbortSignal.timeout(RPC_TIMEOUT_MS) });
    if (res.status === 404) return null;
    if (!res.ok) throw new Error(`Relay /requests/v2 answered HTTP ${res.status}`);
    const body = (await res.json()) as {
      requests: Array<{
        id: string;
        status: string;
        depositAddress?: { address?: string | null } | null;
        data?: { inTxs?: Array<{ hash: string; chainId: number }>; outTxs?: Array<{ hash: string; chainId: number }> };
      }>;
      continuation?: string;
    };
    for (const r of body.requests) {
      all.push({
        id: r.id,
        status: r.status,
        depositAddress: r.depositAddress?.address?.toLowerCase() ?? null,
        inTxs: (r.data?.inTxs ?? []).map((t) => ({ hash: t.hash.toLowerCase(), chainId: t.chainId })),
        outTxs: (r.data?.outTxs ?? []).map((t) => ({ hash: t.hash.toLowerCase(), chainId: t.chainId })),
      });
    }
    if (!body.continuation) break;
    continuation = body.continuation;
  }
  return all;
}

/** Whether the bridge's prices move (its GET /_emulator/prices exists): the local stand-in for watching a market. */
export async function bridgePricesMove(known: PublicKnowledge): Promise<boolean> {
  if (!known.relayUrl) return false;
  const res = await fetch(`${known.relayUrl}/_emulator/prices`, { signal: AbortSignal.timeout(RPC_TIMEOUT_MS) }).catch(() => null);
  return !!res && res.ok;
}

/** The ASP's approved labels in insertion order (GET /{chainId}/public/mt-leaves); null when it does not answer. */
export async function aspLeaves(known: PublicKnowledge): Promise<bigint[] | null> {
  if (!known.aspUrl) return null;
  try {
    const res = await fetch(`${known.aspUrl}/${chainIdOf(known, 'hub')}/public/mt-leaves`, {
      headers: { 'X-Pool-Scope': known.poolScope },
      signal: AbortSignal.timeout(RPC_TIMEOUT_MS),
    });
    if (!res.ok) return null;
    const body = (await res.json()) as { aspLeaves: string[] };
    return body.aspLeaves.map((l) => BigInt(l));
  } catch {
    return null;
  }
}
