import { createRoute, z } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { ROUTE_ID_PATTERN, type NewTransfer, type TransferRead } from '../../transfers/transferService.ts';
import { ExternalIdTakenError } from '../../transfers/partnerTransfers.ts';
import { clientHashOf } from '../abuseLimits.ts';
import { requireServerKey } from '../cors.ts';
import type { ApiDeps } from '../deps.ts';
import { ok } from '../envelope.ts';
import { ApiError, badRequest } from '../errorCodes.ts';
import {
  createTransferSchemaWith,
  headerParameters,
  IDEMPOTENCY_KEY_RULE,
  newTransferSchema,
  publicTransferViewSchema,
  responseHeaders,
  routeIdParamsSchema,
  transferViewSchema,
} from '../schemas.ts';
import { failures, jsonObjectBody, newApp, passThrough, servedChains, success } from './common.ts';

/** Full views are answered in whole blocks of this many bytes (body plus X-Padding). */
const PADDED_BLOCK_BYTES = 4096;

/**
 * The X-Padding header that brings a full view's answer to a whole number of blocks. The full view grows at each
 * status (one more statusHistory entry, other fields set): without it, whoever watches the reader's encrypted
 * connection would see when a status changed, and so when the route's private hop happened (docs/privacy.md).
 */
export function paddingFor(envelope: unknown): string {
  const length = Buffer.byteLength(JSON.stringify(envelope));
  return '0'.repeat((PADDED_BLOCK_BYTES - (length % PADDED_BLOCK_BYTES)) % PADDED_BLOCK_BYTES);
}

/** Who may read a transfer: GET and its event stream take the statusToken the same ways. */
export const STATUS_TOKEN_SECURITY: Array<Record<string, string[]>> = [{}, { statusToken: [] }, { statusTokenHeader: [] }];

/**
 * The statusToken a read by routeId presents: `X-Status-Token: <token>`, else `Authorization: Bearer <token>`
 * (X-Status-Token lets a client whose Authorization header carries something else still present it). Never a
 * query parameter: URLs end up in access logs and browser history.
 */
export function presentedStatusToken(c: Context): string | undefined {
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

/** The transfer as this caller may read it: 404 for an unknown or malformed id, 401 for a wrong token. */
export async function readTransfer(deps: ApiDeps, c: Context, routeId: string): Promise<Exclude<TransferRead, { access: 'denied' }>> {
  const read = ROUTE_ID_PATTERN.test(routeId) ? await deps.transfers.read(routeId, presentedStatusToken(c)) : null;
  if (!read) throw new ApiError(404, 'UNKNOWN_ROUTE', `unknown routeId "${routeId.slice(0, 80)}"`);
  if (read.access === 'denied') throw new ApiError(401, 'STATUS_TOKEN_MISMATCH', WRONG_STATUS_TOKEN, { 'WWW-Authenticate': 'Bearer' });
  return read;
}

export function transferRoutes(deps: ApiDeps) {
  const chains = servedChains(deps.servedChainIds);
  const createRequestSchema = createTransferSchemaWith({ allowHttpWebhooks: deps.webhookAllowHttp ?? false });

  const create = createRoute({
    method: 'post',
    path: '/api/private-route',
    operationId: 'createTransfer',
    tags: ['Transfers'],
    summary: 'Create a transfer',
    description:
      "Prices afresh, allocates the route's deposit address and starts the transfer. Send the source token to `depositAddress`; keep `routeId` and `statusToken`. With an Idempotency-Key a retried create answers the first answer again.",
    middleware: [deps.abuse?.create ?? passThrough, jsonObjectBody],
    parameters: [headerParameters.apiKey, headerParameters.idempotencyKey],
    request: { body: { required: true, content: { 'application/json': { schema: createRequestSchema } } } },
    responses: {
      200: success('The new transfer (or, with `Idempotent-Replayed: true`, the answer of the first create with this Idempotency-Key).', newTransferSchema, {
        ...responseHeaders.rateLimit,
        ...responseHeaders.replayed,
      }),
      400: failures[400]([
        'INVALID_JSON',
        'INVALID_REQUEST',
        'INVALID_AMOUNT',
        'INVALID_ADDRESS',
        'INVALID_WEBHOOK_URL',
        'WEBHOOK_NEEDS_API_KEY',
        'INVALID_IDEMPOTENCY_KEY',
        'USER_REFERENCE_NOT_ACCEPTED',
        'EXTERNAL_ID_NOT_ACCEPTED',
        'UNSUPPORTED_CHAIN',
        'UNSUPPORTED_TOKEN',
        'AMBIGUOUS_TOKEN',
        'TOKEN_MISMATCH',
        'UNSUPPORTED_PAIR',
        'NO_ROUTE',
      ]),
      401: failures[401](['INVALID_API_KEY']),
      403: failures[403](['BROWSER_KEY_NOT_ALLOWED']),
      409: failures[409](['QUOTE_EXPIRED', 'QUOTE_MISMATCH', 'EXTERNAL_ID_TAKEN', 'IDEMPOTENCY_KEY_REUSED', 'IDEMPOTENCY_KEY_IN_USE']),
      413: failures[413](),
      429: failures[429](['RATE_LIMITED', 'TOO_MANY_UNFUNDED_TRANSFERS']),
      500: failures[500](),
      503: failures[503](),
    },
  });

  const get = createRoute({
    method: 'get',
    path: '/api/private-route/{routeId}',
    operationId: 'getTransfer',
    tags: ['Transfers'],
    summary: 'Get a transfer',
    description:
      "With the transfer's statusToken (Authorization: Bearer, or X-Status-Token): the full view. Without a token: the public view (routeId, status, error with details hidden, needsAttention) as it stood when the current exit epoch began, at most RATE_LIMIT_PUBLIC_READS_PER_MINUTE per client (429). Any other token: 401. Answers carry `Cache-Control: no-store`.",
    security: STATUS_TOKEN_SECURITY,
    middleware: [deps.abuse?.publicRead ?? passThrough],
    parameters: [headerParameters.statusToken],
    request: { params: routeIdParamsSchema },
    responses: {
      200: success('The full view (right statusToken) or the public view (no token).', z.union([transferViewSchema, publicTransferViewSchema])),
      401: failures[401](['STATUS_TOKEN_MISMATCH', 'INVALID_API_KEY']),
      404: failures[404](['UNKNOWN_ROUTE']),
      429: failures[429](['RATE_LIMITED']),
      500: failures[500](),
    },
  });

  return newApp()
    .openapi(create, async (c) => {
      const request = c.req.valid('json');
      chains.require(request);
      const key = c.req.header('idempotency-key');
      if (key !== undefined && !IDEMPOTENCY_KEY_RULE.test(key)) {
        throw badRequest('INVALID_IDEMPOTENCY_KEY', 'Idempotency-Key must be 8 to 255 printable ASCII characters without spaces (e.g. a UUID)');
      }
      // A browser key is public: whoever copies it from the page must not redirect its webhooks or invent users.
      if (request.webhookUrl !== undefined) requireServerKey(c, 'name a webhookUrl');
      if (request.userReference !== undefined) requireServerKey(c, 'send a userReference');
      // Its 409 names the transfer that has an externalId: whoever copied the key could look routes up by guessed ids.
      if (request.externalId !== undefined) requireServerKey(c, 'send an externalId');
      const partner = c.get('partner');
      if (request.userReference !== undefined && (partner === undefined || partner.userShareBps === null)) {
        throw badRequest(
          'USER_REFERENCE_NOT_ACCEPTED',
          partner === undefined
            ? 'userReference needs an API key (X-Api-Key) that vouches for its users; without one, leave it out'
            : `this API key does not vouch for its users, so its transfers count as one client in every anonymity set: leave userReference out, or ask the operator to let the key vouch for them (routectl apikey vouch --name ${partner.name})`,
        );
      }
      if (request.externalId !== undefined && partner === undefined) {
        throw badRequest(
          'EXTERNAL_ID_NOT_ACCEPTED',
          "externalId needs an API key (X-Api-Key): it names the transfer among that key's transfers; without a key, leave it out and keep the routeId",
        );
      }
      if (request.webhookUrl !== undefined && partner === undefined) {
        throw badRequest(
          'WEBHOOK_NEEDS_API_KEY',
          "webhookUrl needs an API key (X-Api-Key): deliveries are signed with the key's own webhook secret, so no other caller can forge them; without a key, follow the transfer with GET or its event stream",
        );
      }
      const { userReference, ...asked } = request;
      // The key's default endpoint serves the creates that name none.
      const webhookUrl = asked.webhookUrl ?? partner?.webhookUrl ?? undefined;
      const transfer = { ...asked, ...(webhookUrl !== undefined && { webhookUrl }) };
      const client = c.get('abuseClient');
      const vouched = userReference !== undefined && partner?.userShareBps != null && client;
      const createTransfer = async () => {
        const created = await deps.transfers
          .create(
            { ...transfer, partnerFeeBps: partner?.feeBps ?? 0, partnerId: partner?.id },
            {
              clientHash: clientHashOf(c),
              partnerId: partner?.id,
              ...(vouched && { user: { client: client.userHash(userReference), voucher: client.hash, shareBps: partner.userShareBps! } }),
            },
          )
          .catch((error: unknown) => {
            if (error instanceof ExternalIdTakenError) {
              throw new ApiError(
                409,
                'EXTERNAL_ID_TAKEN',
                `externalId "${error.externalId}" is taken: this API key's transfer ${error.routeId} has it (GET /api/private-route?externalId=… finds it); use another externalId for a new transfer`,
              );
            }
            throw error;
          });
        deps.logger.info('transfer created', { routeId: created.routeId, sourceChainId: created.sourceChainId, destChainId: created.destChainId });
        return created;
      };
      if (key === undefined || !deps.idempotency) return ok(c, await createTransfer());

      // Scope: the partner's key, so two partners' keys never collide; callers without one share the '' scope.
      const scope = String(c.get('partner')?.id ?? '');
      const begun = await deps.idempotency.begin<NewTransfer>(key, scope, request);
      switch (begun.kind) {
        case 'replay':
          c.header('Idempotent-Replayed', 'true');
          return ok(c, begun.response);
        case 'mismatch':
          throw new ApiError(409, 'IDEMPOTENCY_KEY_REUSED', 'this Idempotency-Key was used with another request body: use a new key for a new transfer');
        case 'in-progress':
          throw new ApiError(409, 'IDEMPOTENCY_KEY_IN_USE', 'the first request with this Idempotency-Key is still running; retry in 1 s', {
            'Retry-After': '1',
          });
      }
      let created: NewTransfer;
      try {
        created = await createTransfer();
      } catch (error) {
        await begun
          .abandon()
          .catch((cause: unknown) =>
            deps.logger.warn('could not release an Idempotency-Key', { error: cause instanceof Error ? cause.message : String(cause) }),
          );
        throw error;
      }
      try {
        await begun.complete(created.routeId, created);
      } catch (error) {
        // The transfer exists and its answer goes out; only a retry with this key could not be recognised.
        deps.logger.warn('could not store the answer of an Idempotency-Key', {
          routeId: created.routeId,
          error: error instanceof Error ? error.message : String(error),
        });
      }
      return ok(c, created);
    })
    .openapi(get, async (c) => {
      const read = await readTransfer(deps, c, c.req.valid('param').routeId);
      // Full and public views differ per caller: no shared cache may keep one for another.
      c.header('Cache-Control', 'no-store');
      c.header('Vary', 'Authorization, X-Status-Token');
      if (read.access === 'full') c.header('X-Padding', paddingFor({ success: true, data: read.transfer }));
      return ok(c, read.transfer);
    });
}
