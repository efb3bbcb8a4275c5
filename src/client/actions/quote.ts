import { type ClientContext, call } from '../context.ts';
import type { RequestOptions } from '../options.ts';
import type { Quote, QuoteRequest } from '../types.ts';

/** POST /api/private-route/quote: prices a transfer; nothing is persisted. */
export function quote(ctx: ClientContext, request: QuoteRequest, requestOptions: RequestOptions = {}): Promise<Quote> {
  return call<Quote>(
    `${ctx.baseUrl}/api/private-route/quote`,
    () => ctx.api.api['private-route'].quote.$post({ json: request }, { init: { signal: requestOptions.signal } }),
    requestOptions.signal,
  );
}
