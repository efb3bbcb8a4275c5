/**
 * Temporal Cloud billable Actions of one workflow execution, counted from its event history by the rules of
 * https://docs.temporal.io/cloud/actions (read 2026-11):
 *
 * - workflow started (client start, continue-as-new): 1;
 * - each activity attempt: 1 (ActivityTaskStarted carries the attempt number: its earlier attempts are not
 *   in the history, each was an Action);
 * - timer started (incl. the implicit timer of `condition(fn, timeout)` and `sleep`): 1;
 * - search-attribute upsert: 1 per command, however many attributes (one that only sets
 *   TemporalChangeVersion, the patch bookkeeping, is exempt);
 * - workflow properties modified (memo upsert): counted 1 like an upsert (the page does not name it;
 *   an assumption, shown in its own row);
 * - markers (local activities, side effects, patches): every RecordMarker command of one workflow task
 *   together is 1 Action; the page says so of local activities and names no exemption for patch markers,
 *   so patch markers are counted the same way (their own row says how many tasks that was);
 * - signal received, update accepted: 1 each; signal to another workflow: 1;
 * - child workflow started: 2 (start and execution); Nexus operation scheduled or cancel requested: 1;
 * - workflow execution options updated: 1.
 *
 * Not in the history, so not counted here: queries, rejected updates, and activity heartbeats. Heartbeats
 * are estimated from each activity attempt's duration (`estimatedHeartbeats`).
 */
import type { temporal } from '@temporalio/proto';
import { tsToMs } from '@temporalio/common/lib/time.js';
import proto from '@temporalio/proto';
import { KEEPALIVE_INTERVAL_MS } from '../../src/temporal/activityKeepalive.ts';

type HistoryEvent = temporal.api.history.v1.IHistoryEvent;

const EventType = proto.temporal.api.enums.v1.EventType;

/** EVENT_TYPE_ACTIVITY_TASK_STARTED → ActivityTaskStarted. */
export function eventTypeName(type: number | null | undefined): string {
  const raw = EventType[type ?? 0] ?? `EVENT_TYPE_${type}`;
  return raw
    .replace(/^EVENT_TYPE_/, '')
    .toLowerCase()
    .replace(/(^|_)([a-z])/g, (_, __, c: string) => c.toUpperCase());
}

/** Seconds between the keep-alive interceptor's heartbeats (src/temporal/activityKeepalive.ts; 2 s before issue 9, 5 s since). */
export const KEEPALIVE_SECONDS = KEEPALIVE_INTERVAL_MS / 1000;

/**
 * The keep-alive interceptor heartbeats every k = KEEPALIVE_SECONDS; the SDK forwards the first at once and
 * then at most one per 80 % of the 10 s heartbeat timeout (8 s): ≈ 1 + floor((d − k) / 8) recorded heartbeats
 * for an attempt of d ≥ k seconds. An estimate: activities that heartbeat themselves, and attempts that were
 * retried (their durations are not in the history), are not seen.
 */
export function estimatedHeartbeats(attemptSeconds: number): number {
  return attemptSeconds < KEEPALIVE_SECONDS ? 0 : 1 + Math.floor((attemptSeconds - KEEPALIVE_SECONDS) / 8);
}

export interface ActionCount {
  events: number;
  eventsByType: Map<string, number>;
  /** Billable Actions by rule (row label → count), heartbeats excluded. */
  actionsByRule: Map<string, number>;
  actions: number;
  estimatedHeartbeats: number;
  /** History events that look billable but are exempt, by reason. */
  notBilled: Map<string, number>;
  /** Activity attempts by activity type (to see what the heartbeats and retries come from). */
  activityAttempts: Map<string, number>;
}

const add = (map: Map<string, number>, key: string, n = 1) => {
  if (n !== 0) map.set(key, (map.get(key) ?? 0) + n);
};

export function countActions(events: HistoryEvent[]): ActionCount {
  const eventsByType = new Map<string, number>();
  const actionsByRule = new Map<string, number>();
  const activityAttempts = new Map<string, number>();
  const notBilled = new Map<string, number>();
  const activityTypeByScheduled = new Map<string, string>();
  const startedAt = new Map<string, number>();
  const markerTasks = new Set<string>();
  const patchOnlyTasks = new Map<string, boolean>();
  let heartbeats = 0;

  for (const e of events) {
    const type = eventTypeName(e.eventType);
    add(eventsByType, type);
    const id = String(e.eventId);
    switch (type) {
      case 'WorkflowExecutionStarted':
        add(actionsByRule, 'workflow started');
        break;
      case 'WorkflowExecutionContinuedAsNew':
        add(actionsByRule, 'continued as new (new run started)');
        break;
      case 'ActivityTaskScheduled':
        activityTypeByScheduled.set(id, e.activityTaskScheduledEventAttributes?.activityType?.name ?? 'unknown');
        break;
      case 'ActivityTaskStarted': {
        const attempt = e.activityTaskStartedEventAttributes?.attempt ?? 1;
        add(actionsByRule, 'activity attempt started', attempt);
        add(activityAttempts, activityTypeByScheduled.get(String(e.activityTaskStartedEventAttributes?.scheduledEventId)) ?? 'unknown', attempt);
        startedAt.set(id, tsToMs(e.eventTime));
        break;
      }
      case 'ActivityTaskCompleted':
      case 'ActivityTaskFailed':
      case 'ActivityTaskTimedOut':
      case 'ActivityTaskCanceled': {
        const attrs =
          e.activityTaskCompletedEventAttributes ??
          e.activityTaskFailedEventAttributes ??
          e.activityTaskTimedOutEventAttributes ??
          e.activityTaskCanceledEventAttributes;
        const started = startedAt.get(String(attrs?.startedEventId));
        if (started !== undefined) heartbeats += estimatedHeartbeats((tsToMs(e.eventTime) - started) / 1000);
        break;
      }
      case 'TimerStarted':
        add(actionsByRule, 'timer started');
        break;
      case 'UpsertWorkflowSearchAttributes': {
        const keys = Object.keys(e.upsertWorkflowSearchAttributesEventAttributes?.searchAttributes?.indexedFields ?? {});
        if (keys.length === 1 && keys[0] === 'TemporalChangeVersion') add(notBilled, 'search-attribute upsert of TemporalChangeVersion only (exempt)');
        else add(actionsByRule, 'search attributes upserted');
        break;
      }
      case 'WorkflowPropertiesModified':
        add(actionsByRule, 'memo upserted (properties modified; assumed billed)');
        break;
      case 'MarkerRecorded': {
        const task = String(e.markerRecordedEventAttributes?.workflowTaskCompletedEventId);
        const isPatch = e.markerRecordedEventAttributes?.markerName === 'core_patch';
        markerTasks.add(task);
        patchOnlyTasks.set(task, (patchOnlyTasks.get(task) ?? true) && isPatch);
        break;
      }
      case 'WorkflowExecutionSignaled':
        add(actionsByRule, 'signal received');
        break;
      case 'WorkflowExecutionUpdateAccepted':
        add(actionsByRule, 'update accepted');
        break;
      case 'SignalExternalWorkflowExecutionInitiated':
        add(actionsByRule, 'signal sent to another workflow');
        break;
      case 'StartChildWorkflowExecutionInitiated':
        add(actionsByRule, 'child workflow (start + execution)', 2);
        break;
      case 'NexusOperationScheduled':
      case 'NexusOperationCancelRequested':
        add(actionsByRule, 'nexus operation');
        break;
      case 'WorkflowExecutionOptionsUpdated':
        add(actionsByRule, 'workflow options updated');
        break;
    }
  }
  const patchOnly = [...patchOnlyTasks.values()].filter(Boolean).length;
  add(actionsByRule, 'markers: patch markers only (1 per workflow task)', patchOnly);
  add(actionsByRule, 'markers: local activity / side effect (1 per workflow task)', markerTasks.size - patchOnly);

  return {
    events: events.length,
    eventsByType,
    actionsByRule,
    actions: [...actionsByRule.values()].reduce((a, b) => a + b, 0),
    estimatedHeartbeats: heartbeats,
    notBilled,
    activityAttempts,
  };
}
