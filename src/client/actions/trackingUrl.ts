import type { ClientContext } from '../context.ts';

/**
 * The end user's tracking page of a transfer: `<baseUrl>/t/<routeId>`, with the statusToken in the fragment (a
 * browser never sends a fragment to the server, so no request line or access log holds the token). Without a token
 * the page shows the public view.
 */
export function trackingUrl(ctx: Pick<ClientContext, 'baseUrl'>, routeId: string, statusToken?: string): string {
  const page = `${ctx.baseUrl}/t/${encodeURIComponent(routeId)}`;
  return statusToken === undefined ? page : `${page}#${encodeURIComponent(statusToken)}`;
}
