import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client, Connection } from '@temporalio/client';
import { eq } from 'drizzle-orm';
import { createChainClients, type ChainClients } from '../chain/clients.ts';
import { connectDatabase, type Database } from '../db/client.ts';
import { transfers } from '../db/schema.ts';
import { readStackInfo, type StackInfo } from '../devnet/stackInfo.ts';

const repoRoot = fileURLToPath(new URL('../..', import.meta.url));

/** A failure routectl reports with its own exit code: 2 usage, 3 unknown route, 4 not allowed now. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: number,
  ) {
    super(message);
  }
}

export const usageError = (message: string) => new CliError(message, 2);
export const unknownRoute = (routeId: string) => new CliError(`unknown route ${routeId}`, 3);
export const notAllowed = (message: string) => new CliError(message, 4);

export function stackInfo(): StackInfo {
  return readStackInfo(path.resolve(repoRoot, process.env.DATA_DIR ?? '.data'));
}

/** The running local stack (.data/stack.json), or DATABASE_URL / TEMPORAL_ADDRESS / TEMPORAL_NAMESPACE / API_URL. */
export function connectionSettings() {
  const local = process.env.DATABASE_URL && process.env.TEMPORAL_ADDRESS ? null : stackInfo();
  return {
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
    connection = await Connection.connect({ address: settings.temporalAddress });
    const temporal = new Client({ connection, namespace: settings.temporalNamespace });
    return await fn({ db: database.db, temporal, taskQueue: settings.taskQueue, close: async () => {} });
  } finally {
    await connection?.close();
    await database.close();
  }
}

export async function loadRoute(ctx: OperatorContext, routeId: string) {
  const [row] = await ctx.db.select().from(transfers).where(eq(transfers.routeId, routeId));
  if (!row) throw unknownRoute(routeId);
  return row;
}

export const print = (value: unknown): void => {
  process.stdout.write(`${typeof value === 'string' ? value : JSON.stringify(value, null, 2)}\n`);
};
