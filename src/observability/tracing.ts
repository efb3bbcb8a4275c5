/**
 * OpenTelemetry traces (docs/observability.md, "Traces"): off unless an OTLP/HTTP endpoint is configured
 * (OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, or OTEL_EXPORTER_OTLP_ENDPOINT + `/v1/traces`). One trace follows a transfer
 * from the API call that created it into Temporal: the API's server span, `StartWorkflow:<type>` (the Temporal
 * client's interceptor), the workflow's `RunWorkflow:<type>` and `StartActivity:<type>` spans (the workflow
 * interceptors, exported by the worker through a sink) and each `RunActivity:<type>`.
 *
 * Each part of a process (the API, the worker) has a tracer provider of its own, named by OTEL_SERVICE_NAME or
 * `private-route-api` / `private-route-worker`, and hands its tracer to its interceptors explicitly: the local stack runs
 * both in one process. Only the context manager (the active span follows async calls) and the W3C trace-context
 * propagator (how a span travels in Temporal headers) are process-wide.
 *
 * Spans go to a collector outside the service, so what leaves is filtered here, whatever an instrumentation
 * recorded: attributes only from an allowlist (the Temporal sink copies the whole WorkflowInfo, search attributes
 * and memo included, into workflow spans), and no error text: an error's message can name an address or an amount,
 * so a failed span keeps its error status and the exception's type; the message is in the logs, which carry the
 * span's trace_id.
 */
import { context, propagation, type Tracer } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { type ExportResult, W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { Resource } from '@opentelemetry/resources';
import { BasicTracerProvider, BatchSpanProcessor, type ReadableSpan, type SpanExporter, type SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { ATTR_SERVICE_NAME } from '@opentelemetry/semantic-conventions';
import { makeWorkflowExporter, OpenTelemetryWorkflowClientInterceptor } from '@temporalio/interceptors-opentelemetry';
import type { Config } from '../config.ts';
import type { Logger } from '../logger.ts';
import { redactUrls } from '../redact.ts';

export type TracingConfig = Pick<Config, 'OTEL_EXPORTER_OTLP_ENDPOINT' | 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT' | 'OTEL_SERVICE_NAME'>;

/** The process part a tracer provider serves; it names the service when OTEL_SERVICE_NAME does not. */
export type TracedComponent = 'api' | 'worker';

export interface Tracing {
  serviceName: string;
  /** Where spans are sent (OTLP/HTTP, JSON). */
  endpoint: string;
  tracer: Tracer;
  /** For the worker's workflow span sink (spans made inside the workflow sandbox). */
  resource: Resource;
  spanProcessor: SpanProcessor;
  /** Sends the spans still buffered, then stops; call after the part it traces has stopped. */
  shutdown(): Promise<void>;
}

/** The traces endpoint, as the OpenTelemetry specification derives it: the traces variable, else the base one + `/v1/traces`. */
export function tracesEndpoint(config: TracingConfig): string | undefined {
  if (config.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) return config.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT;
  if (config.OTEL_EXPORTER_OTLP_ENDPOINT) return `${config.OTEL_EXPORTER_OTLP_ENDPOINT.replace(/\/+$/, '')}/v1/traces`;
  return undefined;
}

/** Starts exporting `component`'s spans when an endpoint is configured; undefined (tracing off) otherwise. */
export function startTracing(config: TracingConfig, component: TracedComponent): Tracing | undefined {
  const endpoint = tracesEndpoint(config);
  if (!endpoint) return undefined;
  installTracingGlobals();
  const serviceName = config.OTEL_SERVICE_NAME ?? `private-route-${component}`;
  const resource = new Resource({ [ATTR_SERVICE_NAME]: serviceName });
  // OTEL_EXPORTER_OTLP_HEADERS (a collector's credentials) and OTEL_BSP_* are read by the SDK from the environment.
  const spanProcessor = new BatchSpanProcessor(new PrivateSpanExporter(new OTLPTraceExporter({ url: endpoint })));
  const provider = new BasicTracerProvider({ resource, spanProcessors: [spanProcessor] });
  return {
    serviceName,
    endpoint,
    tracer: provider.getTracer('private-route'),
    resource,
    spanProcessor,
    shutdown: () => provider.shutdown(),
  };
}

/** Flushes the spans still buffered; a collector that does not answer does not fail the stop. */
export async function stopTracing(tracing: Tracing | undefined, logger: Logger): Promise<void> {
  await tracing?.shutdown().catch((error: unknown) => logger.warn('tracing: the last spans were not sent', { error: String(error) }));
}

let globalsInstalled = false;

/** The process-wide parts, once: the active span follows async calls, and travels in W3C `traceparent` headers. */
function installTracingGlobals(): void {
  if (globalsInstalled) return;
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  globalsInstalled = true;
}

/** The Temporal client's interceptors: starting (or signalling) a workflow carries the active span in its headers. */
export function temporalClientInterceptors(tracing: Tracing | undefined) {
  return tracing ? { workflow: [new OpenTelemetryWorkflowClientInterceptor({ tracer: tracing.tracer })] } : undefined;
}

/**
 * The sink the workflow interceptors (bundled with the workflow code, src/temporal/worker.ts) send their spans
 * through. Tracing off, it drops them: the bundle is the same either way, and a sink the workflows call must exist.
 */
export function workflowSpanSinks(tracing: Tracing | undefined) {
  return { exporter: tracing ? makeWorkflowExporter(tracing.spanProcessor, tracing.resource) : { export: { fn: () => {} } } };
}

/**
 * Span attributes that may leave the service. Ours: the HTTP ones (src/api/requestObservability.ts). Temporal's:
 * workflow, run and activity ids (a workflow id is a routeId, which the logs carry too), and of the WorkflowInfo the
 * sink adds, the type, task queue, namespace and attempt. Exception events keep their type only.
 */
const ALLOWED_ATTRIBUTES = new Set([
  'http.request.method',
  'http.route',
  'http.response.status_code',
  'request.id',
  'temporalWorkflowId',
  'temporalActivityId',
  'temporalUpdateId',
  'run_id',
  'workflowId',
  'runId',
  'workflowType',
  'taskQueue',
  'namespace',
  'attempt',
  'exception.type',
]);

/** Addresses, hashes and keys (0x and 40 or more hex digits) and what URLs carry after their origin. */
export function scrubText(text: string): string {
  return redactUrls(text).replace(/0x[0-9a-fA-F]{40,}/g, '0x…');
}

function scrubAttributes<T extends Record<string, unknown>>(attributes: T): T {
  const kept: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(attributes)) {
    if (!ALLOWED_ATTRIBUTES.has(key) || value === undefined) continue;
    kept[key] = typeof value === 'string' ? scrubText(value) : value;
  }
  return kept as T;
}

/** What a span may show outside: allowlisted attributes, a scrubbed name, the status without its message. */
export function privateSpan(span: ReadableSpan): ReadableSpan {
  const attributes = scrubAttributes(span.attributes);
  return {
    name: scrubText(span.name),
    kind: span.kind,
    spanContext: () => span.spanContext(),
    parentSpanId: span.parentSpanId,
    startTime: span.startTime,
    endTime: span.endTime,
    status: { code: span.status.code },
    attributes,
    links: span.links.map((link) => ({ ...link, attributes: link.attributes && scrubAttributes(link.attributes) })),
    events: span.events.map((event) => ({ ...event, attributes: event.attributes && scrubAttributes(event.attributes) })),
    duration: span.duration,
    ended: span.ended,
    resource: span.resource,
    instrumentationLibrary: span.instrumentationLibrary,
    droppedAttributesCount: span.droppedAttributesCount + Object.keys(span.attributes).length - Object.keys(attributes).length,
    droppedEventsCount: span.droppedEventsCount,
    droppedLinksCount: span.droppedLinksCount,
  };
}

/** Hands the exporter the private copy of every span. */
class PrivateSpanExporter implements SpanExporter {
  constructor(private readonly inner: SpanExporter) {}

  export(spans: ReadableSpan[], resultCallback: (result: ExportResult) => void): void {
    this.inner.export(spans.map(privateSpan), resultCallback);
  }

  shutdown(): Promise<void> {
    return this.inner.shutdown();
  }

  forceFlush(): Promise<void> {
    return this.inner.forceFlush?.() ?? Promise.resolve();
  }
}
