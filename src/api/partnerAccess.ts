import type { Context } from 'hono';
import type { Partner } from '../partners/apiKeys.ts';
import { requireServerKey } from './cors.ts';
import { ApiError } from './errorCodes.ts';

/**
 * The partner a key-scoped endpoint (a key's own transfers: src/api/routes/partnerTransfers.ts) serves: the one
 * behind the request's valid X-Api-Key (named by the abuse limits' middleware, which refuses an invalid key with
 * 401 INVALID_API_KEY). Without a key: 401 API_KEY_REQUIRED; with a browser key (one with allowed origins): 403 BROWSER_KEY_NOT_ALLOWED. Every such endpoint asks here and nowhere else, so a
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
  // A key that browsers may use is public: whoever copies it from a page must not read the key's transfers.
  requireServerKey(c, "read the key's transfers (list, look up, reissue a statusToken)");
  return partner;
}
