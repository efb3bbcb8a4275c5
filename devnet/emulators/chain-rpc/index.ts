import { Hono } from 'hono';
import { type Address, type Hex, getAbiItem, parseTransaction, toFunctionSelector } from 'viem';
import { entrypointAbi } from '../../../src/providers/privacy-pools/abi.ts';
import type { FaultOperation, FaultRegistry } from '../faults.ts';
import { listen } from '../http.ts';

/**
 * A local chain's JSON-RPC endpoint as the service sees it on the local stack: a pass-through to anvil. On the hub
 * it can reject the pool's deposits (shield) and relayed withdrawals (unshield) sent to its Entrypoint (fault
 * injection), the way a real node rejects a transaction. On every chain it answers eth_maxPriorityFeePerGas with an
 * L2's tip (0.01 gwei, the order of what OP-stack nodes suggest), where anvil always suggests 1 gwei: the local
 * chains' fees, and so the gas the quotes charge for them, are an L2's (src/quote/gasCost.ts); a test that raises a
 * chain's base fee sees an L1's. The service's adapters are unchanged; only its RPC URLs point here.
 */
export const L2_PRIORITY_FEE_WEI = 10_000_000n;
const SELECTORS: Record<Hex, FaultOperation> = {
  [toFunctionSelector(getAbiItem({ abi: entrypointAbi, name: 'deposit' }))]: 'shield',
  [toFunctionSelector(getAbiItem({ abi: entrypointAbi, name: 'relay' }))]: 'unshield',
};

interface JsonRpcRequest {
  jsonrpc: '2.0';
  id: number | string | null;
  method: string;
  params?: unknown[];
}

export interface ChainRpcProxy {
  url: string;
  stop(): Promise<void>;
}

export async function startChainRpcProxy(opts: {
  upstreamUrl: string;
  /** The hub's: the pool's Entrypoint and the faults to inject into its calls. */
  pool?: { entrypoint: Address; faults: FaultRegistry };
  port: number;
  host?: string;
}): Promise<ChainRpcProxy> {
  const host = opts.host ?? '127.0.0.1';
  const pool = opts.pool?.entrypoint.toLowerCase();
  const faults = opts.pool?.faults;

  const injectedFault = (request: JsonRpcRequest) => {
    if (!faults || request.method !== 'eth_sendRawTransaction' || typeof request.params?.[0] !== 'string') return null;
    const tx = parseTransaction(request.params[0] as Hex);
    const operation = tx.to?.toLowerCase() === pool && tx.data ? SELECTORS[tx.data.slice(0, 10) as Hex] : undefined;
    if (!operation || !faults.take(operation, 'fail')) return null;
    return { jsonrpc: '2.0', id: request.id, error: { code: -32000, message: `injected fault: ${operation} rejected by the devnet hub` } };
  };

  const forward = async (body: unknown) => {
    const response = await fetch(opts.upstreamUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    return (await response.json()) as unknown;
  };

  const answeredHere = (request: JsonRpcRequest) =>
    request.method === 'eth_maxPriorityFeePerGas'
      ? { jsonrpc: '2.0', id: request.id, result: `0x${L2_PRIORITY_FEE_WEI.toString(16)}` }
      : (injectedFault(request) ?? null);

  const app = new Hono();
  app.post('/', async (c) => {
    const body = (await c.req.json()) as JsonRpcRequest | JsonRpcRequest[];
    if (Array.isArray(body)) return c.json(await Promise.all(body.map((request) => answeredHere(request) ?? forward(request))));
    return c.json((answeredHere(body) ?? (await forward(body))) as object);
  });

  const { url, close } = await listen(app, opts.port, host);
  return { url, stop: close };
}
