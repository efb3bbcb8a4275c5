import { type ClientContext, call } from '../context.ts';
import type { RequestOptions } from '../options.ts';
import type { ListRequest, TransferPage, TransferView } from '../types.ts';

/** GET /api/private-route: one page of the client's API key's own transfers (the key is required). */
export function listTransfers(ctx: ClientContext, request: ListRequest = {}, requestOptions: RequestOptions = {}): Promise<TransferPage> {
  // Only the fields that are set: hono/client would send an undefined one as the text "undefined".
  const query = {
    ...(request.status !== undefined && { status: request.status }),
    ...(request.externalId !== undefined && { externalId: request.externalId }),
    ...(request.depositTxHash !== undefined && { depositTxHash: request.depositTxHash }),
    ...(request.depositAddress !== undefined && { depositAddress: request.depositAddress }),
    ...(request.cursor != null && { cursor: request.cursor }),
    ...(request.limit !== undefined && { limit: String(request.limit) }),
  };
  return call<TransferPage>(
    `${ctx.baseUrl}/api/private-route`,
    () => ctx.api.api['private-route'].$get({ query }, { init: { signal: requestOptions.signal } }),
    requestOptions.signal,
  );
}

/** Every transfer of the listing, page after page (from `request.cursor`, or the newest), as they are read. */
export async function* allTransfers(ctx: ClientContext, request: ListRequest = {}, requestOptions: RequestOptions = {}): AsyncGenerator<TransferView> {
  let cursor = request.cursor ?? undefined;
  do {
    const page = await listTransfers(ctx, { ...request, cursor }, requestOptions);
    yield* page.items;
    cursor = page.nextCursor ?? undefined;
  } while (cursor !== undefined);
}
