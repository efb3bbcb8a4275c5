import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { sql } from 'drizzle-orm';
import { mnemonicToAccount } from 'viem/accounts';
import type { Database } from '../../src/db/client.ts';

/** A configured secret and the name it came from (for the failure message; the value is never printed). */
export interface KnownSecret {
  name: string;
  value: string;
}

/** Variable names whose values are secrets, whatever part of the service added them. */
const SECRET_NAME = /KEY|TOKEN|MNEMONIC|SECRET|PASSWORD|PRIVATE/i;
/** Names that match SECRET_NAME but hold identifiers or locations, not secrets (a codec key's id travels with every payload). */
const NOT_SECRET_NAME = /(_?ID|_?IDS|_?FILE|_?PATH|_?URL|_?PORT)$/i;
/** Shorter values are too common to search for (and too short to be keys). */
const MIN_SECRET_LENGTH = 8;

/**
 * Every secret value in `env` (a variable named like *KEY*, *TOKEN*, *MNEMONIC*, *SECRET*, *PASSWORD*, *PRIVATE*):
 * the value itself, and, when it is JSON (a key ring such as {"k1": "…"}), each string inside it. A URL's
 * password (DATABASE_URL) counts too, as `user:password@`.
 */
export function secretsOfEnv(env: Record<string, unknown>, source: string): KnownSecret[] {
  const found: KnownSecret[] = [];
  for (const [name, raw] of Object.entries(env)) {
    if (raw === undefined || raw === null) continue;
    const value = typeof raw === 'string' ? raw : JSON.stringify(raw);
    const credentials = /^[a-z][a-z0-9+.-]*:\/\/([^:/@\s]+):([^@/\s]+)@/i.exec(value);
    if (credentials) found.push({ name: `${source} ${name} (URL credentials)`, value: `${credentials[1]}:${credentials[2]}@` });
    if (!SECRET_NAME.test(name) || NOT_SECRET_NAME.test(name)) continue;
    const strings = jsonStrings(value) ?? [value];
    for (const s of strings) if (s.length >= MIN_SECRET_LENGTH) found.push({ name: `${source} ${name}`, value: s });
  }
  return found;
}

function jsonStrings(text: string): string[] | null {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return null;
  }
  if (typeof parsed !== 'object' || parsed === null) return null;
  const out: string[] = [];
  const walk = (v: unknown) => {
    if (typeof v === 'string') out.push(v);
    else if (typeof v === 'object' && v !== null) for (const inner of Object.values(v)) walk(inner);
  };
  walk(parsed);
  return out;
}

/** The secrets of every JSON environment file the stack wrote into its data folder (worker, API, codec, …). */
export async function secretsOfDataDir(dataDir: string): Promise<KnownSecret[]> {
  const found: KnownSecret[] = [];
  for (const file of await readdir(dataDir)) {
    if (!file.endsWith('.json')) continue;
    let parsed: unknown;
    try {
      parsed = JSON.parse(await readFile(path.join(dataDir, file), 'utf8'));
    } catch {
      continue;
    }
    if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)) found.push(...secretsOfEnv(parsed as Record<string, unknown>, file));
  }
  return found;
}

/** The private keys of the route accounts (deposit, hub, exit: BIP-44 accounts 1..3) at these indexes. */
export function routePrivateKeys(mnemonic: string, accountIndexes: number[]): KnownSecret[] {
  return accountIndexes.flatMap((addressIndex) =>
    (
      [
        ['deposit', 1],
        ['hub', 2],
        ['exit', 3],
      ] as const
    ).map(([role, accountIndex]) => {
      const key = mnemonicToAccount(mnemonic, { accountIndex, addressIndex }).getHdKey().privateKey;
      if (!key) throw new Error(`no private key for ${role} ${addressIndex}`);
      return { name: `${role} account ${addressIndex} private key`, value: `0x${Buffer.from(key).toString('hex')}` };
    }),
  );
}

/** The forms a secret could be written in: as is, lowercase, and a hex key without its 0x. */
function formsOf(secret: string): string[] {
  const forms = new Set([secret, secret.toLowerCase()]);
  if (/^0x[0-9a-f]+$/i.test(secret)) forms.add(secret.slice(2).toLowerCase()).add(secret.slice(2));
  return [...forms];
}

/** Which secrets occur in which texts: "<where>: <secret name>" for each hit (the secret itself is not repeated). */
export function findLeaks(secrets: KnownSecret[], texts: Array<{ where: string; text: string }>): string[] {
  const leaks = new Set<string>();
  const searched = secrets.map((s) => ({ name: s.name, forms: formsOf(s.value) }));
  for (const { where, text } of texts) {
    const lower = text.toLowerCase();
    for (const secret of searched) {
      if (secret.forms.some((form) => text.includes(form) || lower.includes(form.toLowerCase()))) leaks.add(`${where}: ${secret.name}`);
    }
  }
  return [...leaks];
}

/** Every row of every table of the service's schema, as Postgres writes a row as text (errors, audit, intents, …). */
export async function databaseRows(db: Database): Promise<Array<{ where: string; text: string }>> {
  const tables = await db.execute<{ table_name: string }>(
    sql`select table_name from information_schema.tables where table_schema = 'public' and table_type = 'BASE TABLE'`,
  );
  const rows: Array<{ where: string; text: string }> = [];
  for (const { table_name } of tables) {
    const result = await db.execute<{ row: string }>(sql`select t::text as row from ${sql.identifier(table_name)} t`);
    for (const { row } of result) rows.push({ where: `table ${table_name}`, text: row });
  }
  return rows;
}

/** Every string and byte string (as UTF-8) inside a value, e.g. a Temporal history, as one text. */
export function allText(value: unknown): string {
  const parts: string[] = [];
  const seen = new Set<unknown>();
  const walk = (v: unknown) => {
    if (typeof v === 'string') parts.push(v);
    else if (v instanceof Uint8Array) parts.push(Buffer.from(v).toString('utf8'));
    else if (typeof v === 'object' && v !== null && !seen.has(v)) {
      seen.add(v);
      for (const inner of Object.values(v)) walk(inner);
    }
  };
  walk(value);
  return parts.join('\n');
}
