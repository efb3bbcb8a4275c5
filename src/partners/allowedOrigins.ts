/**
 * The browser origins a partner's key allows (api_keys.allowed_origins): which web pages may call the API with the
 * key (CORS, src/api/cors.ts) and frame the tracking pages of its transfers (frame-ancestors). A key with origins is
 * used in web pages, so it is public: a browser key (docs/api.md, "Keys in browsers"). The rules of an origin are in
 * src/partners/origins.ts.
 */
import { and, eq, isNull, sql } from 'drizzle-orm';
import type { Database } from '../db/client.ts';
import { apiKeys, transfers } from '../db/schema.ts';
import { ApiKeyError, checkedOrigins, hashApiKey } from './apiKeys.ts';

/**
 * Replaces the origins of the active key named `name`; returns the origins before and after, or null when there is
 * no such active key. A browser key never becomes a server key again (ApiKeyError): its origins may change, not go.
 */
export async function setAllowedOrigins(db: Database, name: string, origins: readonly string[]): Promise<{ before: string[]; after: string[] } | null> {
  const after = checkedOrigins(origins);
  return db.transaction(async (tx) => {
    const [row] = await tx
      .select({ id: apiKeys.id, before: apiKeys.allowedOrigins })
      .from(apiKeys)
      .where(and(eq(apiKeys.name, name), isNull(apiKeys.revokedAt)))
      .for('update');
    if (!row) return null;
    // A key that pages carried may be copied by anyone: it stays public, or it would open its transfers to them.
    if (row.before.length > 0 && after.length === 0) {
      throw new ApiKeyError(
        `${name} has browser origins, so it is public (it may be in pages' code): it stays a browser key. Change its origins, or revoke it (routectl apikey revoke ${name}) and create a server key for the partner's server`,
      );
    }
    await tx.update(apiKeys).set({ allowedOrigins: after }).where(eq(apiKeys.id, row.id));
    return { before: row.before, after };
  });
}

/** The origins of the key that created `routeId`; none for a keyless transfer, a revoked key or an unknown route. */
export async function allowedOriginsOfRoute(db: Database, routeId: string): Promise<string[]> {
  const [row] = await db
    .select({ origins: apiKeys.allowedOrigins })
    .from(transfers)
    .innerJoin(apiKeys, eq(apiKeys.id, transfers.partnerId))
    .where(and(eq(transfers.routeId, routeId), isNull(apiKeys.revokedAt)));
  return row?.origins ?? [];
}

/** Every active browser key's origins, by the key's hash. */
export async function browserKeyOrigins(db: Database): Promise<Map<string, readonly string[]>> {
  const rows = await db
    .select({ keyHash: apiKeys.keyHash, origins: apiKeys.allowedOrigins })
    .from(apiKeys)
    .where(and(isNull(apiKeys.revokedAt), sql`cardinality(${apiKeys.allowedOrigins}) > 0`));
  return new Map(rows.map((r) => [r.keyHash, r.origins]));
}

/** What the CORS middleware and the tracking page ask about origins. */
export interface BrowserOrigins {
  /** The origins the key allows; empty for a server key, an unknown or revoked one. */
  ofKey(apiKey: string): Promise<readonly string[]>;
  /** Whether some active key allows `origin`: all a preflight, which carries no key, can be answered by. */
  someKeyAllows(origin: string): Promise<boolean>;
  /** The origins that may frame the tracking page of `routeId`: its key's. */
  ofRoute(routeId: string): Promise<readonly string[]>;
}

/**
 * The browser keys' origins, read from Postgres at most once every `ttlMs` (30 s) per API instance: a change by
 * routectl (or a revocation) reaches CORS within that time. The tracking page's origins are read each time.
 */
export function createBrowserOrigins(db: Database, options: { ttlMs?: number; now?: () => number } = {}): BrowserOrigins {
  const ttlMs = options.ttlMs ?? 30_000;
  const now = options.now ?? Date.now;
  let snapshot: { at: number; byKeyHash: Promise<Map<string, readonly string[]>>; all: Promise<Set<string>> } | undefined;
  const current = () => {
    if (!snapshot || now() - snapshot.at >= ttlMs) {
      const byKeyHash = browserKeyOrigins(db);
      const taken = { at: now(), byKeyHash, all: byKeyHash.then((m) => new Set([...m.values()].flat())) };
      // A failed read is not kept: the next request reads again.
      byKeyHash.catch(() => {
        if (snapshot === taken) snapshot = undefined;
      });
      snapshot = taken;
    }
    return snapshot;
  };
  return {
    async ofKey(apiKey) {
      return (await current().byKeyHash).get(hashApiKey(apiKey.trim())) ?? [];
    },
    async someKeyAllows(origin) {
      return (await current().all).has(origin);
    },
    ofRoute: (routeId) => allowedOriginsOfRoute(db, routeId),
  };
}
