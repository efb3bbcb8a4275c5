import { z } from 'zod';
import type { Order, RelayStatus } from './orders.ts';
import { RelayApiError } from './quote.ts';

/**
 * GET /requests/v2: Relay's public request history (what its explorer shows), built from the
 * emulator's deposit-address orders. It needs no key: anyone can see which deposit paid out where.
 * Field names follow Relay's API reference; fields the emulator has no data for are left out.
 */

/** Relay's `limit`: 20 by default, at most 50. */
const DEFAULT_LIMIT = 20;
const MAX_LIMIT = 50;

const querySchema = z.object({
  user: z.string().optional(),
  originChainId: z.coerce.number().int().optional(),
  destinationChainId: z.coerce.number().int().optional(),
  limit: z.coerce.number().int().min(1).max(MAX_LIMIT).default(DEFAULT_LIMIT),
  continuation: z.string().optional(),
});

/** Where a page ended: the (createdAt, id) of its last request. */
const cursorSchema = z.tuple([z.number(), z.string()]);
type Cursor = z.infer<typeof cursorSchema>;

export function listRequests(orders: Order[], query: Record<string, string>) {
  const parsed = querySchema.safeParse(query);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new RelayApiError(400, `querystring/${issue?.path.join('/') ?? ''} ${issue?.message ?? 'is invalid'}`, 'INVALID_INPUT');
  }
  const { user, originChainId, destinationChainId, limit, continuation } = parsed.data;
  const after = continuation === undefined ? undefined : decodeCursor(continuation);

  const matching = orders
    .filter((o) => user === undefined || involves(o, user))
    .filter((o) => originChainId === undefined || o.originChainId === originChainId)
    .filter((o) => destinationChainId === undefined || o.destinationChainId === destinationChainId)
    .sort(newestFirst)
    .filter((o) => after === undefined || newestFirst(o, { createdAt: after[0], requestId: after[1] }) > 0);

  const page = matching.slice(0, limit);
  const last = page.at(-1);
  return {
    requests: page.map(relayRequest),
    continuation: last && matching.length > limit ? encodeCursor([last.createdAt, last.requestId.toLowerCase()]) : undefined,
  };
}

/** Relay's `user` filter matches the sender or the recipient. */
function involves(order: Order, address: string): boolean {
  const wanted = address.toLowerCase();
  return order.user.toLowerCase() === wanted || order.recipient.toLowerCase() === wanted;
}

type Position = { createdAt: number; requestId: string };

/** Newest first; the request id breaks ties so pages never skip or repeat a request. */
function newestFirst(a: Position, b: Position): number {
  if (a.createdAt !== b.createdAt) return b.createdAt - a.createdAt;
  const [idA, idB] = [a.requestId.toLowerCase(), b.requestId.toLowerCase()];
  return idA === idB ? 0 : idA < idB ? 1 : -1;
}

function encodeCursor(cursor: Cursor): string {
  return Buffer.from(JSON.stringify(cursor)).toString('base64url');
}

function decodeCursor(text: string): Cursor {
  try {
    return cursorSchema.parse(JSON.parse(Buffer.from(text, 'base64url').toString('utf8')));
  } catch {
    throw new RelayApiError(400, 'Invalid continuation', 'INVALID_INPUT');
  }
}

/** Relay's request statuses: the emulator's in-flight states are all `pending` there. */
function requestStatus(status: RelayStatus): 'waiting' | 'pending' | 'success' | 'refund' | 'failure' {
  return status === 'delayed' || status === 'submitted' ? 'pending' : status;
}

function relayRequest(order: Order) {
  // A refund is paid back on the origin chain, a fill on the destination.
  const outChainId = order.action === 'refund' ? order.originChainId : order.destinationChainId;
  return {
    id: order.requestId,
    status: requestStatus(order.status),
    user: order.user.toLowerCase(),
    recipient: order.recipient.toLowerCase(),
    depositAddress: { address: order.depositAddress.toLowerCase(), depositTxHash: order.inTxHashes[0] ?? null },
    data: {
      inTxs: order.inTxHashes.map((hash) => ({ hash, chainId: order.originChainId, type: 'onchain' })),
      outTxs: order.txHashes.map((hash) => ({ hash, chainId: outChainId, type: 'onchain' })),
    },
    createdAt: new Date(order.createdAt).toISOString(),
    updatedAt: new Date(order.updatedAt).toISOString(),
  };
}
