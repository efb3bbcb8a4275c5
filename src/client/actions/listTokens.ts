import { type ClientContext, call } from '../context.ts';
import type { RequestOptions } from '../options.ts';
import type { Token } from '../types.ts';

/** GET /api/bridge/tokens?chainId=…[&search=…]. */
export function listTokens(ctx: ClientContext, chainId: number, search: string | undefined, requestOptions: RequestOptions = {}): Promise<Token[]> {
  return call<Token[]>(
    `${ctx.baseUrl}/api/bridge/tokens`,
    () =>
      ctx.api.api.bridge.tokens.$get(
        { query: { chainId: String(chainId), ...(search !== undefined && { search }) } },
        { init: { signal: requestOptions.signal } },
      ),
    requestOptions.signal,
  );
}
