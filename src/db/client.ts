import { fileURLToPath } from 'node:url';
import { drizzle, type PostgresJsDatabase } from 'drizzle-orm/postgres-js';
import { migrate } from 'drizzle-orm/postgres-js/migrator';
import postgres, { type Sql } from 'postgres';
import * as schema from './schema.ts';

/** drizzle over postgres.js; `$client` is the postgres.js client (LISTEN for the status feed). */
export type Database = PostgresJsDatabase<typeof schema> & { $client: Sql };

/** The database, or a transaction of it: what the per-table query modules take. */
export type Db = Database | Parameters<Parameters<Database['transaction']>[0]>[0];

export interface DatabaseHandle {
  db: Database;
  close(): Promise<void>;
}

export interface ConnectOptions {
  /** Connections in the pool (default 10). Replicas × this must stay below the server's max_connections. */
  max?: number;
  /** A statement running longer is cancelled by the server (`statement_timeout`); unset: the server's default. */
  statementTimeoutMs?: number;
}

export function connectDatabase(url: string, opts: ConnectOptions = {}): DatabaseHandle {
  const sql = postgres(url, {
    max: opts.max ?? 10,
    onnotice: () => {},
    ...(opts.statementTimeoutMs !== undefined && { connection: { statement_timeout: opts.statementTimeoutMs } }),
  });
  return { db: drizzle(sql, { schema }), close: () => sql.end({ timeout: 5 }) };
}

const migrationsFolder = fileURLToPath(new URL('../../drizzle', import.meta.url));

/** The session-level advisory lock migrations run under (any fixed number; this one spells "private-route"). */
const MIGRATION_LOCK_KEY = 0x7072_6976_7274n;

/**
 * Applies the drizzle-kit migrations in `drizzle/`; safe to run on every start and from several replicas at once:
 * they queue on an advisory lock, and the second finds the first's migrations applied. Returns how many it applied.
 */
export async function migrateDatabase(url: string): Promise<{ applied: number }> {
  // One connection: the lock is the session's, and drizzle's migrator runs on the same session.
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  try {
    // A migration may build an index on a big table: no statement timeout the database or role sets applies to it.
    await sql`set statement_timeout = 0`;
    await sql`select pg_advisory_lock(${MIGRATION_LOCK_KEY.toString()}::bigint)`;
    const count = async () => {
      const [table] = await sql<{ found: boolean }[]>`select to_regclass('drizzle.__drizzle_migrations') is not null as found`;
      if (!table?.found) return 0;
      const [row] = await sql<{ n: number }[]>`select count(*)::int as n from drizzle.__drizzle_migrations`;
      return row?.n ?? 0;
    };
    const before = await count();
    await migrate(drizzle(sql), { migrationsFolder });
    return { applied: (await count()) - before };
  } finally {
    await sql`select pg_advisory_unlock_all()`.catch(() => {});
    await sql.end({ timeout: 5 });
  }
}
