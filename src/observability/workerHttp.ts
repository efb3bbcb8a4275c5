/** The worker's HTTP endpoints: /healthz, /readyz (worker RUNNING and Postgres answers), /metrics. */
import type { Database } from '../db/client.ts';
import type { Logger } from '../logger.ts';
import { observabilityRoutes, postgresCheck, serveHttp, type HttpServer } from './http.ts';
import { metricsRegistry } from './metrics.ts';

export const DEFAULT_WORKER_HTTP_PORT = 9464;

export async function startWorkerHttp(opts: { port: number; host: string; worker: { state(): string }; db: Database; logger?: Logger }): Promise<HttpServer> {
  const app = observabilityRoutes({
    checks: {
      worker: async () => {
        const state = opts.worker.state();
        if (state !== 'RUNNING') throw new Error(`state ${state}`);
      },
      postgres: postgresCheck(opts.db),
    },
    registry: metricsRegistry(opts.db, opts.logger),
    logger: opts.logger,
  });
  app.notFound((c) => c.json({ success: false, error: `no such endpoint: ${c.req.method} ${c.req.path}` }, 404));
  return serveHttp(app, opts.port, opts.host);
}
