import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { NativeConnection, Worker, bundleWorkflowCode, type State, type WorkflowBundleWithSourceMap } from '@temporalio/worker';
import type { LogLevel as TemporalLogLevel, LogMetadata, Logger as TemporalLogger } from '@temporalio/common';
import { createActivities, type ActivityDeps } from '../../activities/index.ts';
import { createLogger, type Logger } from '../logger.ts';
import { activityInterceptors } from '../observability/activityInterceptors.ts';
import { installTemporalRuntime } from '../observability/temporalRuntime.ts';
import { activityKeepalive } from './activityKeepalive.ts';
import { activityCrashPoints } from './crashPoints.ts';

const repoRoot = fileURLToPath(new URL('../..', import.meta.url));
export const workflowsPath = fileURLToPath(new URL('../../workflows/index.ts', import.meta.url));

/** Workflow interceptor modules bundled with the workflow code (routeId on every workflow log line). */
export const workflowInterceptorModules = [fileURLToPath(new URL('../observability/workflowInterceptors.ts', import.meta.url))];

/**
 * Bundles the workflow code (with our workflow interceptors). The bundle is kept in
 * node_modules/.cache/private-route/, named by a hash of every source file it can include (workflows/,
 * src/, the lockfile), so starts and test files after the first reuse it instead of running webpack again.
 * Webpack's output goes to `logger` at debug level; its warnings and errors at warn and error.
 */
export async function bundleWorkflows(opts: { logger?: Logger } = {}): Promise<WorkflowBundleWithSourceMap> {
  const cached = path.join(repoRoot, 'node_modules', '.cache', 'private-route', `workflows-${sourceHash()}.json`);
  try {
    return JSON.parse(await readFile(cached, 'utf8')) as WorkflowBundleWithSourceMap;
  } catch {
    // Not built yet for these sources (or unreadable): build it.
  }
  const bundle = await bundleWorkflowCode({ workflowsPath, workflowInterceptorModules, logger: bundlerLogger(opts.logger ?? createLogger()) });
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
  hash.update(readFileSync(path.join(repoRoot, 'package-lock.json')));
  return hash.digest('hex').slice(0, 16);
}

export interface RunningWorker {
  /** Stops polling, lets running activities finish, and closes the connection. */
  stop(): Promise<void>;
  /** The SDK worker's state: RUNNING while it polls (INITIALIZED, STOPPING, DRAINING, DRAINED, STOPPED, FAILED otherwise). */
  state(): State;
  /** The SDK's own Prometheus endpoint (`temporal_*` metrics), when exported. */
  temporalMetricsUrl?: string;
}

export async function startTransferWorker(opts: {
  address: string;
  namespace: string;
  taskQueue: string;
  deps: ActivityDeps;
  /** Prebuilt workflow code; it must come from bundleWorkflows() to carry the workflow interceptors. */
  workflowBundle?: WorkflowBundleWithSourceMap;
  /** Where the SDK's logs go (also workflow and activity logs), as JSON lines; default: a stdout JSON logger. */
  logger?: Logger;
  /** `host:port` for the SDK's Prometheus exporter; omitted: SDK metrics are not exported. */
  temporalMetricsAddress?: string;
}): Promise<RunningWorker> {
  const logger = opts.logger ?? createLogger();
  // Before the first NativeConnection: the Runtime is configured once per process.
  const runtime = installTemporalRuntime({ logger, metricsBindAddress: opts.temporalMetricsAddress });
  const workflowBundle = opts.workflowBundle ?? (await bundleWorkflows({ logger }));
  const connection = await NativeConnection.connect({ address: opts.address });
  try {
    const worker = await Worker.create({
      connection,
      namespace: opts.namespace,
      taskQueue: opts.taskQueue,
      activities: createActivities(opts.deps),
      workflowBundle,
      interceptors: { activity: [activityKeepalive, activityInterceptors, ...(process.env.DRILL_CRASH_AT ? [activityCrashPoints] : [])] },
      // On stop, activities in flight get this long to finish, then are cancelled; past the force time the
      // worker stops regardless (their retries run after the next start).
      shutdownGraceTime: '10 seconds',
      shutdownForceTime: '15 seconds',
    });
    const running = worker.run();
    return {
      async stop() {
        if (worker.getState() === 'RUNNING') worker.shutdown();
        await running;
        await connection.close();
      },
      state: () => worker.getState(),
      temporalMetricsUrl: runtime.metricsUrl,
    };
  } catch (error) {
    await connection.close();
    throw error;
  }
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
