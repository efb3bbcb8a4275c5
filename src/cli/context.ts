import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { existsSync, readFileSync } from 'node:fs';
import type { Client, Connection } from '@temporalio/client';
import { createChainClients, type ChainClients } from '../chain/clients.ts';
import { connectDatabase, type Database } from '../db/client.ts';
import { configSchema, payloadCodecProblem } from '../config.ts';
import { PAYLOAD_CODEC_FILE, readLocalStackInfo, type LocalPayloadCodec, type LocalStackInfo } from './localStack.ts';
import { connectTemporalClient, temporalConnectionProblem, type TemporalClientConfig } from '../temporal/connection.ts';
import { transferOf } from '../transfers/transferStore.ts';

// From the build (dist/src/cli/) the checkout is one folder further up: .data is the checkout's either way.
const codeRoot = fileURLToPath(new URL('../..', import.meta.url));
const repoRoot = path.basename(codeRoot) === 'dist' ? path.dirname(codeRoot) : codeRoot;

/** A failure routectl reports with its own exit code: 2 usage, 3 unknown route, 4 not allowed now. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: number,
  ) {
    super(message);
  }
}

/** Runs a command and sets the process's exit code: its own, a CliError's, else 1 with the message on stderr. */
export function runCommandLine(command: () => Promise<number>): void {
  command().then(
    (code) => {
      process.exitCode = code;
    },
    (error: unknown) => {
      process.stderr.write(`routectl: ${error instanceof Error ? error.message : String(error)}\n`);
      process.exitCode = error instanceof CliError ? error.exitCode : 1;
    },
  );
}

export const usageError = (message: string) => new CliError(message, 2);
export const unknownRoute = (routeId: string) => new CliError(`unknown route ${routeId}`, 3);
export const notAllowed = (message: string) => new CliError(message, 4);

export const dataDir = () => path.resolve(repoRoot, process.env.DATA_DIR ?? '.data');

export function stackInfo(): LocalStackInfo {
  return readLocalStackInfo(dataDir());
}

const temporalVariables = configSchema.pick({
  TEMPORAL_ADDRESS: true,
  TEMPORAL_NAMESPACE: true,
  TEMPORAL_TLS: true,
  TEMPORAL_TLS_CERT: true,
  TEMPORAL_TLS_KEY: true,
  TEMPORAL_TLS_CA: true,
  TEMPORAL_TLS_SERVER_NAME: true,
  TEMPORAL_API_KEY: true,
  PAYLOAD_CODEC: true,
  PAYLOAD_CODEC_KEYS: true,
  PAYLOAD_CODEC_KEY_ID: true,
});

/**
 * How routectl reaches Temporal: the service's own variables (TLS, API key, payload codec keys), or for the local
 * stack its address and the codec key in its data folder.
 */
export function temporalClientConfig(local: { temporalAddress: string; temporalNamespace: string } | null): TemporalClientConfig {
  const env: Record<string, string | undefined> = { ...process.env };
  if (local) {
    env.TEMPORAL_ADDRESS ??= local.temporalAddress;
    env.TEMPORAL_NAMESPACE ??= local.temporalNamespace;
    const codecFile = path.join(dataDir(), PAYLOAD_CODEC_FILE);
    if (!env.PAYLOAD_CODEC_KEYS && existsSync(codecFile)) {
      const codec = JSON.parse(readFileSync(codecFile, 'utf8')) as LocalPayloadCodec;
      env.PAYLOAD_CODEC_KEYS = JSON.stringify({ [codec.keyId]: codec.key });
      env.PAYLOAD_CODEC_KEY_ID = codec.keyId;
    }
  }
  const parsed = temporalVariables.safeParse(env);
  if (!parsed.success) throw usageError(`invalid Temporal settings: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`);
  const problem = temporalConnectionProblem(parsed.data) ?? payloadCodecProblem(parsed.data);
  if (problem) throw usageError(problem);
  return parsed.data;
}

/** The running local stack (.data/stack.json), or DATABASE_URL / TEMPORAL_ADDRESS / TEMPORAL_NAMESPACE / API_URL. */
export function connectionSettings() {
  const local = process.env.DATABASE_URL && process.env.TEMPORAL_ADDRESS ? null : stackInfo();
  return {
    /** Read when used: commands that only need the database work without Temporal settings. */
    get temporal() {
      return temporalClientConfig(local);
    },
    databaseUrl: process.env.DATABASE_URL ?? local?.databaseUrl ?? '',
    temporalAddress: process.env.TEMPORAL_ADDRESS ?? local?.temporalAddress ?? '127.0.0.1:7233',
    temporalNamespace: process.env.TEMPORAL_NAMESPACE ?? local?.temporalNamespace ?? 'default',
    taskQueue: process.env.TEMPORAL_TASK_QUEUE ?? 'private-route',
    apiUrl: process.env.API_URL ?? local?.apiUrl ?? 'http://127.0.0.1:3000',
  };
}

/** Read-only chain access for routectl: CHAIN_RPC_URLS (as the service has it), else the local stack's chains. */
export function chainClients(): ChainClients {
  if (process.env.CHAIN_RPC_URLS) {
    try {
      return createChainClients(JSON.parse(process.env.CHAIN_RPC_URLS) as Record<string, string>);
    } catch {
      throw usageError('CHAIN_RPC_URLS must be JSON: {"42161":"https://…"}');
    }
  }
  return createChainClients(Object.fromEntries(stackInfo().manifest.chains.map((c) => [String(c.chainId), c.rpcUrl])));
}

export interface OperatorContext {
  db: Database;
  temporal: Client;
  taskQueue: string;
  close(): Promise<void>;
}

export async function withOperatorContext<T>(fn: (ctx: OperatorContext) => Promise<T>): Promise<T> {
  const settings = connectionSettings();
  const database = connectDatabase(settings.databaseUrl, { max: 2 });
  let connection: Connection | null = null;
  try {
    const connected = await connectTemporalClient(settings.temporal);
    connection = connected.connection;
    const temporal: Client = connected.client;
    return await fn({ db: database.db, temporal, taskQueue: settings.taskQueue, close: async () => {} });
  } finally {
    await connection?.close();
    await database.close();
  }
}

export async function loadRoute(ctx: OperatorContext, routeId: string) {
  const row = await transferOf(ctx.db, routeId);
  if (!row) throw unknownRoute(routeId);
  return row;
}

export const print = (value: unknown): void => {
  process.stdout.write(`${typeof value === 'string' ? value : JSON.stringify(value, null, 2)}\n`);
};
