/**
 * An API key's own transfers (docs/api.md, "A key's own transfers"): the listing with its lookups (externalId,
 * deposit transaction, deposit address) and the reissue of a transfer's statusToken. Only the key that created a
 * transfer finds it here: everything is scoped to the partner requireListingKey names, and another key's transfer
 * is answered exactly like one that does not exist.
 */
import { createRoute } from '@hono/zod-openapi';
import { InvalidCursorError, ROUTE_ID_PATTERN } from '../../transfers/transferService.ts';
import type { ApiDeps } from '../deps.ts';
import { ok } from '../envelope.ts';
import { ApiError, badRequest } from '../errorCodes.ts';
import { requireListingKey } from '../partnerAccess.ts';
import {
  DEFAULT_PAGE_LIMIT,
  headerParameters,
  listTransfersQuerySchema,
  reissuedStatusTokenSchema,
  responseHeaders,
  routeIdParamsSchema,
  transferPageSchema,
} from '../schemas.ts';
import { failures, newApp, passThrough, success } from './common.ts';

const API_KEY_SECURITY: Array<Record<string, string[]>> = [{ apiKey: [] }];

export function partnerTransferRoutes(deps: ApiDeps) {
  const keyed = deps.abuse?.partnerRead ?? passThrough;

  const list = createRoute({
    method: 'get',
    path: '/api/private-route',
    operationId: 'listTransfers',
    tags: ['Transfers'],
    summary: "List the API key's transfers",
    description:
      "The transfers this X-Api-Key created, newest first, each as its full view (without its statusToken): all of them page by page (`limit`, then `cursor` = the previous page's `nextCursor`), or those matching the filters (`status`, `externalId`, `depositTxHash`, `depositAddress`). Another key's transfers are never listed: a lookup of one answers an empty page, as for one that does not exist. Counts against the key's rate limit.",
    security: API_KEY_SECURITY,
    middleware: [keyed],
    parameters: [headerParameters.requiredApiKey],
    request: { query: listTransfersQuerySchema },
    responses: {
      200: success("A page of the key's transfers.", transferPageSchema, responseHeaders.rateLimit),
      400: failures[400](['INVALID_REQUEST', 'INVALID_CURSOR']),
      401: failures[401](['API_KEY_REQUIRED', 'INVALID_API_KEY']),
      403: failures[403](['BROWSER_KEY_NOT_ALLOWED']),
      429: failures[429](['RATE_LIMITED']),
      500: failures[500](),
    },
  });

  const reissue = createRoute({
    method: 'post',
    path: '/api/private-route/{routeId}/status-token',
    operationId: 'reissueStatusToken',
    tags: ['Transfers'],
    summary: "Reissue a transfer's statusToken",
    description:
      "For the X-Api-Key that created the transfer: a new statusToken, handed out this once; the previous one stops opening the transfer at once (GET answers it 401, an event stream opened with it ends within a heartbeat). Any other caller: 404 UNKNOWN_ROUTE, as for a transfer that does not exist. Counts against the key's rate limit.",
    security: API_KEY_SECURITY,
    middleware: [keyed],
    parameters: [headerParameters.requiredApiKey],
    request: { params: routeIdParamsSchema },
    responses: {
      200: success('The new statusToken.', reissuedStatusTokenSchema),
      401: failures[401](['API_KEY_REQUIRED', 'INVALID_API_KEY']),
      403: failures[403](['BROWSER_KEY_NOT_ALLOWED']),
      404: failures[404](['UNKNOWN_ROUTE']),
      429: failures[429](['RATE_LIMITED']),
      500: failures[500](),
    },
  });

  return newApp()
    .openapi(list, async (c) => {
      const partner = requireListingKey(c);
      const { cursor, limit, ...filter } = c.req.valid('query');
      let page: Awaited<ReturnType<typeof deps.transfers.listForPartner>>;
      try {
        page = await deps.transfers.listForPartner(partner.id, filter, { cursor, limit: limit ?? DEFAULT_PAGE_LIMIT });
      } catch (error) {
        if (error instanceof InvalidCursorError) throw badRequest('INVALID_CURSOR', error.message);
        throw error;
      }
      c.header('Cache-Control', 'no-store');
      c.header('Vary', 'X-Api-Key');
      return ok(c, page);
    })
    .openapi(reissue, async (c) => {
      const partner = requireListingKey(c);
      const { routeId } = c.req.valid('param');
      const reissued = ROUTE_ID_PATTERN.test(routeId) ? await deps.transfers.reissueStatusToken(partner.id, routeId) : null;
      if (!reissued) throw new ApiError(404, 'UNKNOWN_ROUTE', `unknown routeId "${routeId.slice(0, 80)}"`);
      // The audit line: who replaced which route's token (never the token).
      deps.logger.info('statusToken reissued', { routeId, partnerId: partner.id });
      c.header('Cache-Control', 'no-store');
      return ok(c, reissued);
    });
}
