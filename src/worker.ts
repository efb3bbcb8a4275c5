/** Production entry point of the Temporal worker that runs transfer workflows and their activities. */
import { ConfigError, describeConfig, loadConfig } from './config.ts';
import { migrateDatabase } from './db/client.ts';
import { createLogger, isLogLevel } from './logger.ts';
import { portFromEnv } from './observability/http.ts';
import { DEFAULT_TEMPORAL_METRICS_PORT } from './observability/temporalRuntime.ts';
import { DEFAULT_WORKER_HTTP_PORT } from './observability/workerHttp.ts';
import { createWorkerContext } from './runtime.ts';
import { StopList, onShutdown } from './shutdown.ts';
import { ClusterNotReadyError } from './temporal/clusterSetup.ts';
import { startWorkerProcess } from './workerProcess.ts';

const logger = createLogger({ level: isLogLevel(process.env.LOG_LEVEL) ? process.env.LOG_LEVEL : 'info', fields: { component: 'worker' } });

try {
  const config = loadConfig(process.env, 'worker');
  const httpPort = portFromEnv('WORKER_HTTP_PORT', DEFAULT_WORKER_HTTP_PORT);
  const temporalMetricsPort = portFromEnv('TEMPORAL_METRICS_PORT', DEFAULT_TEMPORAL_METRICS_PORT);
  // `skip` where a one-shot job applies them (`node dist/src/migrate.js`) before a rolling deploy.
  if (config.DATABASE_MIGRATIONS === 'apply') await migrateDatabase(config.DATABASE_URL);
  // Asks the signer (SIGNER_URL) for its public keys: the worker's accounts are the signer's.
  const service = await createWorkerContext(config);
  const worker = await startWorkerProcess(service, logger, { httpPort, temporalMetricsPort });
  logger.info('worker running', {
    http: worker.httpUrl,
    codecEndpoint: worker.codecEndpointUrl,
    temporalMetrics: worker.temporalMetricsUrl,
    prover: service.prover.setup(),
    versioning: worker.version ?? 'unversioned',
    config: describeConfig(config),
  });
  const stops = new StopList(logger);
  stops.add('database pool and prover threads', service.close);
  stops.add('worker and its endpoints', worker.stop);
  onShutdown(logger, () => stops.stopAll());
} catch (error) {
  logger.error(error instanceof ConfigError || error instanceof ClusterNotReadyError ? error.message : 'worker failed to start', { error: String(error) });
  process.exit(1);
}
