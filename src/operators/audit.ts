import type { ApplicationFailure } from '@temporalio/common';
import { finalFailure } from '../failures.ts';
import type { FailureType } from '../domain/failures.ts';
import { and, desc, eq, type SQL } from 'drizzle-orm';
import type { Database } from '../db/client.ts';
import { operatorActions } from '../db/schema.ts';

/**
 * The operator audit log (`operator_actions`). routectl writes a row ahead of every action (outcome `requested`);
 * the activity that moves money requires that row and marks it `done` or `refused`; whoever sees the action end
 * otherwise marks it `failed`. A row leaves `requested` once, so a finished row can never authorise a second move.
 */

export const OPERATOR_ACTIONS = ['retry', 'fail', 'refund', 'recover', 'void', 'income-sweep', 'apikey-origins'] as const;
export type OperatorActionKind = (typeof OPERATOR_ACTIONS)[number];
export type OperatorOutcome = 'done' | 'refused' | 'failed';
export type OperatorAction = typeof operatorActions.$inferSelect;

/** The failure type of a refused operator check: final, and no reason to flag the route. */
export const OPERATOR_REFUSED: FailureType = 'OperatorActionRefused';

/** What an operator workflow or update carries so that the worker can tie it to its audit row. */
export interface OperatorRequest {
  operator: string;
  reason: string;
  actionId: number;
}

export async function requestAction(
  db: Database,
  action: { routeId: string | null; action: OperatorActionKind; operator: string; reason: string; params?: Record<string, unknown> },
): Promise<number> {
  const [row] = await db
    .insert(operatorActions)
    .values({ routeId: action.routeId, action: action.action, operator: action.operator, reason: action.reason, params: action.params ?? {} })
    .returning({ id: operatorActions.id });
  return row!.id;
}

/** Ends a `requested` row; false when it had ended already (the first outcome written stands). */
export async function finishAction(db: Database, id: number, outcome: OperatorOutcome, detail: string): Promise<boolean> {
  const ended = await db
    .update(operatorActions)
    .set({ outcome, detail: detail.slice(0, 2000), finishedAt: new Date() })
    .where(and(eq(operatorActions.id, id), eq(operatorActions.outcome, 'requested')))
    .returning({ id: operatorActions.id });
  return ended.length > 0;
}

export async function listActions(db: Database, filter: { routeId?: string; operator?: string; limit?: number }): Promise<OperatorAction[]> {
  const conditions: SQL[] = [];
  if (filter.routeId) conditions.push(eq(operatorActions.routeId, filter.routeId));
  if (filter.operator) conditions.push(eq(operatorActions.operator, filter.operator));
  return db
    .select()
    .from(operatorActions)
    .where(conditions.length ? and(...conditions) : undefined)
    .orderBy(desc(operatorActions.createdAt), desc(operatorActions.id))
    .limit(filter.limit ?? 100);
}

const sameValue = (a: unknown, b: unknown) => (typeof a === 'string' && typeof b === 'string' ? a.toLowerCase() === b.toLowerCase() : a === b);

/**
 * The activity's side: the audit row `actionId` must exist, still be `requested`, and name this action, route and
 * parameters (destination, intent id). Anything else is refused: the workflow was not started by a recorded request.
 */
export async function requireRequestedAction(
  db: Database,
  expected: { actionId: number | undefined; action: OperatorActionKind; routeId: string | null; params?: Record<string, unknown> },
): Promise<OperatorAction> {
  const what = `${expected.action}${expected.routeId ? ` of ${expected.routeId}` : ''}`;
  const ask = `request it with routectl ${expected.action} … --reason "…", which records it in operator_actions`;
  if (!Number.isSafeInteger(expected.actionId) || (expected.actionId ?? 0) <= 0) {
    throw refusal(`refused: the ${what} carries no operator action id; ${ask}`);
  }
  const [row] = await db.select().from(operatorActions).where(eq(operatorActions.id, expected.actionId!));
  if (!row) throw refusal(`refused: operator action #${expected.actionId} does not exist; ${ask}`);
  const mismatch = [
    row.action !== expected.action && `it is a ${row.action}`,
    row.routeId !== expected.routeId && `it is for route ${row.routeId ?? '(none)'}`,
    ...Object.entries(expected.params ?? {})
      .filter(([key, value]) => !sameValue(row.params[key], value))
      .map(([key, value]) => `its ${key} is ${JSON.stringify(row.params[key] ?? null)}, not ${JSON.stringify(value)}`),
  ].filter(Boolean);
  if (mismatch.length > 0) throw refusal(`refused: operator action #${row.id} does not match this ${what}: ${mismatch.join('; ')}; ${ask}`);
  if (row.outcome !== 'requested') throw refusal(`refused: operator action #${row.id} has ended already (${row.outcome}); ${ask} again`);
  return row;
}

/** A refused check: marks the row refused (when there is one) and returns the non-retryable failure to throw. */
export async function refuseAction(
  db: Database,
  actionId: number | undefined,
  message: string,
  type: FailureType = OPERATOR_REFUSED,
): Promise<ApplicationFailure> {
  if (actionId) await finishAction(db, actionId, 'refused', message);
  return refusal(message, type);
}

const refusal = (message: string, type: FailureType = OPERATOR_REFUSED) => finalFailure(type, message);

/**
 * Where an operator may refund what a route's deposit address holds (its deposit side): back to its refundAddress, or
 * to an address of the worker's allowlist (OPERATOR_ALLOWED_DESTINATIONS, e.g. the service's treasury). Its recipient,
 * or any other address, needs an `override` reason (recorded in the audit log): deposit-side funds sent to the
 * recipient are a public transfer from the deposit address to the payout's address, which links the two ends. Null
 * when allowed, else why not.
 */
export function destinationRefusal(
  route: { routeId: string; refundAddress: string | null; userDestinationAddress: string },
  to: string,
  allowlist: readonly string[] | undefined,
  override?: string,
): string | null {
  const allowed = [route.refundAddress, ...(allowlist ?? [])].filter((a): a is string => Boolean(a));
  if (allowed.some((a) => a.toLowerCase() === to.toLowerCase())) return null;
  if (override?.trim()) return null;
  const recipient = route.userDestinationAddress.toLowerCase() === to.toLowerCase();
  return recipient
    ? `refused: ${to} is route ${route.routeId}'s recipient; a refund of its deposit side to the address it paid links the deposit to the payout for anyone. ` +
        `Send it to the route's refundAddress (${route.refundAddress ?? 'none'}) or an address in OPERATOR_ALLOWED_DESTINATIONS; if it must go there, pass --override "<why>" (recorded in the audit log)`
    : `refused: ${to} is not an allowed destination for route ${route.routeId}. Send it to the route's refundAddress ` +
        `(${route.refundAddress ?? 'none'}), or add the address to the worker's OPERATOR_ALLOWED_DESTINATIONS and restart the worker, ` +
        'or pass --override "<why>" (recorded in the audit log)';
}

/** The two sides of a route: what it holds before the pool (deposit side) and after it (exit side). */
export type RouteSide = 'deposit' | 'exit';

/**
 * Where `routectl recover` may send one side of a failed route: deposit-side funds (the pool note, ragequit, and the
 * hub account) back to its refundAddress, exit-side funds (the exit account) on to its recipient, or to an address
 * of the allowlist. Anything else, the other side's address above all (one address receiving both sides links the
 * route's deposit to its payout), needs an operator's `override` reason, which the audit row records. Null when
 * allowed, else why not.
 */
export function recoverDestinationRefusal(
  route: { routeId: string; refundAddress: string | null; userDestinationAddress: string },
  side: RouteSide,
  to: string,
  allowlist: readonly string[] | undefined,
  override: string | undefined,
): string | null {
  const own = side === 'deposit' ? route.refundAddress : route.userDestinationAddress;
  const allowed = [own, ...(allowlist ?? [])].filter((a): a is string => Boolean(a));
  if (allowed.some((a) => a.toLowerCase() === to.toLowerCase())) return null;
  if (override?.trim()) return null;
  const ownName = side === 'deposit' ? `its refundAddress (${route.refundAddress ?? 'none'})` : `its recipient (${route.userDestinationAddress})`;
  return (
    `refused: the ${side} side of route ${route.routeId} goes only to ${ownName} or an address in OPERATOR_ALLOWED_DESTINATIONS, not ${to}: ` +
    "sending a route's deposit-side funds to its recipient, or its exit-side funds to its refund address, links both ends of it. " +
    'If it must go there, pass --override "<why>" (recorded in the audit log)'
  );
}

/** The two sides of one route are recovered at least this far apart (unless overridden): unrelated times. */
export const RECOVER_SIDES_APART_MS = 3600_000;

/**
 * Whether recovering `side` of a route now is too soon after its other side was (within RECOVER_SIDES_APART_MS, from
 * the audit log `actions` of the route): two sides moved back to back are linked by their timing. An `override`
 * reason allows it. Null when allowed, else why not. routectl and the worker's recover activity both apply it.
 */
export function recoverTooSoon(
  actions: readonly Pick<OperatorAction, 'action' | 'outcome' | 'params' | 'finishedAt'>[],
  routeId: string,
  side: RouteSide,
  override: string | undefined,
  now = Date.now(),
): string | null {
  if (override?.trim()) return null;
  const other: RouteSide = side === 'deposit' ? 'exit' : 'deposit';
  const recent = actions.find(
    (a) => a.action === 'recover' && a.outcome === 'done' && a.params.side === other && now - (a.finishedAt?.getTime() ?? 0) < RECOVER_SIDES_APART_MS,
  );
  if (!recent) return null;
  return `refused: the ${other} side of ${routeId} was recovered at ${recent.finishedAt?.toISOString()}; recover the ${side} side at least an hour later (two sides moved back to back are linked by their timing), or pass --override "<why>"`;
}
