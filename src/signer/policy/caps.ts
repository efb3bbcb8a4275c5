import type { Address } from 'viem';

/**
 * The most one move of a token may carry for a route: the largest amount the route's quote and records name in that
 * token (or in the same asset on another chain, scaled by decimals). Pure; the records are read by
 * src/signer/policy/routeFacts.ts.
 */
export interface RouteAmounts {
  sourceChainId: number;
  hubChainId: number;
  destChainId: number;
  tokens: { source: Address; hub: Address; dest: Address };
  decimals: { source: number; hub: number; dest: number };
  symbols: { source: string; hub: string; dest: string };
  /** The quote: the input (source units) and the output (destination units). */
  amount: bigint;
  quotedOutputAmount: bigint;
  /** What funded the deposit address while the route awaited it (source units). */
  funded: bigint;
  /** Bridge orders: leg `in…` (amountIn source, amountOut hub) and `out…` (amountIn hub, amountOut dest). */
  orders: { leg: string; amountIn: bigint; amountOut: bigint }[];
  /** Ledger rows (chain, token, amount). */
  ledger: { chainId: number; token: string; amount: bigint }[];
  /** Other tokens seen arriving at the deposit address (strays): only the payee rule limits their refund. */
  strays: Address[];
}

type Kind = 'source' | 'hub' | 'dest';
const KINDS: Kind[] = ['source', 'hub', 'dest'];

/** Any amount: a stray token's refund is limited by who may receive it, not by a quote that never named it. */
export const UNCAPPED = 2n ** 256n - 1n;

export function capOf(route: RouteAmounts, chainId: number, token: Address): bigint | undefined {
  const same = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();
  const chainOf: Record<Kind, number> = { source: route.sourceChainId, hub: route.hubChainId, dest: route.destChainId };
  const kinds = KINDS.filter((k) => chainOf[k] === chainId && same(route.tokens[k], token));
  if (kinds.length === 0) {
    return chainId === route.sourceChainId && route.strays.some((s) => same(s, token)) ? UNCAPPED : undefined;
  }
  const named: Record<Kind, bigint[]> = { source: [route.amount, route.funded], hub: [], dest: [route.quotedOutputAmount] };
  for (const order of route.orders) {
    const inbound = order.leg.startsWith('in');
    named[inbound ? 'source' : 'hub'].push(order.amountIn);
    named[inbound ? 'hub' : 'dest'].push(order.amountOut);
  }
  for (const row of route.ledger) for (const k of KINDS) if (chainOf[k] === row.chainId && same(route.tokens[k], row.token)) named[k].push(row.amount);

  let cap: bigint | undefined;
  for (const target of kinds) {
    for (const k of KINDS) {
      // Another kind counts when it is the same asset (USDC on the source and on the hub), scaled to this token's decimals.
      if (k !== target && route.symbols[k].toUpperCase() !== route.symbols[target].toUpperCase()) continue;
      for (const amount of named[k]) {
        const scaled = scale(amount, route.decimals[k], route.decimals[target]);
        if (scaled > 0n && (cap === undefined || scaled > cap)) cap = scaled;
      }
    }
  }
  return cap;
}

const scale = (amount: bigint, from: number, to: number) => (to >= from ? amount * 10n ** BigInt(to - from) : amount / 10n ** BigInt(from - to));
