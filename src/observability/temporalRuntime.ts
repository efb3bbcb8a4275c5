/**
 * The Temporal SDK's process-wide Runtime, installed once with a logger that writes our JSON lines
 * (SDK, worker, workflow and activity logs, and the Rust core's logs, forwarded) and with the SDK's
 * own Prometheus exporter.
 */
import type { LogLevel as TemporalLogLevel, LogMetadata, Logger as TemporalLogger } from '@temporalio/common';
import { LogTimestamp, Runtime } from '@temporalio/worker';
import type { Logger } from '../logger.ts';
import { redactUrls } from '../redact.ts';
import { routeIdOfWorkflow } from './routeId.ts';

/** Production default port of the SDK's Prometheus exporter (env TEMPORAL_METRICS_PORT). */
export const DEFAULT_TEMPORAL_METRICS_PORT = 9465;

export interface TemporalRuntimeOptions {
  logger: Logger;
  /** `host:port` of the SDK's Prometheus exporter (served on `/metrics`); omitted: no SDK metrics. */
  metricsBindAddress?: string;
  /** Lowest level of the Rust core's own log events that are forwarded (default WARN). */
  coreLogLevel?: Exclude<TemporalLogLevel, 'TRACE'>;
}

export interface TemporalRuntimeInfo {
  /** false when a Runtime was already running in this process: its options stay, only the log sink changes. */
  installed: boolean;
  /** Where the SDK's Prometheus exporter listens (from the install that is in effect), if any. */
  metricsUrl?: string;
}

/** Where the installed Runtime's logger writes; replaced by every call so the latest stack of a test process gets the lines. */
let sink: Logger | undefined;
let installedMetricsUrl: string | undefined;
let installedByUs = false;

/**
 * Installs the Temporal Runtime unless one is running already in this process (the Runtime is a singleton
 * and can be installed only once; it shuts itself down when its last worker and connection close, and a
 * later call installs it again). Must run before the first NativeConnection or Worker is created.
 */
export function installTemporalRuntime(opts: TemporalRuntimeOptions): TemporalRuntimeInfo {
  sink = opts.logger;
  if (Runtime._instance !== undefined) {
    if (!installedByUs) opts.logger.warn('Temporal Runtime was created before installTemporalRuntime: SDK logs and metrics keep its settings');
    return { installed: false, metricsUrl: installedByUs ? installedMetricsUrl : undefined };
  }
  Runtime.install({
    logger: new ForwardingLogger(() => sink),
    // Our own signal handling (src/shutdown.ts) drains the worker; the SDK must not race it.
    shutdownSignals: [],
    telemetryOptions: {
      logging: { forward: {}, filter: { core: opts.coreLogLevel ?? 'WARN', other: 'ERROR' } },
      ...(opts.metricsBindAddress ? { metrics: { prometheus: { bindAddress: opts.metricsBindAddress, useSecondsForDurations: true } } } : {}),
    },
  });
  installedByUs = true;
  installedMetricsUrl = opts.metricsBindAddress ? `http://${opts.metricsBindAddress}/metrics` : undefined;
  return { installed: true, metricsUrl: installedMetricsUrl };
}

/**
 * Temporal's Logger interface over ours. TRACE is dropped. Every line about a route's workflow carries
 * `routeId` (see routeIdOfWorkflow): the interceptors add it to workflow and activity lines, this adds it
 * to the worker's own lines about a workflow or activity task that no interceptor sees.
 */
export class ForwardingLogger implements TemporalLogger {
  constructor(private readonly target: () => Logger | undefined) {}

  log(level: TemporalLogLevel, message: string, meta: LogMetadata = {}): void {
    const logger = this.target();
    if (!logger || level === 'TRACE') return;
    const fields: Record<string, unknown> = {};
    // The SDK's own timestamp (ns since epoch): forwarded lines are buffered, so it is the true time.
    const stamp = meta[LogTimestamp];
    if (typeof stamp === 'bigint') fields.time = new Date(Number(stamp / 1_000_000n)).toISOString();
    // The SDK logs whole errors ('Activity failed' carries viem's message, metaMessages and url): an RPC URL's
    // path or query can hold the provider's API key, so every URL in them is cut to its origin.
    Object.assign(fields, withUrlsRedacted(meta) as LogMetadata);
    if (fields.routeId === undefined && typeof meta.workflowId === 'string') {
      const routeId = routeIdOfWorkflow(meta.workflowId);
      if (routeId !== undefined) fields.routeId = routeId;
    }
    // Never log task tokens (they authorize completing the activity); the ids identify it.
    delete fields.taskToken;
    // The waits and proofs queues run activities only, by design (src/temporal/worker.ts): not worth a warning.
    const expected = message.startsWith('No workflows registered');
    const method = level === 'DEBUG' || expected ? 'debug' : level === 'INFO' ? 'info' : level === 'WARN' ? 'warn' : 'error';
    logger[method](message, fields);
  }
  trace(message: string, meta?: LogMetadata): void {
    this.log('TRACE', message, meta);
  }
  debug(message: string, meta?: LogMetadata): void {
    this.log('DEBUG', message, meta);
  }
  info(message: string, meta?: LogMetadata): void {
    this.log('INFO', message, meta);
  }
  warn(message: string, meta?: LogMetadata): void {
    this.log('WARN', message, meta);
  }
  error(message: string, meta?: LogMetadata): void {
    this.log('ERROR', message, meta);
  }
}

/** A copy of `value` with redactUrls applied to every string in it; errors become plain objects (name, message, stack, own fields, cause). */
export function withUrlsRedacted(value: unknown, seen = new WeakSet<object>()): unknown {
  if (typeof value === 'string') return redactUrls(value);
  if (typeof value !== 'object' || value === null) return value;
  if (seen.has(value)) return '[Circular]';
  seen.add(value);
  if (Array.isArray(value)) return value.map((item) => withUrlsRedacted(item, seen));
  let source: Record<string, unknown>;
  if (value instanceof Error) source = { ...value, name: value.name, message: value.message, stack: value.stack, cause: (value as { cause?: unknown }).cause };
  else if (Object.getPrototypeOf(value) === Object.prototype || Object.getPrototypeOf(value) === null) source = value as Record<string, unknown>;
  else return value; // Map, Date, class instances: as the logger writes them
  return Object.fromEntries(
    Object.entries(source)
      .filter(([, v]) => v !== undefined)
      .map(([k, v]) => [k, withUrlsRedacted(v, seen)]),
  );
}
