import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { WorkflowNotFoundError, type Client, type Connection } from '@temporalio/client';
import { OpenTelemetryActivityInboundInterceptor, OpenTelemetryActivityOutboundInterceptor } from '@temporalio/interceptors-opentelemetry';
import {
  NativeConnection,
  Worker,
  bundleWorkflowCode,
  type ActivityInterceptorsFactory,
  type State,
  type WorkflowBundleWithSourceMap,
} from '@temporalio/worker';
import type { LogLevel as TemporalLogLevel, LogMetadata, SignalDefinition, Logger as TemporalLogger } from '@temporalio/common';
import { createActivities, type ActivityDeps, type WorkflowNotifier } from '../../activities/index.ts';
import { startStalledWebhooks } from '../../activities/webhooks.ts';
import { depositObservedSignal, privacyObservedSignal } from '../../workflows/definitions.ts';
import { taskQueues } from '../../workflows/types.ts';
import type { Config } from '../config.ts';
import { createLogger, type Logger } from '../logger.ts';
import { activityInterceptors } from '../observability/activityInterceptors.ts';
import { installTemporalRuntime } from '../observability/temporalRuntime.ts';
import { temporalClientInterceptors, workflowSpanSinks, type Tracing } from '../observability/tracing.ts';
import type { WebhookSettings, WebhookStarter } from '../webhooks/settings.ts';
import { temporalWebhookStarter } from '../webhooks/starter.ts';
import { activityErrors } from './activityErrors.ts';
import { describeDeployment, type VersioningSettings, workerDeploymentOptions } from './workerVersioning.ts';
import { activityKeepalive } from './activityKeepalive.ts';
import { activityCrashPoints } from './crashPoints.ts';
import { failureConverterPath, payloadCodecOf, temporalDataConverter } from './codec.ts';
import { connectTemporalClient, temporalConnectionOptions, type TemporalClientConfig } from './connection.ts';

const repoRoot = fileURLToPath(new URL('../..', import.meta.url));
/** `.ts` when running from the sources, `.js` from the build (dist/). */
const moduleExtension = path.extname(fileURLToPath(import.meta.url));
export const workflowsPath = fileURLToPath(new URL(`../../workflows/index${moduleExtension}`, import.meta.url));

/**
 * Workflow interceptor modules bundled with the workflow code: routeId on every workflow log line, and the workflow's
 * span in a trace (src/observability/workflowTracing.ts; the worker gives it a sink, workflowSpanSinks).
 */
export const workflowInterceptorModules = [fileURLToPath(new URL(`../observability/workflowInterceptors${moduleExtension}`, import.meta.url))];

/** The workflow bundle `npm run build` writes at the root of dist/ (scripts/build.ts); a worker run from the build loads it. */
export const PREBUILT_WORKFLOW_BUNDLE = 'workflow-bundle.json';

/**
 * Bundles the workflow code (with our workflow interceptors). The bundle is kept in
 * node_modules/.cache/private-route/, named by a hash of every source file it can include (workflows/,
 * src/, the lockfile), so starts and test files after the first reuse it instead of running webpack again.
 * Webpack's output goes to `logger` at debug level; its warnings and errors at warn and error.
 */
export async function bundleWorkflows(opts: { logger?: Logger } = {}): Promise<WorkflowBundleWithSourceMap> {
  // The build's own bundle, made from the same sources as the code beside it.
  const prebuilt = path.join(repoRoot, PREBUILT_WORKFLOW_BUNDLE);
  if (moduleExtension === '.js' && existsSync(prebuilt)) return JSON.parse(await readFile(prebuilt, 'utf8')) as WorkflowBundleWithSourceMap;
  const cached = path.join(repoRoot, 'node_modules', '.cache', 'private-route', `workflows-${sourceHash()}.json`);
  try {
    return JSON.parse(await readFile(cached, 'utf8')) as WorkflowBundleWithSourceMap;
  } catch {
    // Not built yet for these sources (or unreadable): build it.
  }
  const bundle = await buildWorkflowBundle(opts.logger ?? createLogger());
  try {
    await mkdir(path.dirname(cached), { recursive: true });
    // Write-then-rename: a reader in another process never sees half a bundle.
    const partial = `${cached}.${process.pid}.tmp`;
    await writeFile(partial, JSON.stringify(bundle));
    await rename(partial, cached);
    // Bundles of earlier sources are never read again.
    for (const old of await readdir(path.dirname(cached))) {
      if (/^workflows-[0-9a-f]{16}\.json$/.test(old) && old !== path.basename(cached)) await rm(path.join(path.dirname(cached), old), { force: true });
    }
  } catch {
    // A read-only checkout still works; it only bundles every time.
  }
  return bundle;
}

/** Runs webpack over the workflow code with our interceptors and failure converter (no cache; `npm run build` uses it too). */
export function buildWorkflowBundle(logger: Logger): Promise<WorkflowBundleWithSourceMap> {
  return bundleWorkflowCode({ workflowsPath, workflowInterceptorModules, failureConverterPath, logger: bundlerLogger(logger) });
}

/** A hash of everything the workflow bundle may contain. */
function sourceHash(): string {
  const hash = createHash('sha256');
  const visit = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      const file = path.join(dir, entry.name);
      if (entry.isDirectory()) visit(file);
      else if (/\.(ts|mjs|js|json)$/.test(entry.name)) hash.update(file).update(readFileSync(file));
    }
  };
  for (const dir of ['workflows', 'src']) visit(path.join(repoRoot, dir));
  // The bundler's options are part of what it builds.
  hash.update(JSON.stringify({ workflowInterceptorModules, failureConverterPath }));
  hash.update(readFileSync(path.join(repoRoot, 'package-lock.json')));
  return hash.digest('hex').slice(0, 16);
}

export interface RunningWorker {
  /** Stops polling, lets running activities finish, and closes the connection. */
  stop(): Promise<void>;
  /**
   * The SDK workers' state: RUNNING while they all poll (INITIALIZED, STOPPING, DRAINING, DRAINED, STOPPED,
   * FAILED otherwise: the first one that is not RUNNING).
   */
  state(): State;
  /** The SDK's own Prometheus endpoint (`temporal_*` metrics), when exported. */
  temporalMetricsUrl?: string;
  /** The worker deployment version it polls as; absent for an unversioned worker. */
  version?: { deployment: string; buildId: string };
}

export type WorkerQueue = 'steps' | 'waits' | 'proofs';
export const WORKER_QUEUES: readonly WorkerQueue[] = ['steps', 'waits', 'proofs'];

/** Activity slots per task queue (how many activities of that queue this process runs at once). */
export interface WorkerSlots {
  steps: number;
  waits: number;
  proofs: number;
}

export const DEFAULT_WORKER_SLOTS: WorkerSlots = { steps: 100, waits: 1_000, proofs: 2 };

/**
 * The slots of configuration. Proofs: one more withdrawal than the prover proves at once (`proofConcurrency`, its
 * setup's once it is ready), so that one's relay and mining overlap the next one's proof (the prover queues the rest).
 */
export function workerSlots(config: Pick<Config, 'WORKER_STEP_SLOTS' | 'WORKER_WAIT_SLOTS'>, proofConcurrency: number): WorkerSlots {
  return { steps: config.WORKER_STEP_SLOTS, waits: config.WORKER_WAIT_SLOTS, proofs: proofConcurrency + 1 };
}

/**
 * Polls the deployment's task queues (taskQueues in workflows/types.ts): `steps` runs the workflows and the
 * short steps, `waits` the long waits, `proofs` the pool withdrawals. Each queue has its own slots, so a
 * thousand waits never keep a money-moving step from running. `queues` picks which this process polls
 * (all by default; a proof-only worker scales proving out).
 */
export async function startTransferWorker(opts: {
  /** Address, TLS or API key, namespace and payload codec (src/temporal/connection.ts). */
  temporal: TemporalClientConfig;
  taskQueue: string;
  deps: ActivityDeps;
  queues?: readonly WorkerQueue[];
  slots?: Partial<WorkerSlots>;
  /**
   * Workflows kept in memory between their tasks (WORKER_MAX_CACHED_WORKFLOWS). One evicted from the cache is
   * replayed from its history at its next signal or timer (a few milliseconds for a transfer's ~70 events).
   */
  maxCachedWorkflows?: number;
  /** Prebuilt workflow code; it must come from bundleWorkflows() to carry the workflow interceptors. */
  workflowBundle?: WorkflowBundleWithSourceMap;
  /** Where the SDK's logs go (also workflow and activity logs), as JSON lines; default: a stdout JSON logger. */
  logger?: Logger;
  /** `host:port` for the SDK's Prometheus exporter; omitted: SDK metrics are not exported. */
  temporalMetricsAddress?: string;
  /** With tracing on (src/observability/tracing.ts): activity and workflow spans, exported; omitted: none. */
  tracing?: Tracing;
  /** TEMPORAL_WORKER_DEPLOYMENT / _BUILD_ID: poll as a version of a worker deployment (src/temporal/workerVersioning.ts). */
  versioning?: VersioningSettings;
}): Promise<RunningWorker> {
  const logger = opts.logger ?? createLogger();
  // Before the first NativeConnection: the Runtime is configured once per process.
  const runtime = installTemporalRuntime({ logger, metricsBindAddress: opts.temporalMetricsAddress });
  const queues = opts.queues ?? WORKER_QUEUES;
  const slots = { ...DEFAULT_WORKER_SLOTS, ...opts.slots };
  const names = taskQueues(opts.taskQueue);
  const workflowBundle = queues.includes('steps') ? (opts.workflowBundle ?? (await bundleWorkflows({ logger }))) : undefined;
  // A versioned worker's build id is its workflow code's hash, also on a proof-only worker (its activities follow the
  // version of the workflows that schedule them).
  const versioned = opts.versioning?.deployment !== undefined && opts.versioning.buildId === undefined;
  const workerDeployment = workerDeploymentOptions(
    opts.versioning ?? {},
    (versioned ? (workflowBundle ?? (await bundleWorkflows({ logger }))) : workflowBundle)?.code,
  );
  const namespace = opts.temporal.TEMPORAL_NAMESPACE;
  const dataConverter = temporalDataConverter(payloadCodecOf(opts.temporal));
  const connection = await NativeConnection.connect(temporalConnectionOptions(opts.temporal));
  // The deposit watcher signals transfer workflows through a client of its own.
  const { connection: clientConnection, client } = await connectTemporalClient(opts.temporal, temporalClientInterceptors(opts.tracing)).catch(
    async (error: unknown) => {
      await connection.close();
      throw error;
    },
  );
  try {
    const webhookStarter = opts.deps.webhooks ? temporalWebhookStarter(client, names.steps, opts.deps.webhooks) : undefined;
    const activities = createActivities({ ...opts.deps, notifier: temporalNotifier(client), webhookStarter });
    // activityErrors first: it translates whatever the others let through (src/failures.ts). The span (tracing on) then
    // covers the rest of the execution.
    const interceptors = {
      activity: [
        activityErrors,
        ...(opts.tracing ? [activityTracing(opts.tracing)] : []),
        activityKeepalive,
        activityInterceptors,
        ...(process.env.DRILL_CRASH_AT ? [activityCrashPoints] : []),
      ],
    };
    // The workflow interceptors' spans leave the sandbox through this sink.
    const sinks = workflowSpanSinks(opts.tracing);
    const workers = await Promise.all(
      queues.map((queue) =>
        Worker.create({
          connection,
          namespace,
          dataConverter,
          taskQueue: names[queue],
          activities,
          interceptors,
          maxConcurrentActivityTaskExecutions: slots[queue],
          ...(workerDeployment && { workerDeploymentOptions: workerDeployment }),
          // Workflows run on the steps queue only.
          ...(queue === 'steps' && { workflowBundle, maxCachedWorkflows: opts.maxCachedWorkflows, sinks }),
          // On stop, activities in flight get this long to finish, then are cancelled; past the force time the
          // worker stops regardless (their retries run after the next start). The waits (watchers run for
          // minutes, fills poll) only read and resume where they stopped: they are cancelled almost at once.
          shutdownGraceTime: queue === 'waits' ? '2 seconds' : '10 seconds',
          shutdownForceTime: '15 seconds',
        }),
      ),
    );
    const running = workers.map((worker) => worker.run());
    if (workerDeployment) await warnUnlessCurrent(clientConnection, namespace, workerDeployment.version, logger);
    const stopSweep =
      webhookStarter && opts.deps.webhooks && queues.includes('steps')
        ? sweepStalledWebhooks(opts.deps.db, webhookStarter, opts.deps.webhooks, logger)
        : undefined;
    return {
      async stop() {
        stopSweep?.();
        for (const worker of workers) if (worker.getState() === 'RUNNING') worker.shutdown();
        const stopped = await Promise.allSettled(running);
        await clientConnection.close();
        await connection.close();
        for (const result of stopped) if (result.status === 'rejected') throw result.reason;
      },
      state: () => workers.map((worker) => worker.getState()).find((state) => state !== 'RUNNING') ?? 'RUNNING',
      temporalMetricsUrl: runtime.metricsUrl,
      ...(workerDeployment && { version: { deployment: workerDeployment.version.deploymentName, buildId: workerDeployment.version.buildId } }),
    };
  } catch (error) {
    await clientConnection.close();
    await connection.close();
    throw error;
  }
}

/** A `RunActivity:<type>` span per activity execution, the child of the workflow's `StartActivity:<type>`. */
function activityTracing(tracing: Tracing): ActivityInterceptorsFactory {
  return (ctx) => ({
    inbound: new OpenTelemetryActivityInboundInterceptor(ctx, { tracer: tracing.tracer }),
    outbound: new OpenTelemetryActivityOutboundInterceptor(ctx),
  });
}

const WEBHOOK_SWEEP_INTERVAL_MS = 60_000;

/** Every minute, starts the webhook deliveries whose start failed when their status was written (activities/webhooks.ts). */
function sweepStalledWebhooks(db: ActivityDeps['db'], starter: WebhookStarter, settings: WebhookSettings, logger: Logger): () => void {
  // Past its deliverAfter, the random delay and a minute more, a delivery with no attempt has no workflow (or one the
  // start refuses).
  const stalledAfterSeconds = settings.maxDelaySeconds + 60;
  let sweeping = false;
  const timer = setInterval(() => {
    if (sweeping) return;
    sweeping = true;
    startStalledWebhooks({ db, webhookStarter: starter }, { stalledAfterSeconds })
      .then((count) => {
        if (count > 0) logger.info('webhook sweep: started stalled deliveries (a running one is left alone)', { count });
      })
      .catch((error: unknown) => logger.warn('webhook sweep failed; it runs again in a minute', { error: String(error) }))
      .finally(() => {
        sweeping = false;
      });
  }, WEBHOOK_SWEEP_INTERVAL_MS);
  timer.unref();
  return () => clearInterval(timer);
}

/** Signals transfer workflows; one that is no longer running has nothing to be told. */
function temporalNotifier(client: Client): WorkflowNotifier {
  const signal = async <T>(routeId: string, definition: SignalDefinition<[T]>, observation: T) => {
    try {
      await client.workflow.getHandle(routeId).signal(definition, observation);
    } catch (error) {
      if (!(error instanceof WorkflowNotFoundError)) throw error;
    }
  };
  return {
    depositObserved: (routeId, observation) => signal(routeId, depositObservedSignal, observation),
    privacyObserved: (routeId, observation) => signal(routeId, privacyObservedSignal, observation),
  };
}

/** Temporal's Logger for the workflow bundler: webpack's (multi-line) report is debug detail. */
function bundlerLogger(logger: Logger): TemporalLogger {
  const log = (level: TemporalLogLevel, message: string, meta?: LogMetadata) => {
    const fields = { sdkComponent: 'worker', ...meta };
    if (level === 'ERROR') logger.error(message, fields);
    else if (level === 'WARN') logger.warn(message, fields);
    else logger.debug(message, fields);
  };
  return {
    log,
    trace: () => {},
    debug: (message, meta) => log('DEBUG', message, meta),
    info: (message, meta) => log('INFO', message, meta),
    warn: (message, meta) => log('WARN', message, meta),
    error: (message, meta) => log('ERROR', message, meta),
  };
}

/** A worker whose version is not the deployment's current one gets no workflow task: it says so, and what to run. */
async function warnUnlessCurrent(connection: Connection, namespace: string, version: { deploymentName: string; buildId: string }, logger: Logger) {
  const deployment = await describeDeployment(connection, namespace, version.deploymentName).catch(() => null);
  const current = deployment?.current ?? null;
  if (current === version.buildId) return;
  logger.warn(
    current === null
      ? `no current version of worker deployment "${version.deploymentName}": workflow tasks wait until \`routectl workers promote ${version.buildId}\``
      : `this worker is version ${version.buildId} of "${version.deploymentName}", the current one is ${current}: it gets workflow tasks once \`routectl workers promote ${version.buildId}\``,
    { deployment: version.deploymentName, buildId: version.buildId, current },
  );
}
