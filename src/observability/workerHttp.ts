/** The worker's HTTP endpoints: /healthz, /readyz (worker RUNNING and Postgres answers), /metrics (with the hot wallets' and the pipeline's gauges). */
import type { Database } from '../db/client.ts';
import type { Logger } from '../logger.ts';
import { observabilityRoutes, postgresCheck, serveHttp, type HttpServer } from './http.ts';
import type { ChainClients } from '../chain/clients.ts';
import { type HotWalletSettings, registerHotWalletGauges } from './hotWallets.ts';
import { metricsRegistry } from './metrics.ts';
import { registerPipelineGauges } from './pipelineMetrics.ts';

export const DEFAULT_WORKER_HTTP_PORT = 9464;

export async function startWorkerHttp(opts: {
  port: number;
  host: string;
  worker: { state(): string };
  db: Database;
  /** The gas account's and the pool relayer's balances and runway (src/observability/hotWallets.ts). */
  hotWallets?: { chains: ChainClients; settings: HotWalletSettings };
  logger?: Logger;
}): Promise<HttpServer> {
  const registry = metricsRegistry(opts.db, opts.logger);
  if (opts.hotWallets) registerHotWalletGauges(registry, { db: opts.db, ...opts.hotWallets, logger: opts.logger });
  // Where transfers wait: the watcher's lag, the withdrawals due, the ASP's approvals, the webhooks that fail.
  registerPipelineGauges(registry, { db: opts.db, logger: opts.logger });
  const app = observabilityRoutes({
    checks: {
      worker: async () => {
        const state = opts.worker.state();
        if (state !== 'RUNNING') throw new Error(`state ${state}`);
      },
      postgres: postgresCheck(opts.db),
    },
    registry,
    logger: opts.logger,
  });
  app.notFound((c) => c.json({ success: false, error: `no such endpoint: ${c.req.method} ${c.req.path}` }, 404));
  return serveHttp(app, opts.port, opts.host);
}
