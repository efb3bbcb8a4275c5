import { Hono } from 'hono';
import { type Address, type Hex, getAbiItem, parseTransaction, toFunctionSelector } from 'viem';
import { entrypointAbi } from '../../../src/providers/privacy-pools/abi.ts';
import type { FaultOperation, FaultRegistry } from '../faults.ts';
import { listen } from '../http.ts';

/**
 * The hub chain's JSON-RPC endpoint as the service sees it on the local stack: a pass-through to anvil
 * that can reject the pool's deposits (shield) and relayed withdrawals (unshield) sent to its Entrypoint
 * (fault injection), the way a real node rejects a transaction. The service's adapters are unchanged; only
 * its RPC URL points here. It also answers eth_maxPriorityFeePerGas as Arbitrum's nodes do (0: an L2 sequencer
 * orders by arrival, a tip buys nothing), where anvil always suggests 1 gwei: the hub's fees, and so the gas the
 * quotes charge for it, are an L2's, not a busy L1's (src/quote/gasCost.ts).
 */
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

export interface HubRpcProxy {
  url: string;
  stop(): Promise<void>;
}

export async function startHubRpcProxy(opts: {
  upstreamUrl: string;
  entrypoint: Address;
  faults: FaultRegistry;
  port: number;
  host?: string;
}): Promise<HubRpcProxy> {
  const host = opts.host ?? '127.0.0.1';
  const pool = opts.entrypoint.toLowerCase();

  const injectedFault = (request: JsonRpcRequest) => {
    if (request.method !== 'eth_sendRawTransaction' || typeof request.params?.[0] !== 'string') return null;
    const tx = parseTransaction(request.params[0] as Hex);
    const operation = tx.to?.toLowerCase() === pool && tx.data ? SELECTORS[tx.data.slice(0, 10) as Hex] : undefined;
    if (!operation || !opts.faults.take(operation, 'fail')) return null;
    return { jsonrpc: '2.0', id: request.id, error: { code: -32000, message: `injected fault: ${operation} rejected by the devnet hub` } };
  };

  const forward = async (body: unknown) => {
    const response = await fetch(opts.upstreamUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    return (await response.json()) as unknown;
  };

  const answeredHere = (request: JsonRpcRequest) =>
    request.method === 'eth_maxPriorityFeePerGas' ? { jsonrpc: '2.0', id: request.id, result: '0x0' } : (injectedFault(request) ?? null);

  const app = new Hono();
  app.post('/', async (c) => {
    const body = (await c.req.json()) as JsonRpcRequest | JsonRpcRequest[];
    if (Array.isArray(body)) return c.json(await Promise.all(body.map((request) => answeredHere(request) ?? forward(request))));
    return c.json((answeredHere(body) ?? (await forward(body))) as object);
  });

  const { url, close } = await listen(app, opts.port, host);
  return { url, stop: close };
}
