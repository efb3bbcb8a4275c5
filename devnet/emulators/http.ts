import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createAdaptorServer } from '@hono/node-server';
import type { Hono } from 'hono';

export interface ListeningServer {
  url: string;
  port: number;
  /** Closes the server and its open connections. */
  close(): Promise<void>;
}

/** Serves an emulator's Hono app on host:port (0 = a free port) and resolves once it listens. */
export async function listen(app: Hono, port: number, host = '127.0.0.1'): Promise<ListeningServer> {
  const server = createAdaptorServer({ fetch: app.fetch }) as Server;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const bound = (server.address() as AddressInfo).port;
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${bound}`,
    port: bound,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/**
 * Serves an emulator's app and runs its background loop; `stop` (idempotent) ends the loop, then the server.
 * `name` prefixes the started/stopped log events.
 */
export async function serveWithLoop(
  app: Hono,
  loop: { start(): void; stop(): Promise<void> },
  opts: { port: number; host?: string; name: string; log: (obj: object) => void; started?: Record<string, unknown> },
): Promise<{ url: string; port: number; stop(): Promise<void> }> {
  const { url, port, close } = await listen(app, opts.port, opts.host);
  loop.start();
  opts.log({ event: `${opts.name}.started`, url, ...opts.started });
  let stopping: Promise<void> | undefined;
  return {
    url,
    port,
    stop() {
      stopping ??= (async () => {
        await loop.stop();
        await close();
        opts.log({ event: `${opts.name}.stopped`, url });
      })();
      return stopping;
    },
  };
}
