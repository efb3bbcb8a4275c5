import { type Address, type LocalAccount, zeroAddress } from 'viem';
import { toAccount } from 'viem/accounts';
import { createRouteAddressBook, type ApiAccountRole, type RouteAccountXpubs } from './accounts/routeAccounts.ts';
import { type ChainClients, createChainClients } from './chain/clients.ts';
import { createTxSender } from './chain/txSender.ts';
import { type Config, priceEpochHoldBps } from './config.ts';
import { gweiToWei } from './chain/fees.ts';
import { connectDatabase } from './db/client.ts';
import { createPostgresLeafStore } from './providers/privacy-pools/pool/leafStore.ts';
import { createSharedQuota, type QuotaLimit, relayQuotaLimits } from './providers/providerQuota.ts';
import { instrumentBridge } from './observability/metrics.ts';
import { createPrivacyPools } from './providers/privacy-pools/adapter.ts';
import { createAspClient } from './providers/privacy-pools/asp.ts';
import { createProver, type Prover, proverOptions } from './providers/privacy-pools/prover.ts';
import { createRelayBridge } from './providers/relay/adapter.ts';
import { createCctpBridge } from './providers/cctp/adapter.ts';
import { IRIS_BASE_URLS, type LocalCctpDeployment, cctpNetwork, withLocalChains } from './providers/cctp/chains.ts';
import { createIrisClient } from './providers/cctp/iris.ts';
import { createAttestationPoller, type AttestationPoller } from './providers/cctp/attestationPoller.ts';
import { withCatalogCache } from './providers/cachedBridge.ts';
import { createCctpQuoteService } from './quote/cctpQuoteService.ts';
import { createClassActivity, withAmountAdvice } from './quote/amountAdvice.ts';
import { createPriceEpochs } from './quote/priceEpochs.ts';
import { networkProfile } from './networks/profiles.ts';
import { withAmountLimits } from './quote/amountLimits.ts';
import { withPartnerFees } from './quote/partnerFees.ts';
import { withChainDetails } from './quote/chainDetails.ts';
import { withQuoteCache } from './quote/quoteCache.ts';
import { withPrivacyEta } from './quote/privacyEta.ts';
import { nativeUsdPrices } from './quote/nativeUsdPrices.ts';
import { createNetworkCosts } from './quote/networkCost.ts';
import type { HotWalletSettings } from './observability/hotWallets.ts';
import { createQuoteService, type QuoteService } from './quote/quoteService.ts';
import type { ActivityDeps } from '../activities/deps.ts';
import type { TransferSettings } from './domain/plan.ts';
import type { PrivacyRules } from './privacy/exitLottery.ts';
import type { PrivacySettings } from './transfers/transferService.ts';
import { signerAccounts } from './signer/accounts.ts';
import { createLocalSigner } from './signer/local.ts';
import { createRemoteSigner } from './signer/remote.ts';
import type { NoteSecretsProvider, Signer } from './signer/signer.ts';
import { DEFAULT_WEBHOOK_RETRY, WEBHOOK_REQUEST_TIMEOUT_MS, type WebhookSettings } from './webhooks/settings.ts';

/** What only the worker has: the pool relayer's accounts, the note secrets (the signer's) and the prover. */
interface PoolSigning {
  relayer: LocalAccount;
  relaySenders: readonly LocalAccount[];
  secrets: NoteSecretsProvider;
  prover: Prover;
}

/**
 * The API's context: deposit and hub addresses from the xpubs (DEPOSIT_ACCOUNT_XPUB, HUB_ACCOUNT_XPUB; never the exit role's),
 * quotes, the database. No mnemonic, private key, signer or prover: loadConfig(env, 'api') refused them.
 */
export function createApiContext(config: Config, opts: { pollIntervalMs?: number } = {}) {
  const addresses = createRouteAddressBook(accountXpubs(config));
  const parts = createSharedParts(config, opts, keylessPoolSigning(), addresses.routeAddresses(0).deposit);
  return { config, db: parts.database.db, quotes: parts.quotes, addresses, close: parts.close };
}

export type ApiContext = ReturnType<typeof createApiContext>;

/**
 * The worker's context: its accounts' addresses come from the signer's public keys and every signature is asked of
 * the signer (the signer process at SIGNER_URL; in development the keys in this process, SIGNER_MNEMONIC etc.).
 */
export async function createWorkerContext(config: Config, opts: { pollIntervalMs?: number; signer?: Signer } = {}) {
  const signer = opts.signer ?? workerSigner(config);
  const publicKeys = await signer.publicKeys();
  const { keyring, gasAccount, poolRelayer, relaySenders } = signerAccounts(signer, publicKeys);
  // Threads start on the first proof (or the worker's ready()).
  const prover = createProver(proverOptions(config));
  const parts = createSharedParts(config, opts, { relayer: poolRelayer, relaySenders, secrets: signer, prover }, keyring.routeAddresses(0).deposit);
  const { database, chains, sender, bridge, pool } = parts;
  const activityDeps: ActivityDeps = {
    db: database.db,
    chains,
    sender,
    bridge,
    pool,
    keyring,
    gasAccount,
    poolRelayer,
    relaySenders,
    pollIntervalMs: opts.pollIntervalMs ?? 1000,
    refundMinimums: config.REFUND_MIN_AMOUNT,
    refundDelay: { minSeconds: config.REFUND_DELAY_MIN_SECONDS, maxSeconds: config.REFUND_DELAY_MAX_SECONDS },
    strayListBatchSeconds: config.STRAY_LIST_BATCH_SECONDS,
    feeCeilingsWei: Object.fromEntries(Object.entries(config.FEE_CEILING_GWEI).map(([chainId, gwei]) => [Number(chainId), gweiToWei(gwei)])),
    operatorAllowedDestinations: config.OPERATOR_ALLOWED_DESTINATIONS,
    incomeSweeps: {
      treasury: config.INCOME_TREASURY_ADDRESS as Address | undefined,
      gridUnit: BigInt(config.INCOME_SWEEP_GRID_UNIT),
      minAmount: BigInt(config.INCOME_SWEEP_MIN_AMOUNT),
      minAgeSeconds: Math.round(config.INCOME_SWEEP_MIN_AGE_HOURS * 3600),
      minBatch: config.INCOME_SWEEP_MIN_BATCH,
    },
    confirmationsOf: (chainId) => config.CHAIN_CONFIRMATIONS[String(chainId)] ?? config.DEPOSIT_CONFIRMATIONS,
    privacyPollSeconds: config.PRIVACY_POLL_SECONDS,
    privacyRules: privacyRules(config),
    webhooks: webhookSettings(config),
  };
  const close = async () => {
    await prover.close();
    await parts.close();
  };
  return { config, db: database.db, quotes: parts.quotes, keyring, signerPublicKeys: publicKeys, prover, activityDeps, close };
}

export type WorkerContext = Awaited<ReturnType<typeof createWorkerContext>>;

/** The privacy gate's and the exit lottery's rules (docs/privacy.md, "Timing"). */
export function privacyRules(config: Config): PrivacyRules {
  return {
    epochSeconds: config.PRIVACY_EXIT_EPOCH_SECONDS,
    maxWaitSeconds: config.PRIVACY_MAX_WAIT_SECONDS,
    minPeerAgeSeconds: config.PRIVACY_MIN_PEER_AGE_SECONDS,
    meanMinSeconds: config.PRIVACY_EXIT_MEAN_MIN_SECONDS,
    meanMaxSeconds: config.PRIVACY_EXIT_MEAN_MAX_SECONDS,
    flushSeconds: config.PRIVACY_EXIT_FLUSH_SECONDS,
    trafficWindowSeconds: config.PRIVACY_TRAFFIC_WINDOW_SECONDS,
  };
}

/** The worker's webhook settings (loadConfig(env, 'worker') requires WEBHOOK_SIGNING_SECRET). */
export function webhookSettings(config: Config): WebhookSettings | undefined {
  if (!config.WEBHOOK_SIGNING_SECRET) return undefined;
  return {
    signingSecret: config.WEBHOOK_SIGNING_SECRET,
    allowPrivateTargets: config.WEBHOOK_ALLOW_PRIVATE_TARGETS,
    maxDelaySeconds: config.WEBHOOK_MAX_DELAY_SECONDS,
    publicView: {
      epochSeconds: config.PRIVACY_EXIT_EPOCH_SECONDS,
      endDelayMaxSeconds: config.PUBLIC_STATUS_DELAY_MAX_SECONDS,
      holdSeconds: config.PUBLIC_STATUS_HOLD_SECONDS,
    },
    requestTimeoutMs: WEBHOOK_REQUEST_TIMEOUT_MS,
    retry: DEFAULT_WEBHOOK_RETRY,
  };
}

/** The worker's signer from its configuration (loadConfig(env, 'worker') checked that one of the two is complete). */
export function workerSigner(config: Config): Signer {
  if (config.SIGNER_URL && config.SIGNER_AUTH_TOKEN) return createRemoteSigner({ url: config.SIGNER_URL, authToken: config.SIGNER_AUTH_TOKEN });
  if (!config.SIGNER_MNEMONIC || !config.GAS_ACCOUNT_PRIVATE_KEY || !config.POOL_RELAYER_PRIVATE_KEY) {
    throw new Error(
      'the worker has no signer: set SIGNER_URL and SIGNER_AUTH_TOKEN (or, in development, SIGNER_MNEMONIC, GAS_ACCOUNT_PRIVATE_KEY and POOL_RELAYER_PRIVATE_KEY)',
    );
  }
  return createLocalSigner({
    mnemonic: config.SIGNER_MNEMONIC,
    gasPrivateKey: config.GAS_ACCOUNT_PRIVATE_KEY as `0x${string}`,
    poolRelayerPrivateKey: config.POOL_RELAYER_PRIVATE_KEY as `0x${string}`,
  });
}

function accountXpubs(config: Config): Pick<RouteAccountXpubs, ApiAccountRole> {
  const { DEPOSIT_ACCOUNT_XPUB: deposit, HUB_ACCOUNT_XPUB: hub } = config;
  if (!deposit || !hub) throw new Error('DEPOSIT_ACCOUNT_XPUB and HUB_ACCOUNT_XPUB must be set: the API derives route addresses from them');
  return { deposit, hub };
}

/** The API's pool reads quotes only; anything that would sign, derive a note or prove belongs to the worker. */
function keylessPoolSigning(): PoolSigning {
  const refuse = async (): Promise<never> => {
    throw new Error('the API holds no key: pool deposits and withdrawals run in the worker');
  };
  const relayer = toAccount({ address: zeroAddress, signTransaction: refuse, signMessage: refuse, signTypedData: refuse });
  return {
    relayer,
    relaySenders: [relayer],
    secrets: { depositSecrets: refuse, withdrawalSecrets: refuse },
    prover: {
      ready: async () => {},
      proveWithdrawal: refuse,
      proveCommitment: refuse,
      setup: () => ({ backend: 'snarkjs', concurrency: 1, threadsPerProof: 1, fallbackReason: 'the API proves nothing' }),
      close: async () => {},
    },
  };
}

/** What the API and the worker both build: database, chain clients, sender, the pool, the bridge and quotes. */
function createSharedParts(config: Config, opts: { pollIntervalMs?: number }, signing: PoolSigning, previewAccount: Address) {
  const database = connectDatabase(config.DATABASE_URL, {
    max: config.DATABASE_POOL_MAX,
    ...(config.DATABASE_STATEMENT_TIMEOUT_MS > 0 && { statementTimeoutMs: config.DATABASE_STATEMENT_TIMEOUT_MS }),
  });
  const chains = createChainClients(config.CHAIN_RPC_URLS);
  const sender = createTxSender(database.db, chains);
  const pool = createPrivacyPools({
    chainId: config.HUB_CHAIN_ID,
    entrypoint: config.PRIVACY_POOLS_ENTRYPOINT as `0x${string}`,
    fromBlock: BigInt(config.PRIVACY_POOLS_START_BLOCK),
    relayFeeBps: config.PRIVACY_RELAY_FEE_BPS,
    relayer: signing.relayer,
    relaySenders: signing.relaySenders,
    secrets: signing.secrets,
    clients: chains,
    sender,
    prover: signing.prover,
    asp: (scope) => createAspClient({ baseUrl: config.PRIVACY_POOLS_ASP_URL, chainId: config.HUB_CHAIN_ID, scope }),
    // Only the worker proves withdrawals, so only it reads and writes the kept leaves.
    leafStore: createPostgresLeafStore(database.db, config.HUB_CHAIN_ID),
  });
  const feePolicy = { feeBps: BigInt(config.FEE_BPS), feeMinUsd: config.FEE_MIN_USD };
  const priceEpochs = createPriceEpochs(database.db, {
    epochSeconds: config.PRICE_EPOCH_SECONDS,
    marginBps: config.PRICE_EPOCH_MARGIN_BPS,
    holdBps: priceEpochHoldBps(config),
    // The band is checked as each exit epoch starts: an early end falls on the exit clock, not on the market's minute.
    alignSeconds: config.PRIVACY_EXIT_EPOCH_SECONDS,
  });

  // Native currencies' USD prices for the quotes' gas: Relay's price API in both modes (it prices native currencies
  // at the zero address); in burn-and-mint mode it serves prices only.
  const quota = createSharedQuota({ db: database.db, limits: relayLimits(config) });
  const relay = withCatalogCache(
    instrumentBridge(createRelayBridge({ baseUrl: config.RELAY_API_URL, apiKey: config.RELAY_API_KEY, quota: (bucket) => quota(bucket) }), 'relay'),
  );
  const networkCosts = createNetworkCosts({
    mode: config.BRIDGE_PROVIDER,
    chains,
    nativeUsd: nativeUsdPrices({ fromProvider: (chainId) => relay.tokenUsdPrice(chainId, zeroAddress), overrides: config.NATIVE_USD_PRICES }),
    bufferBps: config.GAS_COST_BUFFER_BPS,
  });
  let bridge: ActivityDeps['bridge'];
  let quotes: QuoteService;
  let attestations: AttestationPoller | undefined;
  if (config.BRIDGE_PROVIDER === 'cctp') {
    const iris = createIrisClient({ baseUrl: config.IRIS_API_URL ?? IRIS_BASE_URLS[config.CCTP_ENVIRONMENT] });
    attestations = createAttestationPoller({ iris, maxRequestsPerSecond: config.IRIS_MAX_REQUESTS_PER_SECOND, initialIntervalMs: opts.pollIntervalMs ?? 1000 });
    const cctp = createCctpBridge({
      iris,
      attestations,
      chains: withLocalChains(
        config.CCTP_LOCAL_CHAINS ? [] : cctpNetwork(config.CCTP_ENVIRONMENT),
        (config.CCTP_LOCAL_CHAINS ?? []) as LocalCctpDeployment[],
        localChainNames(config),
      ),
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
      networkCosts,
      poolEtaSeconds: expectedPoolSeconds(config),
      finality: config.CCTP_FINALITY,
    });
  } else {
    bridge = { mode: 'relay', relay };
    quotes = createQuoteService({
      bridge: relay,
      pool,
      hubChainId: config.HUB_CHAIN_ID,
      hubTokenSymbol: config.HUB_TOKEN_SYMBOL,
      ...(config.HUB_TOKEN_ADDRESS && { hubTokenAddress: config.HUB_TOKEN_ADDRESS as Address }),
      feePolicy,
      networkCosts,
      priceEpochs,
      priceMarginBps: config.PRICE_EPOCH_MARGIN_BPS,
      poolEtaSeconds: expectedPoolSeconds(config),
      // Account index 0 is never allocated to a route (the sequence starts at 1).
      previewAccount,
    });
  }
  quotes = withAmountLimits(withPartnerFees(quotes), {
    maxTransferUsd: /^0+(\.0+)?$/.test(config.MAX_TRANSFER_USD) ? null : config.MAX_TRANSFER_USD,
    // Burn-and-mint moves USDC only, valued at one dollar as its quotes do.
    usdPrice: (token) => (bridge.mode === 'relay' ? bridge.relay.tokenUsdPrice(token.chainId, token.address) : Promise.resolve('1')),
  });
  const activity = createClassActivity(database.db);
  quotes = withQuoteCache(withAmountAdvice(quotes, activity), { ttlMs: config.QUOTE_CACHE_SECONDS * 1000 });
  quotes = withPrivacyEta(quotes, { activity, rules: privacyRules(config), minAnonymitySet: config.PRIVACY_MIN_ANONYMITY_SET });
  quotes = withChainDetails(quotes, networkProfile(config.NETWORK)?.chains ?? []);
  const close = async () => {
    attestations?.close();
    await database.close();
  };
  return { database, chains, sender, pool, bridge, quotes, close };
}

/** What the worker's /metrics reads of the hot wallets (src/observability/hotWallets.ts). */
export function workerHotWallets(service: WorkerContext): { chains: ChainClients; settings: HotWalletSettings } {
  const { config, activityDeps } = service;
  return {
    chains: activityDeps.chains,
    settings: {
      mode: config.BRIDGE_PROVIDER,
      hubChainId: config.HUB_CHAIN_ID,
      chainIds: Object.keys(config.CHAIN_RPC_URLS).map(Number),
      addresses: { gas: activityDeps.gasAccount.address, pool_relayer: activityDeps.poolRelayer.address },
      relaySenders: activityDeps.relaySenders.slice(1).map((account) => account.address),
    },
  };
}

/** Rough time of a withdrawal proof and its submission, part of etaSeconds. */
const PROOF_ETA_SECONDS = 15;

/**
 * Expected time in the pool (etaSeconds) but for the wait for the set: the ASP's review and the proof. The wait for
 * the set (the gate, then the exit lottery) depends on the class and is added per quote (src/quote/privacyEta.ts).
 */
export function expectedPoolSeconds(config: Config): number {
  return config.POOL_ETA_SECONDS + PROOF_ETA_SECONDS;
}

/** The privacy rules of the configuration, from which each transfer's own plan is drawn at creation. */
export function privacySettings(config: Config): PrivacySettings {
  return {
    exitEpochSeconds: config.PRIVACY_EXIT_EPOCH_SECONDS,
    publicEndDelaySeconds: config.PUBLIC_STATUS_DELAY_MAX_SECONDS,
    publicEndHoldSeconds: config.PUBLIC_STATUS_HOLD_SECONDS,
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
  return (config.CCTP_LOCAL_CHAINS ?? []).map((c) => ({
    chainId: c.chainId,
    name: c.name ?? `local-${c.chainId}`,
    displayName: c.displayName ?? `Local ${c.chainId}`,
  }));
}

/** Relay's quota per endpoint class: RELAY_RATE_LIMITS where given, else the published limits (none on the local stack). */
function relayLimits(config: Config): Record<string, QuotaLimit> {
  const published = config.NETWORK === 'devnet' ? {} : relayQuotaLimits(config.RELAY_API_KEY !== undefined);
  const given = config.RELAY_RATE_LIMITS ?? {};
  return {
    ...published,
    ...Object.fromEntries(Object.entries(given).map(([endpoint, perMinute]) => [`relay:${endpoint}`, { perMinute }])),
  };
}
