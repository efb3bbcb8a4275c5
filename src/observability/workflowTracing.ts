/**
 * The workflow's part of a trace (docs/observability.md, "Traces"), bundled into the workflow code: runs in the
 * workflow sandbox, so it imports only @temporalio/workflow (and types).
 *
 * A workflow run is one span, `RunWorkflow:<type>`, the child of the span that started it (the API's
 * `StartWorkflow:<type>`, carried in the start's headers by the Temporal client's OpenTelemetry interceptor). Its
 * context goes in the headers of every activity, child workflow and continue-as-new it schedules, where the
 * worker's OpenTelemetry activity interceptor makes each `RunActivity:<type>` its child. The headers use the format of
 * @temporalio/interceptors-opentelemetry (`_tracer-data`: a W3C `traceparent`), so its client and activity
 * interceptors read and write them.
 *
 * Why not that package's workflow interceptors: they wrap each scheduled activity's promise in further awaits and
 * draw span ids from the workflow's Math.random. The first moves the order of commands when an update or signal
 * handler and the main flow finish in the same activation (a recorded history then no longer replays:
 * test/workflow/replay.test.ts); the second shifts the random draws the workflows use for their privacy delays.
 * Here nothing is awaited (every call returns the very promise the SDK made) and ids come from the run id, so a
 * workflow does exactly what it did without tracing.
 *
 * The span is sent through the worker's `exporter` sink (workflowSpanSinks in src/observability/tracing.ts) when
 * the run ends, never while replaying.
 */
import type { SerializableSpan, OpenTelemetrySinks } from '@temporalio/interceptors-opentelemetry';
import {
  ContinueAsNew,
  defaultPayloadConverter,
  proxySinks,
  workflowInfo,
  type Headers,
  type WorkflowInboundCallsInterceptor,
  type WorkflowOutboundCallsInterceptor,
} from '@temporalio/workflow';

/** The header @temporalio/interceptors-opentelemetry carries the trace context in. */
export const TRACE_HEADER = '_tracer-data';

interface TraceContext {
  traceId: string;
  spanId: string;
}

/** The parent span of a W3C `traceparent` (`00-<32 hex trace id>-<16 hex span id>-<flags>`) in the headers, if any. */
export function parentOf(headers: Headers): TraceContext | undefined {
  const payload = headers[TRACE_HEADER];
  if (!payload) return undefined;
  try {
    const carrier = defaultPayloadConverter.fromPayload<Record<string, unknown>>(payload);
    const match = /^00-([0-9a-f]{32})-([0-9a-f]{16})-[0-9a-f]{2}$/.exec(String(carrier?.traceparent ?? ''));
    if (!match || /^0+$/.test(match[1]!) || /^0+$/.test(match[2]!)) return undefined;
    return { traceId: match[1]!, spanId: match[2]! };
  } catch {
    return undefined;
  }
}

/** `headers` with `span` as the parent of what they start (sampled). */
export function withTraceContext(headers: Headers, span: TraceContext): Headers {
  return { ...headers, [TRACE_HEADER]: defaultPayloadConverter.toPayload({ traceparent: `00-${span.traceId}-${span.spanId}-01` }) };
}

/** 64 bits of FNV-1a over `text`, as 16 hex digits (never all zeros). */
export function hash64(text: string): string {
  let hash = 0xcbf29ce484222325n;
  for (let i = 0; i < text.length; i++) {
    hash ^= BigInt(text.charCodeAt(i));
    hash = (hash * 0x100000001b3n) & 0xffffffffffffffffn;
  }
  return (hash === 0n ? 1n : hash).toString(16).padStart(16, '0');
}

const hrTime = (ms: number): [number, number] => [Math.floor(ms / 1000), (ms % 1000) * 1_000_000];

/** The interceptors of one workflow run: its span, and its context in everything it schedules. */
export function workflowTracingInterceptors(): { inbound: WorkflowInboundCallsInterceptor; outbound: WorkflowOutboundCallsInterceptor } {
  const info = workflowInfo();
  let span: (TraceContext & { parentSpanId?: string }) | undefined;
  // Before execute (a query on a cached run, say), what is scheduled belongs to no trace.
  const pass = <T extends { headers: Headers }>(input: T): T => (span ? { ...input, headers: withTraceContext(input.headers, span) } : input);

  return {
    inbound: {
      execute(input, next) {
        const parent = parentOf(input.headers);
        // A run nobody traced (tracing off where it was started: the header would be the only payload of its history
        // left outside the payload codec) adds no header and no span.
        if (!parent) return next(input);
        // Ids from the run id, not the workflow's Math.random: the same on every replay, and the privacy delays' draws stay as they were.
        span = { traceId: parent.traceId, spanId: hash64(`${info.runId}:run`), parentSpanId: parent.spanId };
        const started = info.runStartTime.getTime();
        const result = next(input);
        // A side branch: the workflow's own promise is returned untouched.
        result.then(
          () => exportRunSpan(span!, started, { code: 1 }),
          (error: unknown) =>
            exportRunSpan(
              span!,
              started,
              error instanceof ContinueAsNew ? { code: 1 } : { code: 2, message: error instanceof Error ? error.message : String(error) },
            ),
        );
        return result;
      },
    },
    outbound: {
      scheduleActivity: (input, next) => next(pass(input)),
      scheduleLocalActivity: (input, next) => next(pass(input)),
      startChildWorkflowExecution: (input, next) => next(pass(input)),
      continueAsNew: (input, next) => next(pass(input)),
    },
  };

  function exportRunSpan(run: TraceContext & { parentSpanId?: string }, startedMs: number, status: SerializableSpan['status']): void {
    if (workflowInfo().unsafe.isReplaying) return;
    const endedMs = Math.max(Date.now(), startedMs);
    const serialized: SerializableSpan = {
      name: `RunWorkflow:${info.workflowType}`,
      kind: 0, // INTERNAL
      spanContext: { traceId: run.traceId, spanId: run.spanId, traceFlags: 1 },
      parentSpanId: run.parentSpanId,
      startTime: hrTime(startedMs),
      endTime: hrTime(endedMs),
      status,
      attributes: {},
      links: [],
      events: [],
      duration: hrTime(endedMs - startedMs),
      ended: true,
      droppedAttributesCount: 0,
      droppedLinksCount: 0,
      droppedEventsCount: 0,
      instrumentationLibrary: { name: 'private-route-workflow' },
    };
    proxySinks<OpenTelemetrySinks>().exporter.export([serialized]);
  }
}
