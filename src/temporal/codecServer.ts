/**
 * The codec endpoint (Temporal's remote codec protocol) through which an authorised operator reads encrypted
 * histories: the Web UI and `temporal workflow show --codec-endpoint … --codec-auth "Bearer …"` send
 * `POST /decode` (and `/encode`) with `{ "payloads": [{ "metadata": { k: base64 }, "data": base64 }] }`.
 * Every request needs `Authorization: Bearer <CODEC_AUTH_TOKEN>`, compared in constant time. The only exception
 * is the local stack's own Web UI (`trustUiOrigin`, loopback only): the dev server's UI cannot send a token.
 */
import type { Payload, PayloadCodec } from '@temporalio/common';
import { Hono, type Context } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { z } from 'zod';
import type { Logger } from '../logger.ts';
import { serveHttp, type HttpServer } from '../observability/http.ts';
import { bearerToken, matchesSecretDigest, secretDigest } from '../secretTokens.ts';

const base64 = z.string().regex(/^[A-Za-z0-9+/]*={0,2}$/, 'must be base64');
const payloadsBody = z.object({
  payloads: z.array(z.object({ metadata: z.record(z.string(), base64).nullish(), data: base64.nullish() }).strict()).max(10_000),
});

export interface CodecEndpointOptions {
  codec: PayloadCodec;
  authToken: string;
  /** The Web UI's origin, allowed by CORS. */
  uiOrigin?: string;
  /** Requests from `uiOrigin` need no token. Only for the local stack on 127.0.0.1 (docs/local-stack.md). */
  trustUiOrigin?: boolean;
  logger?: Logger;
}

export function codecRoutes(opts: CodecEndpointOptions): Hono {
  const expected = secretDigest(opts.authToken);
  const app = new Hono();
  const fail = (c: Context, status: 400 | 401 | 404 | 413, error: string) => c.json({ success: false, error }, status);

  app.use('*', async (c, next) => {
    const origin = c.req.header('origin');
    const allowed = opts.uiOrigin !== undefined && origin === opts.uiOrigin;
    if (allowed) {
      c.header('Access-Control-Allow-Origin', opts.uiOrigin);
      c.header('Access-Control-Allow-Credentials', 'true');
      c.header('Vary', 'Origin');
    }
    if (c.req.method === 'OPTIONS') {
      if (!allowed) return c.body(null, 403);
      c.header('Access-Control-Allow-Methods', 'POST, OPTIONS');
      c.header('Access-Control-Allow-Headers', 'Authorization, Content-Type, X-Namespace');
      c.header('Access-Control-Max-Age', '600');
      return c.body(null, 204);
    }
    const trusted = allowed && opts.trustUiOrigin === true;
    if (!trusted && !authorized(c.req.header('authorization'), expected)) {
      opts.logger?.warn('codec endpoint refused a request without the right token', { path: c.req.path });
      return fail(c, 401, 'Authorization: Bearer <CODEC_AUTH_TOKEN> is required');
    }
    await next();
  });

  const handle = (direction: 'encode' | 'decode') => async (c: Context) => {
    let parsed: z.infer<typeof payloadsBody>;
    try {
      parsed = payloadsBody.parse(await c.req.json());
    } catch {
      return fail(c, 400, 'body must be JSON {"payloads":[{"metadata":{"<key>":"<base64>"},"data":"<base64>"}]}');
    }
    const payloads: Payload[] = parsed.payloads.map((p) => ({
      metadata: Object.fromEntries(Object.entries(p.metadata ?? {}).map(([k, v]) => [k, Buffer.from(v, 'base64')])),
      data: Buffer.from(p.data ?? '', 'base64'),
    }));
    let result: Payload[];
    try {
      result = direction === 'encode' ? await opts.codec.encode(payloads) : await opts.codec.decode(payloads);
    } catch (error) {
      return fail(c, 400, error instanceof Error ? error.message : String(error));
    }
    return c.json({
      payloads: result.map((p) => ({
        metadata: Object.fromEntries(Object.entries(p.metadata ?? {}).map(([k, v]) => [k, Buffer.from(v).toString('base64')])),
        data: Buffer.from(p.data ?? new Uint8Array()).toString('base64'),
      })),
    });
  };
  const limit = bodyLimit({ maxSize: 8 * 1024 * 1024, onError: (c) => fail(c, 413, 'body larger than 8 MiB: send fewer payloads at once') });
  app.post('/encode', limit, handle('encode'));
  app.post('/decode', limit, handle('decode'));
  app.notFound((c) => fail(c, 404, `no such endpoint: ${c.req.method} ${c.req.path} (POST /decode or /encode)`));
  return app;
}

/** Serves the codec endpoint on `host:port` (127.0.0.1 unless configured otherwise). */
export function startCodecEndpoint(opts: CodecEndpointOptions & { host: string; port: number }): Promise<HttpServer> {
  if (opts.trustUiOrigin && !isLoopback(opts.host)) throw new Error('the codec endpoint trusts the Web UI without a token only on a loopback address');
  return serveHttp(codecRoutes(opts), opts.port, opts.host);
}

function authorized(header: string | undefined, expected: Buffer): boolean {
  const token = bearerToken(header);
  return token !== null && matchesSecretDigest(token, expected);
}

const isLoopback = (host: string) => host === '127.0.0.1' || host === '::1' || host === 'localhost';
