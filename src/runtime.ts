import { privateKeyToAccount } from 'viem/accounts';
import { createRouteKeyring } from './accounts/routeAccounts.ts';
import { createChainClients } from './chain/clients.ts';
import { createTxSender } from './chain/txSender.ts';
import type { Config } from './config.ts';
import { connectDatabase } from './db/client.ts';
import { instrumentBridge } from './observability/metrics.ts';
import { createPrivacyPools } from './providers/privacy-pools/adapter.ts';
import { createAspClient } from './providers/privacy-pools/asp.ts';
import { createProver } from './providers/privacy-pools/prover.ts';
import { createRelayBridge } from './providers/relay/adapter.ts';
import { createCctpBridge } from './providers/cctp/adapter.ts';
import { IRIS_BASE_URLS, type LocalCctpDeployment, cctpNetwork, withLocalChains } from './providers/cctp/chains.ts';
import { createIrisClient } from './providers/cctp/iris.ts';
import { createAttestationPoller, type AttestationPoller } from './providers/cctp/attestationPoller.ts';
import { withCatalogCache } from './providers/cachedBridge.ts';
import { createCctpQuoteService } from './quote/cctpQuoteService.ts';
import { withQuoteCache } from './quote/quoteCache.ts';
import { createQuoteService, type QuoteService } from './quote/quoteService.ts';
import type { ActivityDeps } from '../activities/deps.ts';
import type { TransferSettings } from '../workflows/types.ts';
import type { PrivacySettings } from './transfers/transferService.ts';

/** The service's long-lived parts, assembled once from configuration and shared by the API and the worker. */
export function createServiceContext(config: Config, opts: { pollIntervalMs?: number } = {}) {
  const database = connectDatabase(config.DATABASE_URL);
  const chains = createChainClients(config.CHAIN_RPC_URLS);
  const sender = createTxSender(database.db, chains);
  const keyring = createRouteKeyring(config.SIGNER_MNEMONIC);
  const poolRelayer = privateKeyToAccount(config.POOL_RELAYER_PRIVATE_KEY as `0x${string}`);
  // Threads start on the first proof (or the worker's ready()): the API never proves.
  const prover = createProver({ circuitsDir: config.PRIVACY_POOLS_CIRCUITS_DIR, concurrency: config.PROOF_CONCURRENCY });
  const pool = createPrivacyPools({
    chainId: config.HUB_CHAIN_ID,
    entrypoint: config.PRIVACY_POOLS_ENTRYPOINT as `0x${string}`,
    fromBlock: BigInt(config.PRIVACY_POOLS_START_BLOCK),
    relayFeeBps: config.PRIVACY_RELAY_FEE_BPS,
    relayer: poolRelayer,
    masterKeys: keyring.poolMasterKeys(),
    clients: chains,
    sender,
    prover,
    proofConcurrency: config.PROOF_CONCURRENCY,
    asp: (scope) => createAspClient({ baseUrl: config.PRIVACY_POOLS_ASP_URL, chainId: config.HUB_CHAIN_ID, scope }),
  });
  const feePolicy = { feeBps: BigInt(config.FEE_BPS), feeMinUsd: config.FEE_MIN_USD };

  let bridge: ActivityDeps['bridge'];
  let quotes: QuoteService;
  let attestations: AttestationPoller | undefined;
  if (config.BRIDGE_PROVIDER === 'cctp') {
    const iris = createIrisClient({ baseUrl: config.IRIS_API_URL ?? IRIS_BASE_URLS[config.CCTP_ENVIRONMENT] });
    attestations = createAttestationPoller({ iris, maxRequestsPerSecond: config.IRIS_MAX_REQUESTS_PER_SECOND, initialIntervalMs: opts.pollIntervalMs ?? 1000 });
    const cctp = createCctpBridge({
      iris,
      attestations,
      chains: withLocalChains(config.CCTP_LOCAL_CHAINS ? [] : cctpNetwork(config.CCTP_ENVIRONMENT), (config.CCTP_LOCAL_CHAINS ?? []) as LocalCctpDeployment[], localChainNames(config)),
      clients: chains,
      sender,
      finality: config.CCTP_FINALITY,
      feeBufferBps: config.CCTP_FEE_BUFFER_BPS,
    });
    bridge = { mode: 'cctp', cctp };
    quotes = createCctpQuoteService({
      bridge: cctp,
      pool,
      hubChainId: config.HUB_CHAIN_ID,
      enabledChainIds: Object.keys(config.CHAIN_RPC_URLS).map(Number),
      feePolicy,
      poolEtaSeconds: expectedPoolSeconds(config),
      finality: config.CCTP_FINALITY,
    });
  } else {
    const relay = withCatalogCache(instrumentBridge(createRelayBridge({ baseUrl: config.RELAY_API_URL, apiKey: config.RELAY_API_KEY }), 'relay'));
    bridge = { mode: 'relay', relay };
    quotes = createQuoteService({
      bridge: relay,
      pool,
      hubChainId: config.HUB_CHAIN_ID,
      hubTokenSymbol: config.HUB_TOKEN_SYMBOL,
      feePolicy,
      poolEtaSeconds: expectedPoolSeconds(config),
      // Account index 0 is never allocated to a route (the sequence starts at 1).
      previewAccount: keyring.routeAccounts(0).deposit.address,
    });
  }
  quotes = withQuoteCache(quotes, { ttlMs: config.QUOTE_CACHE_SECONDS * 1000 });
  const activityDeps: ActivityDeps = {
    db: database.db,
    chains,
    sender,
    bridge,
    pool,
    keyring,
    gasAccount: privateKeyToAccount(config.GAS_ACCOUNT_PRIVATE_KEY as `0x${string}`),
    poolRelayer,
    pollIntervalMs: opts.pollIntervalMs ?? 1000,
    refundMinimums: config.REFUND_MIN_AMOUNT,
    depositConfirmations: config.DEPOSIT_CONFIRMATIONS,
    privacyPollSeconds: config.PRIVACY_POLL_SECONDS,
  };
  const close = async () => {
    attestations?.close();
    await prover.close();
    await database.close();
  };
  return { config, db: database.db, quotes, keyring, prover, activityDeps, close };
}

export type ServiceContext = ReturnType<typeof createServiceContext>;

/** Rough time of a withdrawal proof and its submission, part of etaSeconds. */
const PROOF_ETA_SECONDS = 15;

/** Expected time in the pool: the ASP's review, the mean privacy delay, and the proof (etaSeconds). */
export function expectedPoolSeconds(config: Config): number {
  return config.POOL_ETA_SECONDS + Math.round((config.PRIVACY_DELAY_MIN_SECONDS + config.PRIVACY_DELAY_MAX_SECONDS) / 2) + PROOF_ETA_SECONDS;
}

/** The privacy rules of the configuration, from which each transfer's own plan is drawn at creation. */
export function privacySettings(config: Config): PrivacySettings {
  return {
    delayMinSeconds: config.PRIVACY_DELAY_MIN_SECONDS,
    delayMaxSeconds: config.PRIVACY_DELAY_MAX_SECONDS,
    minAnonymitySet: config.PRIVACY_MIN_ANONYMITY_SET,
    maxAnonymitySet: config.PRIVACY_MAX_ANONYMITY_SET,
    maxWaitSeconds: config.PRIVACY_MAX_WAIT_SECONDS,
    pollSeconds: config.PRIVACY_POLL_SECONDS,
    reviewTimeoutSeconds: config.PRIVACY_REVIEW_TIMEOUT_SECONDS,
  };
}

/** The per-transfer settings fixed at creation (carried in the workflow input, so a running transfer keeps its own). */
export function transferSettings(config: Config): TransferSettings {
  return {
    stepMaxAttempts: config.STEP_MAX_ATTEMPTS,
    stepTimeBudgetSeconds: config.STEP_TIME_BUDGET_SECONDS,
    depositTimeoutSeconds: config.DEPOSIT_TIMEOUT_SECONDS,
  };
}

function localChainNames(config: Config) {
  return (config.CCTP_LOCAL_CHAINS ?? []).map((c) => ({ chainId: c.chainId, name: c.name ?? `local-${c.chainId}`, displayName: c.displayName ?? `Local ${c.chainId}` }));
}
