import { authHeaders, type ClientContext, call } from '../context.ts';
import type { PublicTransferView, TransferView } from '../types.ts';

/** What GET /api/private-route/:routeId answers: the full view with the statusToken, the public one without. */
export type View = TransferView | PublicTransferView;

/** GET /api/private-route/:routeId, with the statusToken as a bearer token when there is one. */
export async function getTransfer(ctx: ClientContext, routeId: string, statusToken: string | undefined, signal: AbortSignal | undefined): Promise<View> {
  const url = `${ctx.baseUrl}/api/private-route/${encodeURIComponent(routeId)}`;
  return call<View>(
    url,
    () => ctx.api.api['private-route'][':routeId'].$get({ param: { routeId } }, { headers: authHeaders(statusToken), init: { signal } }),
    signal,
  );
}
