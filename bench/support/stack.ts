/**
 * What the benchmarks share: the real local stack in-process on free ports with fresh state (as
 * test/support/testStack.ts starts it), and a client's moves against it through the public API: create a
 * transfer, fund its deposit address from the faucet, poll GET until it is terminal.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createPublicClient, createWalletClient, erc20Abi, http, type Address, type PublicClient } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { freePorts } from '../../devnet/ports.ts';
import { startLocalStack, type LocalStack } from '../../devnet/stack.ts';
import { createLogger, isLogLevel } from '../../src/logger.ts';
import { createApiKey } from '../../src/partners/apiKeys.ts';
import { bundleWorkflows } from '../../src/temporal/worker.ts';
import { freshAddress } from './address.ts';
import { startWorkerProcess, type WorkerProcess } from './workerProcess.ts';

export { freshAddress };

export type Role = 'source' | 'hub' | 'destination';

/**
 * The privacy window at its minimum: no anonymity set to wait for, exit epochs of 1 s, the ASP emulator's
 * 1 s approval. What is left of a transfer's time is orchestration, chains and the proof.
 */
export const MIN_PRIVACY_WINDOW_ENV: Record<string, string> = {
  POOL_ETA_SECONDS: '1',
  PRIVACY_EXIT_EPOCH_SECONDS: '1',
  PRIVACY_MIN_ANONYMITY_SET: '1',
  PRIVACY_MAX_WAIT_SECONDS: '5',
  PRIVACY_POLL_SECONDS: '1',
};

export interface BenchStack {
  stack: LocalStack;
  /** The worker's own process (`worker: 'external'`); null when the worker runs in this process. */
  worker: WorkerProcess | null;
  /** Stops the worker process (if any) first, then the stack. */
  close(): Promise<void>;
}

/**
 * Starts the whole local stack (Temporal dev server, Postgres, anvil chains, emulators, API and, unless
 * `worker: 'external'`, the worker) in this process. Service logs go to stderr at `warn` (BENCH_LOG_LEVEL=info|debug shows more).
 * `pollIntervalMs`: how often the service polls chains and providers; production's default (1 s) unless given.
 * `worker: 'external'`: the worker runs as a process of its own (devnet/worker.ts, as in production and
 * the crash drill), started here and ready before this resolves; it polls at production's interval.
 */
export async function startBenchStack(
  opts: { env?: Record<string, string | undefined>; pollIntervalMs?: number; worker?: 'in-process' | 'external' } = {},
): Promise<BenchStack> {
  const external = opts.worker === 'external';
  if (external && opts.pollIntervalMs !== undefined)
    throw new Error("pollIntervalMs applies to an in-process worker only: the worker process polls at production's interval");
  const dataDir = await mkdtemp(path.join(tmpdir(), 'private-route-bench-'));
  try {
    const [api, temporal, temporalUi, postgres, relay, source, hub, destination] = (await freePorts(8)) as [
      number,
      number,
      number,
      number,
      number,
      number,
      number,
      number,
    ];
    const level = isLogLevel(process.env.BENCH_LOG_LEVEL) ? process.env.BENCH_LOG_LEVEL : 'warn';
    const logger = createLogger({ level, write: (line) => process.stderr.write(`${line}\n`) });
    const stack = await startLocalStack({
      dataDir,
      ports: { api, temporal, temporalUi, postgres, relay, source, hub, destination, workerHttp: 0 },
      ephemeral: true,
      worker: external ? 'external' : 'in-process',
      // The worker process bundles its own workflows.
      workflowBundle: external ? undefined : await bundleWorkflows({ logger }),
      pollIntervalMs: opts.pollIntervalMs,
      // Benchmarks create hundreds of transfers from one address: no abuse limits.
      env: { RATE_LIMIT_PER_MINUTE: '0', ...opts.env },
      logger,
    });
    let worker: WorkerProcess | null = null;
    if (external) {
      try {
        worker = await startWorkerProcess({ dataDir, logLevel: level });
      } catch (error) {
        await stack.stop();
        throw error;
      }
    }
    return {
      stack,
      worker,
      async close() {
        try {
          await worker?.stop();
        } finally {
          try {
            await stack.stop();
          } finally {
            await rm(dataDir, { recursive: true, force: true });
          }
        }
      },
    };
  } catch (error) {
    await rm(dataDir, { recursive: true, force: true });
    throw error;
  }
}

const REQUEST_TIMEOUT_MS = 30_000;

/** statusToken by routeId of the transfers api() created: a GET of one reads the full view, as its creator would. */
const statusTokens = new Map<string, string>();

/**
 * One call of the public API; throws with the answer's error unless it is a success. `headers` are sent as well
 * (e.g. `X-Forwarded-For` to act as a distinct client of a stack started with TRUST_PROXY_HOPS=1).
 */
export async function api<T>(stack: LocalStack, method: 'GET' | 'POST', route: string, body?: unknown, headers: Record<string, string> = {}): Promise<T> {
  const routeId = method === 'GET' ? /^\/api\/private-route\/(rt_[0-9a-f]{32})$/.exec(route)?.[1] : undefined;
  const statusToken = routeId ? statusTokens.get(routeId) : undefined;
  const res = await fetch(`${stack.apiUrl}${route}`, {
    method,
    headers: {
      ...headers,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      ...(statusToken ? { authorization: `Bearer ${statusToken}` } : {}),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
  });
  const json = (await res.json()) as { success: boolean; data?: T; error?: string };
  if (!json.success || json.data === undefined) throw new Error(`${method} ${route} → ${res.status}: ${json.error ?? 'no data'}`);
  const created = json.data as { routeId?: unknown; statusToken?: unknown };
  if (method === 'POST' && route === '/api/private-route' && typeof created.routeId === 'string' && typeof created.statusToken === 'string') {
    statusTokens.set(created.routeId, created.statusToken);
  }
  return json.data;
}

export function chainOf(stack: LocalStack, role: Role) {
  const chain = stack.manifest.chains.find((c) => c.role === role);
  if (!chain) throw new Error(`no ${role} chain in the devnet manifest`);
  return chain;
}

/** A USDC → USDC transfer from the source to the destination chain, as a client would create it. */
export function transferRequest(stack: LocalStack, amount: string) {
  return {
    sourceChainId: chainOf(stack, 'source').chainId,
    destChainId: chainOf(stack, 'destination').chainId,
    amount,
    tokenSymbol: 'USDC',
    destTokenSymbol: 'USDC',
    userDestinationAddress: freshAddress(),
  };
}

export interface CreatedTransfer {
  routeId: string;
  /** Smallest units. */
  amount: string;
  depositAddress: Address;
}

export async function createTransfer(stack: LocalStack, amount = '25'): Promise<CreatedTransfer> {
  const t = await api<CreatedTransfer>(stack, 'POST', '/api/private-route', transferRequest(stack, amount));
  return { routeId: t.routeId, amount: t.amount, depositAddress: t.depositAddress };
}

/** Sends deposits from the faucet on the source chain, one at a time (one nonce sequence). */
export interface Funder {
  /** Pays `transfer.amount` of USDC to its deposit address; resolves with the time its receipt was seen (ms epoch). */
  fund(transfer: CreatedTransfer): Promise<number>;
}

export function faucetFunder(stack: LocalStack): Funder {
  const source = chainOf(stack, 'source');
  const usdc = source.tokens.find((t) => t.symbol === 'USDC')?.address;
  if (!usdc) throw new Error('no USDC on the source chain');
  const wallet = createWalletClient({ account: privateKeyToAccount(stack.manifest.faucetPrivateKey), transport: http(source.rpcUrl) });
  const client = createPublicClient({ transport: http(source.rpcUrl), pollingInterval: 50 }) as PublicClient;
  let queue: Promise<unknown> = Promise.resolve();
  return {
    fund(transfer) {
      const sent = queue.then(async () => {
        const hash = await wallet.writeContract({
          chain: null,
          address: usdc,
          abi: erc20Abi,
          functionName: 'transfer',
          args: [transfer.depositAddress, BigInt(transfer.amount)],
        });
        await client.waitForTransactionReceipt({ hash, timeout: REQUEST_TIMEOUT_MS });
        return Date.now();
      });
      queue = sent.catch(() => undefined);
      return sent;
    },
  };
}

export interface TransferView {
  routeId: string;
  status: string;
  error: string | null;
  updatedAt: string;
  completedAt: string | null;
}

const TERMINAL = new Set(['COMPLETED', 'FAILED']);

export interface Outcome {
  status: string;
  error: string | null;
  /** When the service recorded the terminal status (its completedAt, or updatedAt for FAILED; ms epoch); null if it did not within the timeout. */
  finishedAt: number | null;
}

/**
 * Polls GET of the given routes every `pollMs` (1 s) until all are terminal or `timeoutSeconds` pass (then the
 * unfinished ones keep their last status and `finishedAt: null`). Never throws for a slow route. The finishing time
 * is the service's own record, so the poll interval does not blur it, and polling costs the stack under test little.
 */
export async function awaitTerminal(
  stack: LocalStack,
  routeIds: string[],
  opts: { timeoutSeconds: number; pollMs?: number; progress?: (line: string) => void },
): Promise<Map<string, Outcome>> {
  const outcomes = new Map<string, Outcome>(routeIds.map((id) => [id, { status: 'UNKNOWN', error: null, finishedAt: null }]));
  const started = Date.now();
  const deadline = started + opts.timeoutSeconds * 1000;
  let lastProgress = started;
  for (;;) {
    const open = routeIds.filter((id) => outcomes.get(id)?.finishedAt === null);
    await Promise.all(
      open.map(async (id) => {
        const view = await api<TransferView>(stack, 'GET', `/api/private-route/${id}`);
        const finishedAt = TERMINAL.has(view.status) ? Date.parse(view.completedAt ?? view.updatedAt) : null;
        outcomes.set(id, { status: view.status, error: view.error, finishedAt });
      }),
    );
    const left = routeIds.filter((id) => outcomes.get(id)?.finishedAt === null).length;
    if (opts.progress && (Date.now() - lastProgress >= 15_000 || left === 0)) {
      const counts = new Map<string, number>();
      for (const id of routeIds) counts.set(outcomes.get(id)!.status, (counts.get(outcomes.get(id)!.status) ?? 0) + 1);
      opts.progress(`  ${Math.round((Date.now() - started) / 1000)} s: ${[...counts].map(([s, n]) => `${s} ${n}`).join(', ')}`);
      lastProgress = Date.now();
    }
    if (left === 0 || Date.now() > deadline) return outcomes;
    await new Promise((resolve) => setTimeout(resolve, opts.pollMs ?? 1_000));
  }
}

/** Progress lines go to stderr; stdout carries the figures. */
export const progress = (line: string) => process.stderr.write(`${line}\n`);

const keysByStack = new WeakMap<LocalStack, Map<string, Promise<string>>>();

/**
 * The API key of a simulated client, made on first use: webhooks need a key (docs/api.md, "Webhooks"), and a client
 * with a key of its own is one client of its own in an anonymity set, as one address was.
 */
export function clientKey(stack: LocalStack, client: string): Promise<string> {
  let keys = keysByStack.get(stack);
  if (!keys) keysByStack.set(stack, (keys = new Map()));
  let key = keys.get(client);
  if (!key) {
    key = createApiKey(stack.service.db, `bench-${client.replaceAll(/[^A-Za-z0-9]/g, '-')}-${keys.size}`).then((created) => created.key);
    keys.set(client, key);
  }
  return key;
}
