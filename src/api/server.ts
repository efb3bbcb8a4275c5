import type { Client } from '@temporalio/client';
import { checkSignerFingerprint } from '../accounts/signerFingerprint.ts';
import type { Logger } from '../logger.ts';
import { observabilityRoutes, postgresCheck, serveHttp, temporalCheck } from '../observability/http.ts';
import { metricsRegistry } from '../observability/metrics.ts';
import { privacySettings, transferSettings, type ServiceContext } from '../runtime.ts';
import { connectTemporalClient } from '../temporal/connection.ts';
import { createTransferService } from '../transfers/transferService.ts';
import { abuseLimitSettings, createAbuseLimits } from './abuseLimits.ts';
import { createApi } from './app.ts';

export interface RunningApi {
  url: string;
  temporal: Client;
  stop(): Promise<void>;
}

/** Connects to Temporal and serves the REST API on the configured port. */
export async function startApi(service: ServiceContext, logger: Logger): Promise<RunningApi> {
  const { config } = service;
  // Refuses to hand out deposit addresses of another signer than the worker's.
  await checkSignerFingerprint(service.db, service.keyring, 'api');
  const { connection, client: temporal } = await connectTemporalClient(config);
  const transfers = createTransferService({
    db: service.db,
    temporal,
    taskQueue: config.TEMPORAL_TASK_QUEUE,
    quotes: service.quotes,
    keyring: service.keyring,
    settings: transferSettings(config),
    privacy: privacySettings(config),
  });
  try {
    const servedChainIds = new Set(Object.keys(config.CHAIN_RPC_URLS).map(Number));
    const abuse = await createAbuseLimits({ db: service.db, settings: abuseLimitSettings(config), hashKey: config.CLIENT_HASH_KEY, logger });
    const app = createApi({ quotes: service.quotes, transfers, logger, servedChainIds, abuse });
    // Beside the spec routes: /healthz, /readyz (Postgres and Temporal answer), /metrics.
    app.route('/', observabilityRoutes({ checks: { postgres: postgresCheck(service.db), temporal: temporalCheck(connection) }, registry: metricsRegistry(service.db, logger), logger }));
    const server = await serveHttp(app, config.PORT, config.HOST);
    return {
      url: server.url,
      temporal,
      async stop() {
        await server.stop();
        await connection.close();
      },
    };
  } catch (error) {
    await connection.close();
    throw error;
  }
}
