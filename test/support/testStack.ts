import { sendAsNewUser } from '../../devnet/newSender.ts';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createPublicClient, erc20Abi, http, type Address, type PublicClient } from 'viem';
import { english, generateMnemonic } from 'viem/accounts';
import { createRouteKeyring, type RouteAccounts } from '../../src/accounts/routeAccounts.ts';
import { freePorts } from '../../devnet/ports.ts';
import { startLocalStack, type LocalStack } from '../../devnet/stack.ts';
import { createLogger, type Logger } from '../../src/logger.ts';
import { bundleWorkflows } from '../../src/temporal/worker.ts';

/** A transfer as the API answers it (the fields tests read). */
export interface TransferView {
  routeId: string;
  status: string;
  error: string | null;
  needsAttention: boolean;
  depositAddress: Address;
  hubAccount: Address;
  amount: string;
  quotedOutputAmount: string;
  minAnonymitySet: number;
  privacy: { anonymitySet: number; waitedSeconds: number; leftAtMaxWait: boolean } | null;
}

export interface TestStack extends LocalStack {
  dataDir: string;
  /**
   * A route's accounts signing with the keys themselves, past the signer's spending policy: for a test to set up what
   * a crash or an earlier release left recorded (a send to an address no plan names). The service always signs
   * through the signer process (stack.service.keyring).
   */
  routeKeys(accountIndex: number): RouteAccounts;
  /**
   * Calls the API. A GET of a transfer this helper created sends its statusToken (remembered from the create
   * answer) for the full view; `headers` are added last.
   */
  api<T = unknown>(
    method: 'GET' | 'POST',
    route: string,
    body?: unknown,
    headers?: Record<string, string>,
  ): Promise<{ status: number; headers: Headers; body: { success: boolean; data?: T; error?: string } }>;
  /** statusToken by routeId, of the transfers api() created. */
  statusTokens: Map<string, string>;
  chainClient(role: 'source' | 'hub' | 'destination'): PublicClient;
  token(role: 'source' | 'hub' | 'destination', symbol: string): Address;
  balanceOf(role: 'source' | 'hub' | 'destination', symbol: string, owner: Address): Promise<bigint>;
  /** Sends `amount` of the faucet's `symbol` on the source chain to `to`, as a sender would. */
  fund(to: Address, symbol: string, amount: bigint): Promise<void>;
  /** Runs `routectl` (bin/routectl.mjs) against this stack; resolves with its exit code and output. */
  routectl(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }>;
  close(): Promise<void>;
}

/** The real local stack (Temporal dev server, embedded Postgres, anvil chains, Relay emulator) on free ports, fresh state. */
export async function startTestStack(opts: { env?: Record<string, string>; logger?: Logger } = {}): Promise<TestStack> {
  const dataDir = await mkdtemp(path.join(tmpdir(), 'private-route-test-'));
  const [api, temporal, temporalUi, postgres, relay, source, hub, destination, temporalMetrics] = (await freePorts(9)) as [
    number,
    number,
    number,
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  const mnemonic = opts.env?.SIGNER_MNEMONIC ?? generateMnemonic(english);
  const keyring = createRouteKeyring(mnemonic);
  const stack = await startLocalStack({
    dataDir,
    ports: { api, temporal, temporalUi, postgres, relay, source, hub, destination, workerHttp: 0, temporalMetrics },
    ephemeral: true,
    workflowBundle: await bundleWorkflows(),
    pollIntervalMs: 200,
    // Tests create many transfers from one address: no abuse limits unless a test sets them (test/api/abuse-limits.test.ts covers them).
    env: { DATABASE_URL: process.env.TEST_DATABASE_URL, RATE_LIMIT_PER_MINUTE: '0', ...opts.env, SIGNER_MNEMONIC: mnemonic },
    logger: opts.logger ?? createLogger({ level: process.env.TEST_LOG_LEVEL === 'debug' ? 'debug' : 'warn' }),
  });

  // Under npm test the signer's keys are in a SoftHSM2 token (scripts/run-tests.sh): a stack that did not make one would
  // let every whole-stack test pass without the token, so it is an error here.
  if (process.env.DEVNET_SIGNER_KEYS === 'pkcs11' && !existsSync(path.join(dataDir, 'softhsm', 'user-pin'))) {
    await stack.stop();
    throw new Error('DEVNET_SIGNER_KEYS=pkcs11 but the local stack made no SoftHSM2 token for its signer');
  }

  const chain = (role: 'source' | 'hub' | 'destination') => {
    const found = stack.manifest.chains.find((c) => c.role === role);
    if (!found) throw new Error(`no ${role} chain`);
    return found;
  };
  const clients = new Map<string, PublicClient>();
  const chainClient = (role: 'source' | 'hub' | 'destination') => {
    let client = clients.get(role);
    if (!client) clients.set(role, (client = createPublicClient({ transport: http(chain(role).rpcUrl), pollingInterval: 100 }) as PublicClient));
    return client;
  };
  const token = (role: 'source' | 'hub' | 'destination', symbol: string) => {
    const found = chain(role).tokens.find((t) => t.symbol === symbol);
    if (!found) throw new Error(`no ${symbol} on ${role}`);
    return found.address;
  };

  // The statusToken of every transfer this stack's api() created: its GETs read the full view, as the creator would.
  const statusTokens = new Map<string, string>();
  return {
    ...stack,
    dataDir,
    statusTokens,
    routeKeys: (accountIndex) => keyring.routeAccounts(accountIndex),
    async api(method, route, body, headers = {}) {
      const routeId = method === 'GET' ? /^\/api\/private-route\/(rt_[0-9a-f]{32})$/.exec(route)?.[1] : undefined;
      const statusToken = routeId ? statusTokens.get(routeId) : undefined;
      const response = await fetch(`${stack.apiUrl}${route}`, {
        method,
        headers: {
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
          ...(statusToken ? { authorization: `Bearer ${statusToken}` } : {}),
          ...headers,
        },
        body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
      });
      const answer = (await response.json()) as { success?: boolean; data?: { routeId?: unknown; statusToken?: unknown } };
      if (method === 'POST' && route === '/api/private-route' && typeof answer.data?.routeId === 'string' && typeof answer.data.statusToken === 'string') {
        statusTokens.set(answer.data.routeId, answer.data.statusToken);
      }
      return { status: response.status, headers: response.headers, body: answer as never };
    },
    chainClient,
    token,
    balanceOf: (role, symbol, owner) =>
      chainClient(role).readContract({ address: token(role, symbol), abi: erc20Abi, functionName: 'balanceOf', args: [owner] }),
    async fund(to, symbol, amount) {
      // From a new sender each time, as a different user would (one deposit sender is one client to the anonymity set).
      await sendAsNewUser({ rpcUrl: chain('source').rpcUrl, faucetPrivateKey: stack.manifest.faucetPrivateKey, token: token('source', symbol), to, amount });
    },
    routectl(...args) {
      return new Promise((resolve) => {
        execFile(process.execPath, ['bin/routectl.mjs', ...args], { env: { ...process.env, DATA_DIR: dataDir } }, (error, stdout, stderr) => {
          resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr });
        });
      });
    },
    async close() {
      await stack.stop();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

export async function waitFor<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 60_000, intervalMs = 200): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}
