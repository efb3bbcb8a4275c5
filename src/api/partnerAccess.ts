import type { Context } from 'hono';
import type { Partner } from '../partners/apiKeys.ts';
import { ApiError } from './errorCodes.ts';

/**
 * The partner a key-scoped endpoint (a key's own transfers: src/api/routes/partnerTransfers.ts) serves: the one
 * behind the request's valid X-Api-Key (named by the abuse limits' middleware, which refuses an invalid key with
 * 401 INVALID_API_KEY). Without a key: 401 API_KEY_REQUIRED. Every such endpoint asks here and nowhere else, so a
 * rule about which keys may read their transfers (e.g. not a browser's key) is made once.
 */
export function requireListingKey(c: Context): Partner {
  const partner = c.get('partner');
  if (!partner) {
    throw new ApiError(
      401,
      'API_KEY_REQUIRED',
      "this endpoint reads an API key's own transfers: send the key in X-Api-Key (a transfer's holder reads it with its statusToken: GET /api/private-route/{routeId})",
    );
  }
  return partner;
}
