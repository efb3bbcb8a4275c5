/**
 * The opaque cursor of a partner's listing (GET /api/private-route): where the last page ended, as the listing's
 * order (created_at, then route_id, both descending) names it. Pure: src/transfers/partnerTransfers.ts uses it.
 *
 * `createdAt` keeps Postgres's microseconds (a JavaScript Date would round them off, and two transfers created in
 * one millisecond would then fall between two pages). The cursor is base64url of `v1|<createdAt>|<routeId>`; it only
 * says where to go on within the caller's own transfers, so it needs no signature: a changed one that still
 * parses starts the page elsewhere in the same list, anything else is refused.
 */

export interface ListingPosition {
  /** ISO 8601 in UTC with six fractional digits, as `to_char(… 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')` writes it. */
  createdAt: string;
  routeId: string;
}

const VERSION = 'v1';
const CREATED_AT_PATTERN = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;
const ROUTE_ID_PATTERN = /^rt_[0-9a-f]{32}$/;
/** Longer than any cursor this module writes: a longer one is refused before it is decoded. */
export const MAX_CURSOR_LENGTH = 128;

export function encodeCursor(position: ListingPosition): string {
  return Buffer.from(`${VERSION}|${position.createdAt}|${position.routeId}`, 'utf8').toString('base64url');
}

/** The position a cursor names, or null when it is not one this module wrote (malformed, cut, or changed). */
export function decodeCursor(cursor: string): ListingPosition | null {
  if (cursor.length === 0 || cursor.length > MAX_CURSOR_LENGTH || !/^[A-Za-z0-9_-]+$/.test(cursor)) return null;
  const parts = Buffer.from(cursor, 'base64url').toString('utf8').split('|');
  if (parts.length !== 3) return null;
  const [version, createdAt, routeId] = parts as [string, string, string];
  if (version !== VERSION || !CREATED_AT_PATTERN.test(createdAt) || !ROUTE_ID_PATTERN.test(routeId)) return null;
  // A date the pattern lets through but the calendar has not (Feb 30, 24:00, year 0) would fail in Postgres: refused
  // here. No transfer is older than 1970.
  const parsed = Date.parse(createdAt);
  if (Number.isNaN(parsed) || parsed < 0 || new Date(parsed).toISOString().slice(0, 23) !== createdAt.slice(0, 23)) return null;
  return { createdAt, routeId };
}
