/** Production entry point of the Temporal worker that runs transfer workflows and their activities. */
import { ConfigError, describeConfig, loadConfig } from './config.ts';
import { migrateDatabase } from './db/client.ts';
import { createLogger } from './logger.ts';
import { createServiceContext } from './runtime.ts';
import { onShutdown } from './shutdown.ts';
import { startTransferWorker } from './temporal/worker.ts';

const logger = createLogger({ level: (process.env.LOG_LEVEL as 'info' | undefined) ?? 'info', fields: { component: 'worker' } });

try {
  const config = loadConfig();
  await migrateDatabase(config.DATABASE_URL);
  const service = createServiceContext(config);
  const worker = await startTransferWorker({
    address: config.TEMPORAL_ADDRESS,
    namespace: config.TEMPORAL_NAMESPACE,
    taskQueue: config.TEMPORAL_TASK_QUEUE,
    deps: service.activityDeps,
  });
  logger.info('worker running', { config: describeConfig(config) });
  onShutdown(logger, async () => {
    await worker.stop();
    await service.close();
  });
} catch (error) {
  logger.error(error instanceof ConfigError ? error.message : 'worker failed to start', { error: String(error) });
  process.exit(1);
}
