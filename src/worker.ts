/** Production entry point of the Temporal worker that runs transfer workflows and their activities. */
import { checkSignerFingerprint } from './accounts/signerFingerprint.ts';
import { ConfigError, describeConfig, loadConfig } from './config.ts';
import { migrateDatabase } from './db/client.ts';
import { createLogger, isLogLevel } from './logger.ts';
import { hostPort, portFromEnv } from './observability/http.ts';
import { DEFAULT_TEMPORAL_METRICS_PORT } from './observability/temporalRuntime.ts';
import { DEFAULT_WORKER_HTTP_PORT, startWorkerHttp } from './observability/workerHttp.ts';
import { createWorkerContext, workerHotWallets } from './runtime.ts';
import { StopList, onShutdown } from './shutdown.ts';
import { ensureBackgroundWorkflows } from './temporal/backgroundWorkflows.ts';
import { payloadCodecOf } from './temporal/codec.ts';
import { startCodecEndpoint } from './temporal/codecServer.ts';
import { ClusterNotReadyError, assertClusterReady } from './temporal/clusterSetup.ts';
import { connectTemporalClient } from './temporal/connection.ts';
import { startTransferWorker, workerSlots } from './temporal/worker.ts';

const logger = createLogger({ level: isLogLevel(process.env.LOG_LEVEL) ? process.env.LOG_LEVEL : 'info', fields: { component: 'worker' } });

try {
  const config = loadConfig(process.env, 'worker');
  const httpPort = portFromEnv('WORKER_HTTP_PORT', DEFAULT_WORKER_HTTP_PORT);
  const temporalMetricsPort = portFromEnv('TEMPORAL_METRICS_PORT', DEFAULT_TEMPORAL_METRICS_PORT);
  await migrateDatabase(config.DATABASE_URL);
  // Asks the signer (SIGNER_URL) for its public keys: the worker's accounts are the signer's.
  const service = await createWorkerContext(config);
  // Refuses a signer other than the one this database's transfers were created with.
  await checkSignerFingerprint(service.db, service.keyring, 'worker');
  // Refuses circuit files whose SHA-256 is not the SDK's before any transfer can need a proof.
  await service.prover.ready();
  const proverSetup = service.prover.setup();
  if (proverSetup.fallbackReason) logger.warn('proving with snarkjs, about 4x slower than the native prover', { reason: proverSetup.fallbackReason });
  // The workflows it runs set the service's search attributes: refuse a namespace without them (routectl setup).
  const { connection, client } = await connectTemporalClient(config);
  try {
    await assertClusterReady(connection, config.TEMPORAL_NAMESPACE);
  } catch (error) {
    await connection.close();
    throw error;
  }
  const worker = await startTransferWorker({
    temporal: config,
    taskQueue: config.TEMPORAL_TASK_QUEUE,
    deps: service.activityDeps,
    queues: config.WORKER_QUEUES,
    slots: workerSlots(config, proverSetup.concurrency),
    maxCachedWorkflows: config.WORKER_MAX_CACHED_WORKFLOWS,
    logger,
    temporalMetricsAddress: hostPort(config.HOST, temporalMetricsPort),
  });
  const http = await startWorkerHttp({ port: httpPort, host: config.HOST, worker, db: service.db, hotWallets: workerHotWallets(service), logger });
  await ensureBackgroundWorkflows(client, config);
  await connection.close();
  // Operators read encrypted histories through it (docs/operations.md); no token, no endpoint.
  const codec = payloadCodecOf(config);
  const codecEndpoint =
    codec && config.CODEC_AUTH_TOKEN
      ? await startCodecEndpoint({
          codec,
          authToken: config.CODEC_AUTH_TOKEN,
          uiOrigin: config.CODEC_CORS_ORIGIN,
          host: config.CODEC_HOST,
          port: config.CODEC_PORT,
          logger,
        })
      : null;
  logger.info('worker running', {
    http: http.url,
    codecEndpoint: codecEndpoint?.url,
    temporalMetrics: worker.temporalMetricsUrl,
    prover: service.prover.setup(),
    config: describeConfig(config),
  });
  const stops = new StopList(logger);
  stops.add('database pool and prover threads', service.close);
  stops.add('worker (activities in flight finish or are cancelled)', worker.stop);
  stops.add('worker HTTP', http.stop);
  if (codecEndpoint) stops.add('codec endpoint', codecEndpoint.stop);
  onShutdown(logger, () => stops.stopAll());
} catch (error) {
  logger.error(error instanceof ConfigError || error instanceof ClusterNotReadyError ? error.message : 'worker failed to start', { error: String(error) });
  process.exit(1);
}
