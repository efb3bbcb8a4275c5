import { createRoute, z } from '@hono/zod-openapi';
import type { ApiDeps } from '../deps.ts';
import { ok } from '../envelope.ts';
import { chainSchema, tokenSchema, tokensQuerySchema } from '../schemas.ts';
import { failures, newApp, servedChains, success } from './common.ts';

export function discoveryRoutes(deps: ApiDeps) {
  const chains = servedChains(deps.servedChainIds);
  const chainsRoute = createRoute({
    method: 'get',
    path: '/api/bridge/chains',
    operationId: 'listChains',
    tags: ['Discovery'],
    summary: 'List chains',
    description: 'Chains the active bridge provider serves and this deployment can reach. A listed chain does not guarantee a quote for every pair.',
    responses: { 200: success('The chains.', z.array(chainSchema)), 500: failures[500](), 503: failures[503]() },
  });
  const tokensRoute = createRoute({
    method: 'get',
    path: '/api/bridge/tokens',
    operationId: 'listTokens',
    tags: ['Discovery'],
    summary: 'List tokens on a chain',
    description:
      'Tokens of one chain with their addresses, optionally filtered by a part of their symbol or name, or by a whole address. Two tokens may share a symbol: a request names such a token by tokenAddress. Burn-and-mint mode lists USDC only.',
    request: { query: tokensQuerySchema },
    responses: {
      200: success('The tokens.', z.array(tokenSchema)),
      400: failures[400](['INVALID_REQUEST', 'UNSUPPORTED_CHAIN']),
      500: failures[500](),
      503: failures[503](),
    },
  });
  return newApp()
    .openapi(chainsRoute, async (c) =>
      ok(
        c,
        (await deps.quotes.chains())
          .filter((chain) => chains.served(chain.chainId))
          .map((chain) => ({ ...chain, explorerUrl: chain.explorerUrl ?? null, nativeCurrency: chain.nativeCurrency ?? null })),
      ),
    )
    .openapi(tokensRoute, async (c) => {
      const query = c.req.valid('query');
      chains.requireChain(query.chainId);
      return ok(c, await deps.quotes.tokens(query.chainId, query.search));
    });
}
