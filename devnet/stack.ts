import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Client } from '@temporalio/client';
import type { WorkflowBundleWithSourceMap } from '@temporalio/worker';
import { type Address, createPublicClient, http, toHex } from 'viem';
import { english, generateMnemonic } from 'viem/accounts';
import { startApi } from '../src/api/startApi.ts';
import { ensureBackgroundWorkflows } from '../src/temporal/backgroundWorkflows.ts';
import { ACCOUNT_XPUB_VARIABLES, loadConfig, type Config } from '../src/config.ts';
import { migrateDatabase } from '../src/db/client.ts';
import { assertChainsHoldRecords } from './chainRecords.ts';
import { createFaultRegistry } from './emulators/faults.ts';
import { startAspEmulator, type AspEmulator } from './emulators/asp/index.ts';
import { startChainRpcProxy } from './emulators/chain-rpc/index.ts';
import { startIrisEmulator } from './emulators/iris/index.ts';
import { startRelayEmulator, type RelayEmulator } from './emulators/relay/index.ts';
import { DEVNET_CCTP_ATTESTER_KEY } from './cctp.ts';
import { DEVNET_ASP_POSTMAN_KEY } from './privacyPools.ts';
import { createLogger, type Logger } from '../src/logger.ts';
import { StopList } from '../src/shutdown.ts';
import { createApiContext, createWorkerContext, type WorkerContext } from '../src/runtime.ts';
import { startSignerProcess } from './signerProcess.ts';
import { startWorkerProcess } from '../src/workerProcess.ts';
import { generatePayloadCodecKey, payloadCodecOf } from '../src/temporal/codec.ts';
import { startCodecEndpoint } from '../src/temporal/codecServer.ts';
import { freePort } from './ports.ts';
import { DEVNET_ACCOUNTS, startDevnetChains } from './chains.ts';
import type { DevnetManifest } from './manifest.ts';
import { startLocalPostgres } from './postgres.ts';
import { claimDataDir, noProcessRegistry, type ProcessRegistry } from './processes.ts';
import { readTemporalDevConfig, startTemporalDevServer, type TemporalDevServer } from './temporalServer.ts';
import {
  API_ENV_FILE,
  PAYLOAD_CODEC_FILE,
  STACK_INFO_FILE,
  WEBHOOK_SECRET_FILE,
  WORKER_ENV_FILE,
  type DevnetPayloadCodec,
  type StackInfo,
} from './stackInfo.ts';

/** Starting local prices of the emulated bridge (cross-asset legs use them). */
export const DEVNET_USD_PRICES = { USDC: '1', WETH: '2500' };

/**
 * The emulated bridge's prices drift from DEVNET_USD_PRICES in a seeded random walk (USDC stays at 1):
 * DEVNET_PRICE_VOLATILITY_BPS per step at most (default 10; 0 = fixed prices), one step every
 * DEVNET_PRICE_STEP_SECONDS (default 5), DEVNET_PRICE_SEED choosing the walk.
 */
function devnetPriceWalk(env: { volatilityBps?: string; stepSeconds?: string; seed?: string }) {
  return {
    seed: env.seed ?? 'private-route-devnet',
    stepMs: Number(env.stepSeconds ?? 5) * 1000,
    volatilityBps: Number(env.volatilityBps ?? 10),
  };
}

/**
 * The local stack's privacy rules: the same mechanisms as production (the ASP's approval, a minimum anonymity
 * set with a bounded wait, then the exit lottery) in a window of seconds, so a transfer takes about 20 s.
 * Override any of them with the same variables (docs/privacy.md).
 */
export const DEVNET_PRIVACY_ENV = {
  POOL_ETA_SECONDS: '1',
  PRIVACY_EXIT_EPOCH_SECONDS: '3',
  // The exit lottery (docs/privacy.md, "Timing"): a class whose routes ask for peers waits 9–45 s on average after
  // its gates open, and flushes 3 minutes after its oldest open gate; its traffic is counted over 432 s, a day of
  // production's 10-minute epochs at 3 s each. Routes that ask for nobody but themselves leave in the next epoch.
  PRIVACY_EXIT_MEAN_MIN_SECONDS: '9',
  PRIVACY_EXIT_MEAN_MAX_SECONDS: '45',
  PRIVACY_EXIT_FLUSH_SECONDS: '180',
  PRIVACY_TRAFFIC_WINDOW_SECONDS: '432',
  PRIVACY_MIN_PEER_AGE_SECONDS: '0',
  // Without the statusToken a route's end shows 0–5 s after it happened (production: up to 6 h).
  PUBLIC_STATUS_DELAY_MAX_SECONDS: '5',
  PUBLIC_STATUS_HOLD_SECONDS: '40',
  PRIVACY_MIN_ANONYMITY_SET: '1',
  PRIVACY_MAX_WAIT_SECONDS: '20',
  PRIVACY_POLL_SECONDS: '1',
  PRIVACY_REVIEW_TIMEOUT_SECONDS: '300',
  // Refunds of stray deposits wait 1–5 s (production: 1–6 h) after they are found.
  REFUND_DELAY_MIN_SECONDS: '1',
  REFUND_DELAY_MAX_SECONDS: '5',
  STRAY_LIST_BATCH_SECONDS: '10',
  // Cross-asset quotes hold their prices for a minute (production: an hour) while the emulator's prices walk.
  PRICE_EPOCH_SECONDS: '60',
} as const;

/** How long the ASP emulator keeps a deposit pending before approving it (ASP_APPROVAL_DELAY_MS). */
const DEVNET_ASP_APPROVAL_DELAY_MS = 1000;

export interface LocalStackOptions {
  dataDir: string;
  ports: { api: number; temporal: number; temporalUi: number; postgres: number; relay: number; source: number; hub: number; destination: number } & {
    /** Iris emulator in burn-and-mint mode (default: a free port). */
    iris?: number;
    /** ASP emulator (default: a free port). */
    asp?: number;
    /** Worker's /healthz, /readyz, /metrics (default: a free port). */
    workerHttp?: number;
    /** The API's internal /metrics listener (default: a free port). */
    apiMetrics?: number;
    /** The Temporal SDK's own Prometheus exporter (default: not exported). */
    temporalMetrics?: number;
    /** The codec endpoint the Web UI and `temporal` CLI decrypt histories through (default: a free port). */
    codec?: number;
  };
  /** Extra configuration (same names as the environment); wins over the devnet defaults. */
  env?: Record<string, string | undefined>;
  /** Fresh chains and Temporal state on every start (tests). */
  ephemeral?: boolean;
  workflowBundle?: WorkflowBundleWithSourceMap;
  /**
   * `external`: no worker in this process; run one with `npm run devnet:worker` (it reads the stack's
   * configuration from the data folder), so a drill can kill and restart the worker alone.
   */
  worker?: 'in-process' | 'external';
  pollIntervalMs?: number;
  logger?: Logger;
}

export interface LocalStack {
  config: Config;
  apiUrl: string;
  /** The API's /metrics, on its internal listener (the public apiUrl answers /metrics with 404). */
  apiMetricsUrl: string;
  /** Worker's health, readiness and metrics endpoints (null with an external worker). */
  workerUrl: string | null;
  /** The Temporal SDK's Prometheus endpoint, when exported. */
  temporalMetricsUrl?: string;
  /** The codec endpoint (POST /decode, /encode) and its bearer token; null with PAYLOAD_CODEC=off. */
  codec: { url: string; authToken: string } | null;
  temporal: { address: string; namespace: string; uiUrl: string; client: Client };
  relay: RelayEmulator;
  asp: AspEmulator;
  /** The Iris emulator, in burn-and-mint mode. */
  irisUrl: string | null;
  manifest: DevnetManifest;
  /** The worker's parts (its accounts sign through the stack's signer process); the API has its own, keyless. */
  service: WorkerContext;
  /** The signer process's URL (the worker's SIGNER_URL). */
  signerUrl: string;
  stop(): Promise<void>;
}

/**
 * Starts the whole service on one machine: Temporal dev server, Postgres, three anvil chains with test
 * tokens and the devnet privacy pool, the Relay emulator, the worker and the API. Stops in reverse order.
 */
export async function startLocalStack(opts: LocalStackOptions): Promise<LocalStack> {
  const logger = opts.logger ?? createLogger();
  const log = (line: string) => logger.info(line);
  const stops = new StopList(logger);
  const stop = () => stops.stopAll();

  try {
    await mkdir(opts.dataDir, { recursive: true });
    // Stops what a crashed earlier run left behind (its own children only), or refuses if it still runs.
    const processes = await claimDataDir(opts.dataDir, { log });
    stops.add('the process record', async () => processes.close());
    const webhookSigningSecret = await devnetWebhookSigningSecret(opts.dataDir, opts.ephemeral);
    const infrastructure = await startLocalInfrastructure({ ...opts, processes, logger });
    stops.add('local infrastructure', infrastructure.stop);
    const { configEnv, temporalServer, manifest, relay, asp, iris, payloadCodec, codecUrl } = infrastructure;
    // Started once the contracts are deployed: its spending policy reads their addresses and the route records
    // (read-only) and keeps its audit log in the data folder. Stopped after the worker (StopList stops in reverse).
    const signerProcess = await startSignerProcess({
      // The keys (the data folder's own mnemonic, the devnet's gas and relayer keys) go to the signer process only.
      keys: {
        mnemonic: opts.env?.SIGNER_MNEMONIC ?? (await devnetSignerMnemonic(opts.dataDir, opts.ephemeral)),
        gasPrivateKey: opts.env?.GAS_ACCOUNT_PRIVATE_KEY ?? DEVNET_ACCOUNTS.gas,
        poolRelayerPrivateKey: opts.env?.POOL_RELAYER_PRIVATE_KEY ?? DEVNET_ACCOUNTS.poolRelayer,
      },
      policyEnv: signerPolicyEnv(configEnv, opts.dataDir),
      // npm test keeps them in a SoftHSM2 token (DEVNET_SIGNER_KEYS=pkcs11), as production keeps them in an HSM.
      softHsmDir: signerKeysIn(opts) === 'pkcs11' ? await devnetSoftHsmDir(opts.dataDir, opts.ephemeral) : undefined,
      processes,
      logLevel: opts.env?.LOG_LEVEL,
    });
    stops.add('signer process', signerProcess.stop);
    const { xpubs, poolRelayerAddresses } = signerProcess.publicKeys;
    // The relayer's other sending accounts are new addresses: anvil gives them gas, as an operator's funding would.
    await fundOnce(manifest.chains, poolRelayerAddresses.slice(1));
    // The webhook signing secret is the worker's alone (the API neither needs nor gets it).
    const workerEnv = { ...configEnv, SIGNER_URL: signerProcess.url, SIGNER_AUTH_TOKEN: signerProcess.authToken, WEBHOOK_SIGNING_SECRET: webhookSigningSecret };
    const apiEnv = { ...configEnv, DEPOSIT_ACCOUNT_XPUB: xpubs.deposit, HUB_ACCOUNT_XPUB: xpubs.hub };
    const config = loadConfig(workerEnv, 'worker');
    const apiConfig = loadConfig(apiEnv, 'api');
    // What `npm run devnet:worker` runs with: the signer's URL and token, no key (owner-only all the same).
    await writeFile(path.join(opts.dataDir, WORKER_ENV_FILE), `${JSON.stringify(workerEnv, null, 2)}\n`, { mode: 0o600 });
    // What a production API (src/api.ts) against this stack runs with: the xpubs, no key.
    await writeFile(path.join(opts.dataDir, API_ENV_FILE), `${JSON.stringify(apiEnv, null, 2)}\n`, { mode: 0o600 });

    const service = await createWorkerContext(config, { pollIntervalMs: opts.pollIntervalMs, signer: signerProcess.signer });
    stops.add('database pool and prover threads', service.close);

    const worker =
      opts.worker === 'external'
        ? undefined
        : await startWorkerProcess(service, logger, {
            httpPort: opts.ports.workerHttp ?? 0,
            temporalMetricsPort: opts.ports.temporalMetrics,
            workflowBundle: opts.workflowBundle,
          });
    if (worker) stops.add('worker and its endpoints', worker.stop);

    const apiService = createApiContext(apiConfig, { pollIntervalMs: opts.pollIntervalMs });
    stops.add("the API's database pool", apiService.close);
    const api = await startApi(apiService, logger);
    stops.add('API', api.stop);
    // The in-process worker started them; an external one starts them too, but they exist before it runs.
    if (!worker) await ensureBackgroundWorkflows(api.temporal, config);
    const codec = payloadCodecOf(config);
    // The stack's own endpoint, for its dev server's Web UI whichever worker runs (a worker serves one only with CODEC_AUTH_TOKEN).
    if (codec) {
      const { port } = new URL(codecUrl);
      // The dev server's Web UI cannot send a token: on 127.0.0.1 its origin is let through (docs/local-stack.md).
      const endpoint = await startCodecEndpoint({
        codec,
        authToken: payloadCodec.authToken,
        uiOrigin: temporalServer.uiUrl,
        trustUiOrigin: true,
        host: '127.0.0.1',
        port: Number(port),
        logger,
      });
      stops.add('codec endpoint', endpoint.stop);
    }

    const info: StackInfo = {
      apiUrl: api.url,
      temporalAddress: config.TEMPORAL_ADDRESS,
      temporalNamespace: config.TEMPORAL_NAMESPACE,
      temporalUiUrl: temporalServer.uiUrl,
      relayUrl: relay.url,
      databaseUrl: configEnv.DATABASE_URL ?? '',
      manifest,
    };
    await writeFile(path.join(opts.dataDir, STACK_INFO_FILE), `${JSON.stringify(info, null, 2)}\n`);

    return {
      config,
      apiUrl: api.url,
      apiMetricsUrl: `${api.metricsUrl}/metrics`,
      workerUrl: worker?.httpUrl ?? null,
      temporalMetricsUrl: worker?.temporalMetricsUrl,
      codec: codec ? { url: codecUrl, authToken: payloadCodec.authToken } : null,
      temporal: { address: config.TEMPORAL_ADDRESS, namespace: config.TEMPORAL_NAMESPACE, uiUrl: temporalServer.uiUrl, client: api.temporal },
      relay,
      asp,
      irisUrl: iris?.url ?? null,
      manifest,
      service,
      signerUrl: signerProcess.url,
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

export interface LocalInfrastructure {
  /** The service's configuration for these parts, keys and xpubs aside (the API and the worker add their own). */
  configEnv: Record<string, string>;
  temporalServer: TemporalDevServer;
  manifest: DevnetManifest;
  relay: RelayEmulator;
  asp: AspEmulator;
  iris: { url: string; stop(): Promise<void> } | null;
  payloadCodec: DevnetPayloadCodec;
  /** Where the stack's codec endpoint listens, when it starts one. */
  codecUrl: string;
  stop(): Promise<void>;
}

/**
 * What the service runs against on one machine, without the service itself: Temporal dev server, Postgres, the
 * anvil chains with tokens and the devnet privacy pool, the Relay, ASP (and in burn-and-mint mode Iris) emulators.
 * `startLocalStack` adds the signer, worker and API; a test of the production build starts those from dist/.
 * `temporalRegistrations: false` starts the dev server with neither the service's namespace nor its search
 * attributes (the service's namespace is then TEMPORAL_NAMESPACE of `opts.env`, for `routectl setup` to create).
 */
export async function startLocalInfrastructure(
  opts: Omit<LocalStackOptions, 'worker' | 'workflowBundle' | 'pollIntervalMs'> & { processes?: ProcessRegistry; temporalRegistrations?: boolean },
): Promise<LocalInfrastructure> {
  const logger = opts.logger ?? createLogger();
  const log = (line: string) => logger.info(line);
  const stops = new StopList(logger);
  const processes = opts.processes ?? noProcessRegistry;
  try {
    await mkdir(opts.dataDir, { recursive: true });
    const devConfig = readTemporalDevConfig();
    const temporalConfig = opts.temporalRegistrations === false ? { ...devConfig, namespace: 'default', searchAttributes: {} } : devConfig;
    const burnAndMint = opts.env?.BRIDGE_PROVIDER === 'cctp';
    const payloadCodec = await devnetPayloadCodec(opts.dataDir, opts.ephemeral);
    const codecUrl = `http://127.0.0.1:${opts.ports.codec ?? (await freePort())}`;
    const [temporalServer, postgres, chains] = await allStarted(stops, logger, ['Temporal dev server', 'Postgres', 'anvil chains'], [
      startTemporalDevServer({
        dataDir: opts.dataDir,
        config: temporalConfig,
        port: opts.ports.temporal,
        uiPort: opts.ports.temporalUi,
        ephemeral: opts.ephemeral,
        codecEndpoint: codecUrl,
        processes,
        log,
      }),
      startLocalPostgres({ databaseUrl: opts.env?.DATABASE_URL, dataDir: opts.dataDir, port: opts.ports.postgres, ephemeral: opts.ephemeral, log }),
      startDevnetChains({
        ports: { source: opts.ports.source, hub: opts.ports.hub, destination: opts.ports.destination },
        stateDir: opts.ephemeral ? undefined : path.join(opts.dataDir, 'chains'),
        cctp: burnAndMint,
        processes,
        log,
      }),
    ] as const);
    await migrateDatabase(postgres.url);
    const { manifest } = chains;
    if (!opts.ephemeral) await assertChainsHoldRecords(postgres.url, manifest.chains, opts.dataDir);
    // One fault registry for the stack: the Relay emulator's /_emulator/faults controls all four operations.
    const faults = createFaultRegistry((entry) => logger.info('fault injection', entry as Record<string, unknown>));
    const relay = await startRelayEmulator({
      manifest,
      faults,
      port: opts.ports.relay,
      solverPrivateKey: DEVNET_ACCOUNTS.relaySolver,
      usdPrices: DEVNET_USD_PRICES,
      priceWalk: devnetPriceWalk({
        volatilityBps: opts.env?.DEVNET_PRICE_VOLATILITY_BPS,
        stepSeconds: opts.env?.DEVNET_PRICE_STEP_SECONDS,
        seed: opts.env?.DEVNET_PRICE_SEED,
      }),
      statePath: opts.ephemeral ? undefined : path.join(opts.dataDir, 'relay-emulator.json'),
      log: (entry) => logger.debug('relay emulator', entry as Record<string, unknown>),
    });
    stops.add('Relay emulator', relay.stop);

    const hub = manifest.chains.find((c) => c.role === 'hub');
    if (!hub) throw new Error('devnet manifest has no hub chain');
    // The service reaches every chain through a proxy: L2-like fee suggestions, and on the hub the pool's faults.
    const serviceRpcUrls: Record<string, string> = {};
    for (const chain of manifest.chains) {
      const proxy = await startChainRpcProxy({
        upstreamUrl: chain.rpcUrl,
        pool: chain.role === 'hub' ? { entrypoint: manifest.privacyPools.entrypoint, faults } : undefined,
        port: 0,
      });
      stops.add(`${chain.role} chain RPC proxy`, proxy.stop);
      serviceRpcUrls[String(chain.chainId)] = proxy.url;
    }
    const asp = await startAspEmulator({
      chainId: hub.chainId,
      rpcUrl: hub.rpcUrl,
      deployment: manifest.privacyPools,
      postmanPrivateKey: DEVNET_ASP_POSTMAN_KEY,
      approvalDelayMs: Number(opts.env?.ASP_APPROVAL_DELAY_MS ?? DEVNET_ASP_APPROVAL_DELAY_MS),
      port: opts.ports.asp ?? 0,
      faults,
      statePath: opts.ephemeral ? undefined : path.join(opts.dataDir, 'asp-emulator.json'),
      log: (entry) => logger.debug('asp emulator', entry as Record<string, unknown>),
    });
    stops.add('ASP emulator', asp.stop);
    let iris: { url: string; stop(): Promise<void> } | null = null;
    if (burnAndMint) {
      iris = await startIrisEmulator({
        manifest,
        port: opts.ports.iris ?? 0,
        attesterPrivateKey: DEVNET_CCTP_ATTESTER_KEY,
        faults,
        statePath: opts.ephemeral ? undefined : path.join(opts.dataDir, 'iris-emulator.json'),
        // DEVNET_IRIS_EXPIRATION_BLOCKS: how long an attested burn stays receivable (tests of expiry set a few dozen).
        ...(opts.env?.DEVNET_IRIS_EXPIRATION_BLOCKS && { expirationBlocks: BigInt(opts.env.DEVNET_IRIS_EXPIRATION_BLOCKS) }),
        log: (entry) => logger.debug('iris emulator', entry as Record<string, unknown>),
      });
      stops.add('Iris emulator', iris.stop);
    }
    const configEnv = {
      PORT: String(opts.ports.api),
      API_METRICS_PORT: String(opts.ports.apiMetrics ?? 0),
      TEMPORAL_ADDRESS: temporalServer.address,
      TEMPORAL_NAMESPACE: opts.temporalRegistrations === false ? (opts.env?.TEMPORAL_NAMESPACE ?? 'private-route') : temporalServer.namespace,
      RELAY_API_URL: relay.url,
      ...(iris &&
        manifest.cctp && {
          IRIS_API_URL: iris.url,
          CCTP_LOCAL_CHAINS: JSON.stringify(
            manifest.cctp.chains.map((c) => {
              const chain = manifest.chains.find((m) => m.chainId === c.chainId);
              return { ...c, name: chain?.name, displayName: chain?.displayName };
            }),
          ),
        }),
      HUB_CHAIN_ID: String(hub.chainId),
      CHAIN_RPC_URLS: JSON.stringify(serviceRpcUrls),
      PRIVACY_POOLS_ENTRYPOINT: manifest.privacyPools.entrypoint,
      PRIVACY_POOLS_START_BLOCK: String(manifest.privacyPools.deployBlock),
      PRIVACY_POOLS_ASP_URL: asp.url,
      // anvil mines a block per transaction and never reorgs: a deposit counts in the block it lands in.
      DEPOSIT_CONFIRMATIONS: '0',
      ...DEVNET_PRIVACY_ENV,
      // Webhook receivers of the local stack listen on 127.0.0.1.
      WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
      PAYLOAD_CODEC_KEYS: JSON.stringify({ [payloadCodec.keyId]: payloadCodec.key }),
      PAYLOAD_CODEC_KEY_ID: payloadCodec.keyId,
      ...withoutKeys(definedOnly(opts.env ?? {})),
      DATABASE_URL: postgres.url,
    };
    return { configEnv, temporalServer, manifest, relay, asp, iris, payloadCodec, codecUrl, stop: () => stops.stopAll() };
  } catch (error) {
    await stops.stopAll();
    throw error;
  }
}

/** The local stack's signer secret: generated once and kept in the data folder so restarts find their routes' funds. */
async function devnetSignerMnemonic(dataDir: string, ephemeral?: boolean): Promise<string> {
  const file = path.join(dataDir, 'signer-mnemonic');
  if (!ephemeral && existsSync(file)) return readFileSync(file, 'utf8').trim();
  const mnemonic = generateMnemonic(english);
  if (!ephemeral) await writeFile(file, `${mnemonic}\n`, { mode: 0o600 });
  return mnemonic;
}

/** Native currency for accounts that have none yet (a restart leaves what they hold). */
async function fundOnce(chains: readonly { rpcUrl: string }[], addresses: readonly Address[]): Promise<void> {
  for (const chain of chains) {
    const client = createPublicClient({ transport: http(chain.rpcUrl) });
    for (const address of addresses) {
      if ((await client.getBalance({ address })) === 0n)
        await client.request({ method: 'anvil_setBalance' as never, params: [address, toHex(10n ** 21n)] as never });
    }
  }
}

/** Where the local stack's signer keeps its keys: DEVNET_SIGNER_KEYS=pkcs11 (npm test sets it) for a SoftHSM2 token. */
function signerKeysIn(opts: LocalStackOptions): 'env' | 'pkcs11' {
  const choice = opts.env?.DEVNET_SIGNER_KEYS ?? process.env.DEVNET_SIGNER_KEYS ?? 'env';
  if (choice !== 'env' && choice !== 'pkcs11') throw new Error(`DEVNET_SIGNER_KEYS must be "env" or "pkcs11", not "${choice}"`);
  return choice;
}

/** The signer's SoftHSM2 token folder: kept with the data folder's mnemonic, fresh with an ephemeral stack's fresh one. */
async function devnetSoftHsmDir(dataDir: string, ephemeral?: boolean): Promise<string> {
  const dir = path.join(dataDir, 'softhsm');
  if (ephemeral) await rm(dir, { recursive: true, force: true });
  return dir;
}

/** The local stack's history encryption: generated once per data folder (fresh per ephemeral stack); routectl reads it. */
async function devnetPayloadCodec(dataDir: string, ephemeral?: boolean): Promise<DevnetPayloadCodec> {
  const file = path.join(dataDir, PAYLOAD_CODEC_FILE);
  if (!ephemeral && existsSync(file)) return JSON.parse(readFileSync(file, 'utf8')) as DevnetPayloadCodec;
  const codec: DevnetPayloadCodec = { keyId: 'devnet-1', key: generatePayloadCodecKey(), authToken: randomBytes(32).toString('hex') };
  await writeFile(file, `${JSON.stringify(codec)}\n`, { mode: 0o600 });
  return codec;
}

/** The local stack's webhook signing secret: generated once per data folder (fresh per ephemeral stack); worker-env.json has it. */
async function devnetWebhookSigningSecret(dataDir: string, ephemeral?: boolean): Promise<string> {
  const file = path.join(dataDir, WEBHOOK_SECRET_FILE);
  if (!ephemeral && existsSync(file)) return readFileSync(file, 'utf8').trim();
  const secret = randomBytes(32).toString('hex');
  if (!ephemeral) await writeFile(file, `${secret}\n`, { mode: 0o600 });
  return secret;
}

/**
 * Starts parts side by side; each one that started is stopped by `stops` even when another failed. They do not
 * depend on each other, so they also stop side by side (one entry of `stops`, each part still reported by name).
 */
async function allStarted<T extends readonly Promise<{ stop(): Promise<void> }>[]>(
  stops: StopList,
  logger: Logger,
  names: string[],
  starts: T,
): Promise<{ -readonly [K in keyof T]: Awaited<T[K]> }> {
  const settled = await Promise.allSettled(starts);
  const started = settled.flatMap((result, i) => (result.status === 'fulfilled' ? [{ name: names[i] ?? `part ${i}`, stop: result.value.stop }] : []));
  if (started.length > 0) {
    stops.add(started.map((part) => part.name).join(', '), async () => {
      // A StopList per part: each keeps its own slow-stop notices and time limit.
      await Promise.all(
        started.map((part) => {
          const one = new StopList(logger);
          one.add(part.name, part.stop);
          return one.stopAll();
        }),
      );
    });
  }
  const failed = settled.find((result) => result.status === 'rejected');
  if (failed) throw failed.reason;
  return settled.map((result) => (result as PromiseFulfilledResult<unknown>).value) as { -readonly [K in keyof T]: Awaited<T[K]> };
}

/** Key settings of the caller's environment: the signer process takes the keys, the stack sets the rest itself. */
function withoutKeys(env: Record<string, string>): Record<string, string> {
  const keys = new Set([
    'SIGNER_MNEMONIC',
    'GAS_ACCOUNT_PRIVATE_KEY',
    'POOL_RELAYER_PRIVATE_KEY',
    'SIGNER_URL',
    'SIGNER_AUTH_TOKEN',
    ...ACCOUNT_XPUB_VARIABLES,
  ]);
  return Object.fromEntries(Object.entries(env).filter(([name]) => !keys.has(name)));
}

function definedOnly(env: Record<string, string | undefined>): Record<string, string> {
  return Object.fromEntries(Object.entries(env).filter((entry): entry is [string, string] => entry[1] !== undefined));
}

/** The signer's spending policy on the local stack: the stack's database and contracts, the audit log in the data folder. */
export function signerPolicyEnv(configEnv: Record<string, string>, dataDir: string): Record<string, string | undefined> {
  const pick = ['NETWORK', 'HUB_TOKEN_SYMBOL', 'PRIVACY_POOLS_ENTRYPOINT', 'CCTP_ENVIRONMENT', 'CCTP_LOCAL_CHAINS'] as const;
  return {
    SIGNER_POLICY: 'enforce',
    SIGNER_DATABASE_URL: configEnv.DATABASE_URL,
    // Tests spike the base fee to 1000 gwei: a top-up then needs about 1 ETH, a withdrawal's fees about as much.
    SIGNER_TOP_UP_CAP_WEI: '10000000000000000000',
    SIGNER_TX_FEE_CAP_WEI: '10000000000000000000',
    SIGNER_AUDIT_LOG: path.join(dataDir, SIGNER_AUDIT_LOG_FILE),
    // The signer's own copy of where income sweeps may go.
    ...(configEnv.INCOME_TREASURY_ADDRESS ? { SIGNER_INCOME_TREASURY: configEnv.INCOME_TREASURY_ADDRESS } : {}),
    ...Object.fromEntries(pick.filter((k) => configEnv[k] !== undefined).map((k) => [k, configEnv[k]])),
  };
}

/** The signer's audit log in the local stack's data folder (npm run signer:audit -- verify <file>). */
export const SIGNER_AUDIT_LOG_FILE = 'signer-audit.log';
