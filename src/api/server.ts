import { serve, type ServerType } from '@hono/node-server';
import type { Hono } from 'hono';

export interface RunningApi {
  url: string;
  stop(): Promise<void>;
}

export function startApiServer(app: Hono, opts: { port: number; hostname: string }): Promise<RunningApi> {
  return new Promise((resolve, reject) => {
    const server: ServerType = serve({ fetch: app.fetch, port: opts.port, hostname: opts.hostname }, (info) => {
      resolve({
        url: `http://${opts.hostname}:${info.port}`,
        stop: () => new Promise((done) => server.close(() => done())),
      });
    });
    server.once('error', reject);
  });
}
