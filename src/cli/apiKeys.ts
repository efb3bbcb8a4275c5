/** routectl apikey: partner API keys (src/partners/apiKeys.ts). Needs only the database. */
import { connectDatabase, type Database } from '../db/client.ts';
import { ApiKeyError, createApiKey, listApiKeys, revokeApiKey, type PartnerLimits } from '../partners/apiKeys.ts';
import { CliError, print, stackInfo, usageError } from './context.ts';

async function withDatabase<T>(fn: (db: Database) => Promise<T>): Promise<T> {
  // DATABASE_URL alone is enough here (no Temporal), else the running local stack's.
  const database = connectDatabase(process.env.DATABASE_URL ?? stackInfo().databaseUrl, { max: 1 });
  try {
    return await fn(database.db);
  } finally {
    await database.close();
  }
}

/** A limit flag: a whole number above 0, or undefined when not given (the service's default applies). */
function limitFlag(flag: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n <= 0) throw usageError(`--${flag} must be a whole number above 0 (leave it out for the service's default)`);
  return n;
}

export async function create(name: string | undefined, flags: { perMinute?: string; createsPerMinute?: string; maxUnfunded?: string }): Promise<void> {
  if (!name) throw usageError('apikey create needs --name <partner name>');
  const limits: Partial<PartnerLimits> = {
    requestsPerMinute: limitFlag('per-minute', flags.perMinute),
    createsPerMinute: limitFlag('creates-per-minute', flags.createsPerMinute),
    maxUnfunded: limitFlag('max-unfunded', flags.maxUnfunded),
  };
  const { key } = await withDatabase(async (db) => {
    try {
      return await createApiKey(db, name, limits);
    } catch (error) {
      if (error instanceof ApiKeyError) throw new CliError(error.message, 4);
      throw error;
    }
  });
  print(`API key for ${name} (shown this once; only its SHA-256 is stored, so keep it now):\n${key}\nThe partner sends it as the X-Api-Key header.`);
}

export async function list(json: boolean): Promise<void> {
  const keys = await withDatabase(listApiKeys);
  if (json) return print(keys);
  if (keys.length === 0) return print('no API keys');
  const limit = (n: number | null) => (n === null ? 'default' : String(n));
  const rows = keys.map((k) => [
    k.name,
    `${k.keyPrefix}…`,
    limit(k.requestsPerMinute),
    limit(k.createsPerMinute),
    limit(k.maxUnfunded),
    k.createdAt.toISOString(),
    k.revokedAt?.toISOString() ?? '-',
  ]);
  const header = ['NAME', 'PREFIX', 'PER_MIN', 'CREATES_PER_MIN', 'MAX_UNFUNDED', 'CREATED', 'REVOKED'];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  print(
    [header, ...rows]
      .map((r) =>
        r
          .map((cell, i) => cell.padEnd(widths[i]!))
          .join('  ')
          .trimEnd(),
      )
      .join('\n'),
  );
}

export async function revoke(name: string | undefined): Promise<void> {
  if (!name) throw usageError("apikey revoke needs the key's name (routectl apikey list)");
  const revoked = await withDatabase((db) => revokeApiKey(db, name));
  if (!revoked) throw new CliError(`no active API key named "${name}" (routectl apikey list shows the names and which are revoked)`, 4);
  print(`revoked the API key of ${name}: its requests now answer 401`);
}
