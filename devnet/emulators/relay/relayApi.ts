import { Hono, type Context } from 'hono';
import { z } from 'zod';
import { faultRoutes, type FaultRegistry } from '../faults.ts';
import { currenciesOf, priceSymbolOf } from './currencies.ts';
import type { Order, OrderStore } from './orders.ts';
import { formatUsdPrice, priceAsNumber } from './pricing.ts';
import { createQuote, RelayApiError, type QuoteContext } from './quote.ts';
import { listRequests } from './requests.ts';
import { relayChain, relayCurrency, relayError } from './shapes.ts';

/** Relay's /currencies/v2 default and maximum `limit`. */
const DEFAULT_CURRENCY_LIMIT = 20;
const MAX_CURRENCY_LIMIT = 100;

const currenciesBodySchema = z.looseObject({
  chainIds: z.array(z.number().int()).optional(),
  term: z.string().optional(),
  address: z.string().optional(),
  tokens: z.array(z.string()).optional(),
  verified: z.boolean().optional(),
  limit: z.number().int().positive().max(MAX_CURRENCY_LIMIT).optional(),
  depositAddressOnly: z.boolean().optional(),
});

/** The Hono app speaking Relay's HTTP API, plus emulator-only routes under /_emulator/. */
export function createRelayApp(ctx: QuoteContext & { store: OrderStore; faults: FaultRegistry }) {
  const app = new Hono();

  app.onError((err, c) => {
    if (err instanceof RelayApiError) return c.json(relayError(err.message, err.errorCode), err.status);
    ctx.log({ event: 'http.error', path: c.req.path, error: err instanceof Error ? err.message : String(err) });
    return c.json(relayError('An internal server error occurred', 'UNKNOWN_ERROR'), 500);
  });

  app.notFound((c) => c.json(relayError(`Route ${c.req.method}:${c.req.path} not found`, 'NOT_FOUND'), 404));

  app.get('/chains', (c) => c.json({ chains: ctx.manifest.chains.map((chain) => relayChain(chain, ctx.onchain.solver)) }));

  app.post('/currencies/v2', async (c) => {
    const parsed = currenciesBodySchema.safeParse(await jsonBody(c));
    if (!parsed.success) throw new RelayApiError(400, `body ${parsed.error.issues[0]?.message ?? 'is invalid'}`, 'INVALID_INPUT');
    const body = parsed.data;
    const term = body.term?.trim().toLowerCase();
    const wanted = body.tokens?.map((t) => t.toLowerCase());
    const currencies = ctx.manifest.chains
      .filter((chain) => !body.chainIds?.length || body.chainIds.includes(chain.chainId))
      .flatMap((chain) => currenciesOf(chain).map((token) => relayCurrency(chain.chainId, token)))
      .filter((cur) => !term || cur.symbol.toLowerCase().includes(term) || cur.name.toLowerCase().includes(term))
      .filter((cur) => !body.address || cur.address === body.address.toLowerCase())
      .filter((cur) => !wanted || wanted.includes(`${cur.chainId}:${cur.address}`));
    // Every emulated currency is verified and deposit-address capable, so those filters keep all.
    return c.json(currencies.slice(0, body.limit ?? DEFAULT_CURRENCY_LIMIT));
  });

  app.get('/currencies/token/price', (c) => {
    const address = c.req.query('address')?.toLowerCase();
    const chainId = Number(c.req.query('chainId'));
    const chain = ctx.manifest.chains.find((c) => c.chainId === chainId);
    // Relay prices a chain's native currency at the zero address.
    const token = chain && currenciesOf(chain).find((t) => t.address.toLowerCase() === address);
    const price = token && ctx.prices.pricesAt().get(priceSymbolOf(token));
    if (!price) return c.json({ error: 'Token price not found' }, 400);
    return c.json({ price: priceAsNumber(price) });
  });

  app.post('/quote/v2', async (c) => c.json(await createQuote(ctx, await jsonBody(c))));

  app.get('/intents/status/v3', (c) => {
    const order = ctx.store.get(c.req.query('requestId') ?? '');
    // Relay reports ids it has not seen (yet) as waiting rather than failing the call.
    if (!order) return c.json({ status: 'waiting', inTxHashes: [], txHashes: [] });
    return c.json(statusOf(order));
  });

  app.get('/requests/v2', (c) => c.json(listRequests(ctx.store.list(), c.req.query())));

  // ---- emulator-only ----

  app.route('/_emulator/faults', faultRoutes(ctx.faults));
  app.get('/_emulator/prices', (c) =>
    c.json({ prices: Object.fromEntries([...ctx.prices.pricesAt()].map(([symbol, price]) => [symbol, formatUsdPrice(price)])) }),
  );
  app.get('/_emulator/orders', (c) =>
    c.json({ orders: ctx.store.list().map((o) => JSON.parse(JSON.stringify(o, (_k, v) => (typeof v === 'bigint' ? `${v}` : v)))) }),
  );

  return app;
}

/** GET /intents/status/v3 body. `time` is the v1/v2 name of `updatedAt`; both are sent. */
function statusOf(order: Order) {
  return {
    status: order.status,
    ...(order.details ? { details: order.details } : {}),
    inTxHashes: order.inTxHashes,
    txHashes: order.txHashes,
    updatedAt: order.updatedAt,
    time: order.updatedAt,
    originChainId: order.originChainId,
    destinationChainId: order.destinationChainId,
    quoteCreatedAt: order.createdAt,
  };
}

async function jsonBody(c: Context): Promise<unknown> {
  try {
    return await c.req.json();
  } catch {
    throw new RelayApiError(400, 'Body is not valid JSON', 'INVALID_INPUT');
  }
}
