import { type ClientContext, call } from '../context.ts';
import type { RequestOptions } from '../options.ts';
import type { Chain } from '../types.ts';

/** GET /api/bridge/chains. */
export function listChains(ctx: ClientContext, requestOptions: RequestOptions = {}): Promise<Chain[]> {
  return call<Chain[]>(
    `${ctx.baseUrl}/api/bridge/chains`,
    () => ctx.api.api.bridge.chains.$get(undefined, { init: { signal: requestOptions.signal } }),
    requestOptions.signal,
  );
}
