import { type ClientContext, call } from '../context.ts';
import type { RequestOptions } from '../options.ts';
import type { ReissuedStatusToken } from '../types.ts';

/** POST /api/private-route/:routeId/status-token with the client's API key (the transfer's creator). */
export function reissueStatusToken(ctx: ClientContext, routeId: string, requestOptions: RequestOptions = {}): Promise<ReissuedStatusToken> {
  return call<ReissuedStatusToken>(
    `${ctx.baseUrl}/api/private-route/${encodeURIComponent(routeId)}/status-token`,
    () => ctx.api.api['private-route'][':routeId']['status-token'].$post({ param: { routeId } }, { init: { signal: requestOptions.signal } }),
    requestOptions.signal,
  );
}
