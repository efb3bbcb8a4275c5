import type { Context, MiddlewareHandler } from 'hono';

/**
 * Refuses request bodies above `maxBytes` by counting the bytes that arrive, not by believing Content-Length:
 * hono's bodyLimit trusts the header when there is one, so a body whose header says less (or is not a number)
 * would be read whole. A declared length above the limit is refused before reading; a malformed one is a 400.
 */
export function bodyLimit(opts: { maxBytes: number; refuse: (c: Context, status: 400 | 413, error: string) => Response }): MiddlewareHandler {
  const tooLarge = `request body is too large (at most ${Math.floor(opts.maxBytes / 1024)} KiB)`;
  return async (c, next) => {
    const raw = c.req.raw;
    if (!raw.body) return next();
    const declared = raw.headers.get('content-length');
    if (declared !== null) {
      if (!/^\d+$/.test(declared.trim())) return opts.refuse(c, 400, 'Content-Length must be a whole number of bytes');
      if (Number(declared) > opts.maxBytes) return opts.refuse(c, 413, tooLarge);
    }
    const chunks: Uint8Array[] = [];
    let size = 0;
    const reader = raw.body.getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.byteLength;
      if (size > opts.maxBytes) {
        await reader.cancel().catch(() => {});
        return opts.refuse(c, 413, tooLarge);
      }
      chunks.push(value);
    }
    const body = new Uint8Array(size);
    let offset = 0;
    for (const chunk of chunks) {
      body.set(chunk, offset);
      offset += chunk.byteLength;
    }
    c.req.raw = new Request(raw, { body });
    return next();
  };
}
