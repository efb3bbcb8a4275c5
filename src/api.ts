/** Production entry point of the REST API (the worker runs separately: src/worker.ts). */
import { ConfigError, describeConfig, loadConfig } from './config.ts';
import { migrateDatabase } from './db/client.ts';
import { startApi } from './api/startApi.ts';
import { ClusterNotReadyError } from './temporal/clusterSetup.ts';
import { createLogger } from './logger.ts';
import { createApiContext } from './runtime.ts';
import { StopList, onShutdown } from './shutdown.ts';

const logger = createLogger({ level: (process.env.LOG_LEVEL as 'info' | undefined) ?? 'info', fields: { component: 'api' } });

try {
  // The API's configuration refuses the mnemonic and private keys: it derives addresses from the xpubs.
  const config = loadConfig(process.env, 'api');
  if (config.DATABASE_MIGRATIONS === 'apply') await migrateDatabase(config.DATABASE_URL);
  const service = createApiContext(config);
  const api = await startApi(service, logger);
  logger.info('api listening', { url: api.url, config: describeConfig(config) });
  const stops = new StopList(logger);
  stops.add('database pool', service.close);
  stops.add('API', api.stop);
  onShutdown(logger, () => stops.stopAll());
} catch (error) {
  logger.error(error instanceof ConfigError || error instanceof ClusterNotReadyError ? error.message : 'api failed to start', { error: String(error) });
  process.exit(1);
}
