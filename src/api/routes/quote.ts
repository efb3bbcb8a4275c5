import { createRoute } from '@hono/zod-openapi';
import type { ApiDeps } from '../deps.ts';
import { clientHashOf } from '../abuseLimits.ts';
import { ok } from '../envelope.ts';
import { headerParameters, quoteSchema, responseHeaders, transferRequestSchema } from '../schemas.ts';
import { failures, jsonObjectBody, newApp, passThrough, servedChains, success } from './common.ts';

export function quoteRoutes(deps: ApiDeps) {
  const chains = servedChains(deps.servedChainIds);
  const route = createRoute({
    method: 'post',
    path: '/api/private-route/quote',
    operationId: 'quote',
    tags: ['Transfers'],
    summary: 'Quote a transfer',
    description:
      'Prices a transfer; nothing is stored and no deposit address is allocated. Quotes are live: re-quote before creating and every 15 to 20 s while one is shown. The same request from the same client within QUOTE_CACHE_SECONDS gets the same answer.',
    middleware: [deps.abuse?.quote ?? passThrough, jsonObjectBody],
    parameters: [headerParameters.apiKey],
    request: { body: { required: true, content: { 'application/json': { schema: transferRequestSchema } } } },
    responses: {
      200: success('The quote.', quoteSchema, responseHeaders.rateLimit),
      400: failures[400]([
        'INVALID_JSON',
        'INVALID_REQUEST',
        'INVALID_AMOUNT',
        'UNSUPPORTED_CHAIN',
        'UNSUPPORTED_TOKEN',
        'AMBIGUOUS_TOKEN',
        'TOKEN_MISMATCH',
        'UNSUPPORTED_PAIR',
        'NO_ROUTE',
      ]),
      401: failures[401](['INVALID_API_KEY']),
      413: failures[413](),
      429: failures[429](['RATE_LIMITED']),
      500: failures[500](),
      503: failures[503](),
    },
  });
  return newApp().openapi(route, async (c) => {
    const request = c.req.valid('json');
    chains.require(request);
    // A partner's key quotes with the partner's fee in it (src/quote/partnerFees.ts).
    const partner = c.get('partner');
    const { quote } = await deps.quotes.quote({ ...request, partnerFeeBps: partner?.feeBps ?? 0, partnerId: partner?.id }, { cacheScope: clientHashOf(c) });
    return ok(c, quote);
  });
}
