/**
 * The drill's event log: everything that happened, in order, each event stamped with its time (`at`, ms since the
 * epoch). Steps append to it and never change what is in it; the report is computed from it afterwards
 * (devnet/drill/report.ts). Facts one step leaves for a later one (the transfers created, the activities lost with
 * a worker, the statuses the finish ended with) are read back from it with the queries below.
 */
import type { Address } from 'viem';
import type { DrillStep, ServerRestart, TransferOutcome, WorkerLife } from './types.ts';

/** A transfer the drill created through the API and funded. */
export interface CreatedTransfer {
  routeId: string;
  /** The creator's token: the drill follows its routes in the full view (the public one moves once an exit epoch). */
  statusToken: string;
  route: string;
  amount: bigint;
  quoted: bigint;
  depositAddress: Address;
  recipient: Address;
  destRole: 'destination' | 'hub';
  destSymbol: string;
  exact: boolean;
}

/** What the API said of a transfer when the finish ended. */
export interface TransferStatus {
  routeId: string;
  status: string;
  error: string | null;
  needsAttention: boolean;
}

/** The report's timed spans of steps: a step that counts towards one says which. */
export type TimedSpan = 'crashes' | 'finish';

export type DrillEvent =
  /** The first event of every drill; `at` is when runDrill was called. */
  | { type: 'drill-started'; at: number; bridge: 'relay' | 'cctp'; dataDir: string; plan: DrillStep[] }
  | { type: 'step-started'; at: number; step: string; timed?: TimedSpan }
  | { type: 'step-finished'; at: number; step: string; timed?: TimedSpan }
  /** The drill stops at the first failed step. */
  | { type: 'step-failed'; at: number; step: string; timed?: TimedSpan; error: string }
  /** The local stack is up, `tookMs` after its start began. */
  | { type: 'stack-started'; at: number; tookMs: number; stepMaxAttempts: number }
  | { type: 'transfer-created'; at: number; transfer: CreatedTransfer }
  | { type: 'worker-spawned'; at: number; worker: number; role: string; pid: number; logFile: string }
  /** The worker's /readyz answered 200. */
  | { type: 'worker-ready'; at: number; worker: number }
  | { type: 'worker-ended'; at: number; worker: number; end: WorkerLife['end'] }
  /** An activity of a transfer that was running in a worker when it died. */
  | { type: 'activity-lost'; at: number; worker: number; routeId: string; activityId: string; activityType: string; attempt: number }
  /** A lost activity is no longer pending in its workflow. */
  | { type: 'activity-completed'; at: number; routeId: string; activityId: string }
  | { type: 'server-restarted'; at: number; restart: ServerRestart }
  /** Every worker has ended and lost activities are no longer followed: the recovery figures are final. */
  | { type: 'workers-finished'; at: number }
  | { type: 'transfer-statuses'; at: number; statuses: TransferStatus[] }
  | { type: 'transfer-checked'; at: number; outcome: TransferOutcome }
  /** The pool's Deposited and the Entrypoint's WithdrawalRelayed events since the stack started. */
  | { type: 'pool-counted'; at: number; deposits: number; withdrawals: number }
  /** Something that makes the drill fail without stopping it. */
  | { type: 'problem'; at: number; text: string }
  /** The last event of every drill. */
  | { type: 'drill-ended'; at: number };

export type DrillEventOf<T extends DrillEvent['type']> = Extract<DrillEvent, { type: T }>;

/** An event without its time: `append` stamps it with the present one. */
type Unstamped<E> = E extends DrillEvent ? Omit<E, 'at'> & { at?: number } : never;

/** Append-only: what is in it never changes. */
export class EventLog {
  readonly #events: DrillEvent[] = [];

  append(event: Unstamped<DrillEvent>): void {
    this.#events.push({ ...event, at: event.at ?? Date.now() } as DrillEvent);
  }

  get events(): readonly DrillEvent[] {
    return this.#events;
  }
}

export function eventsOf<T extends DrillEvent['type']>(events: readonly DrillEvent[], type: T): DrillEventOf<T>[] {
  return events.filter((event): event is DrillEventOf<T> => event.type === type);
}

export const createdTransfers = (events: readonly DrillEvent[]): CreatedTransfer[] => eventsOf(events, 'transfer-created').map((e) => e.transfer);

/** When the worker's /readyz first answered 200, or null. */
export const readyAt = (events: readonly DrillEvent[], worker: number): number | null =>
  eventsOf(events, 'worker-ready').find((e) => e.worker === worker)?.at ?? null;

/** The statuses the finish ended with (empty before it ended). */
export const finalStatuses = (events: readonly DrillEvent[]): TransferStatus[] => eventsOf(events, 'transfer-statuses').at(-1)?.statuses ?? [];

const activityKey = (x: { routeId: string; activityId: string }) => `${x.routeId} ${x.activityId}`;

/**
 * Each activity lost with a worker once, with the first worker it was lost with (an activity lost again after a
 * later kill is still the same outstanding activity), and when it completed (null: not seen completed).
 */
export function lostActivities(events: readonly DrillEvent[]): Array<DrillEventOf<'activity-lost'> & { completedAt: number | null }> {
  const completedAt = new Map<string, number>();
  for (const e of eventsOf(events, 'activity-completed')) if (!completedAt.has(activityKey(e))) completedAt.set(activityKey(e), e.at);
  const firstLoss = new Map<string, DrillEventOf<'activity-lost'>>();
  for (const e of eventsOf(events, 'activity-lost')) if (!firstLoss.has(activityKey(e))) firstLoss.set(activityKey(e), e);
  return [...firstLoss.values()].map((e) => ({ ...e, completedAt: completedAt.get(activityKey(e)) ?? null }));
}
