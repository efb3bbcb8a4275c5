/** The spec's envelope: `{ success: true, data }` or `{ success: false, error, code }`. */
import type { Context } from 'hono';
import type { ErrorCode, ErrorStatus } from './errorCodes.ts';

/** A typed 200 answer (hc<Api> sees `data`'s type). */
export const ok = <T>(c: Context, data: T) => c.json({ success: true as const, data }, 200);

export const fail = (c: Context, status: ErrorStatus, code: ErrorCode, error: string) => c.json({ success: false as const, error, code }, status);
