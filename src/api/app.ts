import { Hono, type Context, type MiddlewareHandler } from 'hono';
import { HTTPException } from 'hono/http-exception';
import type { z } from 'zod';
import { BridgeRouteError, BridgeUnavailableError } from '../providers/bridge.ts';
import { redactUrls } from '../redact.ts';
import { QuoteError, type QuoteService } from '../quote/quoteService.ts';
import { ROUTE_ID_PATTERN, type TransferService } from '../transfers/transferService.ts';
import type { Logger } from '../logger.ts';
import { clientHashOf, type AbuseLimits } from './abuseLimits.ts';
import { bodyLimit } from './bodyLimit.ts';
import { createTransferSchema, describeZodError, tokensQuerySchema, transferRequestSchema } from './schemas.ts';

export interface ApiDeps {
  quotes: QuoteService;
  transfers: TransferService;
  logger: Logger;
  /**
   * Chains this deployment can watch and pay on (those with an RPC URL in CHAIN_RPC_URLS). A chain the bridge
   * lists but the service cannot reach is not offered: quote and create answer 400. Omitted: every bridge chain.
   */
  servedChainIds?: ReadonlySet<number>;
  /** Per-client limits on quote and create (src/api/abuseLimits.ts); omitted: none. */
  abuse?: AbuseLimits;
}

const MAX_BODY_BYTES = 64 * 1024;

/** A failure the client caused; answered as 400 with its message. */
class BadRequest extends Error {}

const ok = (c: Context, data: unknown) => c.json({ success: true, data });
const fail = (c: Context, status: 400 | 401 | 404 | 413 | 500, error: string) => c.json({ success: false, error }, status);

/**
 * The statusToken a GET by routeId presents: `X-Status-Token: <token>`, else `Authorization: Bearer <token>`
 * (X-Status-Token lets a client whose Authorization header carries something else still present it). Never a
 * query parameter: URLs end up in access logs and browser history.
 */
function presentedStatusToken(c: Context): string | undefined {
  const header = c.req.header('x-status-token');
  if (header !== undefined) return header.trim();
  const authorization = c.req.header('authorization');
  if (authorization === undefined) return undefined;
  const bearer = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
  // Any other scheme presents no valid statusToken: answered like a wrong one.
  return bearer ? bearer[1]! : authorization;
}

const WRONG_STATUS_TOKEN =
  'statusToken does not match this route: send the statusToken the create answer returned ("Authorization: Bearer <statusToken>" or "X-Status-Token"), or no token for the public status';


async function jsonBody(c: Context): Promise<unknown> {
  try {
    return await c.req.json();
  } catch {
    throw new BadRequest('request body must be valid JSON');
  }
}

function parse<T extends z.ZodType>(schema: T, input: unknown): z.infer<T> {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) throw new BadRequest('request body must be a JSON object');
  const result = schema.safeParse(input);
  if (!result.success) throw new BadRequest(describeZodError(result.error, input as Record<string, unknown>));
  return result.data;
}

export function createApi(deps: ApiDeps): Hono {
  const app = new Hono();
  const served = (chainId: number) => !deps.servedChainIds || deps.servedChainIds.has(chainId);
  const requireServed = (request: { sourceChainId: number; destChainId: number }) => {
    for (const field of ['sourceChainId', 'destChainId'] as const) {
      if (!served(request[field])) {
        throw new BadRequest(`${field} ${request[field]} is not a supported chain: this deployment has no RPC URL for it (see GET /api/bridge/chains)`);
      }
    }
  };
  app.use('/api/*', bodyLimit({ maxBytes: MAX_BODY_BYTES, refuse: fail }));

  const passThrough: MiddlewareHandler = (_c, next) => next();
  app.post('/api/private-route/quote', deps.abuse?.quote ?? passThrough, async (c) => {
    const request = parse(transferRequestSchema, await jsonBody(c));
    requireServed(request);
    const { quote } = await deps.quotes.quote(request);
    return ok(c, quote);
  });

  app.post('/api/private-route', deps.abuse?.create ?? passThrough, async (c) => {
    const request = parse(createTransferSchema, await jsonBody(c));
    requireServed(request);
    const created = await deps.transfers.create(request, { clientHash: clientHashOf(c) });
    deps.logger.info('transfer created', { routeId: created.routeId, sourceChainId: created.sourceChainId, destChainId: created.destChainId });
    return ok(c, created);
  });

  app.get('/api/private-route/:routeId', async (c) => {
    const routeId = c.req.param('routeId');
    const read = ROUTE_ID_PATTERN.test(routeId) ? await deps.transfers.read(routeId, presentedStatusToken(c)) : null;
    if (!read) return fail(c, 404, `unknown routeId "${routeId.slice(0, 80)}"`);
    if (read.access === 'denied') {
      c.header('WWW-Authenticate', 'Bearer');
      return fail(c, 401, WRONG_STATUS_TOKEN);
    }
    // Full and public views differ per caller: no shared cache may keep one for another.
    c.header('Cache-Control', 'no-store');
    c.header('Vary', 'Authorization, X-Status-Token');
    return ok(c, read.transfer);
  });

  app.get('/api/bridge/chains', async (c) => ok(c, (await deps.quotes.chains()).filter((chain) => served(chain.chainId))));

  app.get('/api/bridge/tokens', async (c) => {
    const params = c.req.query();
    const query = tokensQuerySchema.safeParse(params);
    if (!query.success) throw new BadRequest(describeZodError(query.error, params));
    if (!served(query.data.chainId)) throw new BadRequest(`chainId ${query.data.chainId} is not a supported chain: this deployment has no RPC URL for it (see GET /api/bridge/chains)`);
    return ok(c, await deps.quotes.tokens(query.data.chainId, query.data.search));
  });

  app.notFound((c) => fail(c, 404, `no such endpoint: ${c.req.method} ${c.req.path}`));

  app.onError((error, c) => {
    if (error instanceof BadRequest || error instanceof QuoteError) return fail(c, 400, error.message);
    if (error instanceof BridgeRouteError) return fail(c, 400, error.message);
    if (error instanceof HTTPException && error.status < 500) return fail(c, 400, error.message || 'bad request');
    deps.logger.error('request failed', { method: c.req.method, path: c.req.path, error: redactUrls(error.message), name: error.name });
    if (error instanceof BridgeUnavailableError) return fail(c, 500, 'the bridge provider is unavailable; try again shortly');
    return fail(c, 500, 'internal error');
  });

  return app;
}
