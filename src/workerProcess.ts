import type { WorkflowBundleWithSourceMap } from '@temporalio/worker';
import { checkSignerFingerprint } from './accounts/signerFingerprint.ts';
import type { Config } from './config.ts';
import type { Logger } from './logger.ts';
import { hostPort, type HttpServer } from './observability/http.ts';
import { urlOrigin } from './redact.ts';
import { startTracing, stopTracing } from './observability/tracing.ts';
import { startWorkerHttp } from './observability/workerHttp.ts';
import { workerHotWallets, type WorkerContext } from './runtime.ts';
import { StopList } from './shutdown.ts';
import { ensureBackgroundWorkflows } from './temporal/backgroundWorkflows.ts';
import { assertClusterReady } from './temporal/clusterSetup.ts';
import { payloadCodecOf } from './temporal/codec.ts';
import { startCodecEndpoint } from './temporal/codecServer.ts';
import { connectTemporalClient } from './temporal/connection.ts';
import { startTransferWorker, workerSlots } from './temporal/worker.ts';

/** What differs between the production worker (src/worker.ts) and the local stack's in-process one. */
export interface WorkerProcessOptions {
  /** Port of the worker's /healthz, /readyz and /metrics (0: a free port). */
  httpPort: number;
  /** Port of the Temporal SDK's own Prometheus exporter; omitted: the SDK's metrics are not exported. */
  temporalMetricsPort?: number;
  /** Workflow code bundled beforehand (tests bundle it once for many stacks); default: the build's, or bundled at start. */
  workflowBundle?: WorkflowBundleWithSourceMap;
}

export interface RunningWorkerProcess {
  /** The worker's /healthz, /readyz and /metrics. */
  httpUrl: string;
  /** The Temporal SDK's Prometheus endpoint, when exported. */
  temporalMetricsUrl?: string;
  /** The worker deployment version it polls as (TEMPORAL_WORKER_DEPLOYMENT); absent when unversioned. */
  version?: { deployment: string; buildId: string };
  /** The codec endpoint operators decrypt histories through, when CODEC_AUTH_TOKEN is set. */
  codecEndpointUrl?: string;
  /** Stops the codec endpoint, the HTTP endpoints, then the worker (activities in flight finish or are cancelled). */
  stop(): Promise<void>;
}

/**
 * Starts the worker of a process, after refusing to run with a wrong signer, tampered circuit files or a Temporal
 * namespace without the service's search attributes: the transfer worker, its HTTP endpoints, the background
 * workflows (watchers, stray scanner) and, when configured, the codec endpoint. The caller owns `context` and
 * closes it after `stop()`.
 */
export async function startWorkerProcess(context: WorkerContext, logger: Logger, options: WorkerProcessOptions): Promise<RunningWorkerProcess> {
  const { config } = context;
  // The signer first: a wrong one is refused before the prover spends seconds starting its threads.
  await checkSignerFingerprint(context.db, context.keyring, 'worker');
  // Refuses circuit files whose SHA-256 is not the SDK's before any transfer can need a proof.
  await context.prover.ready();
  const prover = context.prover.setup();
  logger.info(`prover: ${prover.backend}, ${prover.concurrency} at once${prover.fallbackReason ? ` (${prover.fallbackReason})` : ''}`);
  if (prover.fallbackReason) logger.warn('proving with snarkjs, about 4x slower than the native prover', { reason: prover.fallbackReason });

  const { connection, client } = await connectTemporalClient(config);
  const stops = new StopList(logger);
  // Activity and workflow spans when an OTLP endpoint is configured; stopped last, so the final spans are sent.
  const tracing = startTracing(config, 'worker');
  if (tracing) {
    logger.info('tracing on', { serviceName: tracing.serviceName, endpoint: urlOrigin(tracing.endpoint) });
    stops.add('traces (the last spans are sent)', () => stopTracing(tracing, logger));
  }
  try {
    // The workflows it runs set the service's search attributes: refuse a namespace without them (routectl setup).
    await assertClusterReady(connection, config.TEMPORAL_NAMESPACE);
    const worker = await startTransferWorker({
      temporal: config,
      taskQueue: config.TEMPORAL_TASK_QUEUE,
      deps: context.activityDeps,
      queues: config.WORKER_QUEUES,
      slots: workerSlots(config, prover.concurrency),
      maxCachedWorkflows: config.WORKER_MAX_CACHED_WORKFLOWS,
      workflowBundle: options.workflowBundle,
      logger,
      temporalMetricsAddress: options.temporalMetricsPort === undefined ? undefined : hostPort(config.HOST, options.temporalMetricsPort),
      tracing,
      versioning: { deployment: config.TEMPORAL_WORKER_DEPLOYMENT, buildId: config.TEMPORAL_WORKER_BUILD_ID },
    });
    stops.add('worker (activities in flight finish or are cancelled)', worker.stop);
    const http = await startWorkerHttp({
      port: options.httpPort,
      host: config.HOST,
      worker,
      db: context.db,
      hotWallets: workerHotWallets(context),
      logger,
    });
    stops.add('worker HTTP', http.stop);
    await ensureBackgroundWorkflows(client, config);
    const codecEndpoint = await startConfiguredCodecEndpoint(config, logger);
    if (codecEndpoint) stops.add('codec endpoint', codecEndpoint.stop);
    return {
      httpUrl: http.url,
      temporalMetricsUrl: worker.temporalMetricsUrl,
      codecEndpointUrl: codecEndpoint?.url,
      version: worker.version,
      stop: () => stops.stopAll(),
    };
  } catch (error) {
    await stops.stopAll();
    throw error;
  } finally {
    await connection.close();
  }
}

/** Operators read encrypted histories through it (docs/operations.md); no token, no endpoint. */
async function startConfiguredCodecEndpoint(config: Config, logger: Logger): Promise<HttpServer | null> {
  const codec = payloadCodecOf(config);
  if (!codec || !config.CODEC_AUTH_TOKEN) return null;
  return startCodecEndpoint({
    codec,
    authToken: config.CODEC_AUTH_TOKEN,
    uiOrigin: config.CODEC_CORS_ORIGIN,
    host: config.CODEC_HOST,
    port: config.CODEC_PORT,
    logger,
  });
}
