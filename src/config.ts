import { z } from 'zod';
import { applyNetworkProfile } from './networks/profiles.ts';
import { urlOrigin } from './redact.ts';
import { signerAuthToken } from './signer/protocol.ts';
import { temporalConnectionProblem } from './temporal/connectionSettings.ts';

/**
 * Service configuration, read from the environment once at start. Invalid configuration stops the
 * process with a message naming the variable. Secrets (mnemonic, private keys, API keys) are
 * never logged: `describeConfig` prints only their presence.
 */

const hexKey = z.string().regex(/^0x[0-9a-fA-F]{64}$/, 'must be a 0x-prefixed 32-byte hex private key');
const address = z.string().regex(/^0x[0-9a-fA-F]{40}$/, 'must be a 0x-prefixed 20-byte hex address');
const port = z.coerce.number().int().min(0).max(65535);
export const mnemonic = z.string().refine((m) => m.trim().split(/\s+/).length >= 12, 'must be a BIP-39 mnemonic of at least 12 words');
const xpub = z
  .string()
  .regex(
    /^xpub[1-9A-HJ-NP-Za-km-z]{107}$/,
    'must be a BIP-32 extended public key (xpub…, 111 characters): npm run signer:token -- show, or signer:xpubs from a mnemonic, prints them',
  );
const positiveInt = z.coerce.number().int().positive();

/** A variable holding JSON, parsed before `schema` validates it. */
const jsonVariable = <T extends z.ZodType>(schema: T, hint: string) =>
  z
    .string()
    .transform((text, ctx) => {
      try {
        return JSON.parse(text) as unknown;
      } catch {
        ctx.addIssue({ code: 'custom', message: `must be JSON: ${hint}` });
        return z.NEVER;
      }
    })
    .pipe(schema);

const rpcUrls = jsonVariable(z.record(z.string().regex(/^\d+$/), z.url()), '{"42161":"https://..."}');

export const configSchema = z.object({
  /** The network profile (src/networks/profiles.ts, docs/networks.md): testnet and mainnet fill in the public constants. */
  NETWORK: z.enum(['devnet', 'testnet', 'mainnet'], { message: 'must be devnet, testnet or mainnet' }).default('devnet'),
  BRIDGE_PROVIDER: z.enum(['relay', 'cctp'], { message: 'must be "relay" (deposit-address mode) or "cctp" (burn-and-mint mode)' }).default('relay'),
  PORT: port.default(3000),
  HOST: z.string().default('127.0.0.1'),
  /** The API's /metrics listener, apart from the public PORT (the transfer counts by status must not be public); 0: a free port. */
  API_METRICS_PORT: port.default(9466), // DEFAULT_API_METRICS_PORT
  /** Interface of the API's /metrics listener: loopback, or an address only the scraper's network reaches. */
  METRICS_HOST: z.string().default('127.0.0.1'),
  DATABASE_URL: z.string().min(1),
  TEMPORAL_ADDRESS: z.string().default('127.0.0.1:7233'),
  TEMPORAL_NAMESPACE: z.string().default('default'),
  TEMPORAL_TASK_QUEUE: z.string().default('private-route'),
  /**
   * Worker: poll as a version of this Temporal worker deployment (src/temporal/workerVersioning.ts): workflow tasks go
   * to the version an operator promoted (`routectl workers promote`), so a changed workflow rolls out without mixing.
   */
  TEMPORAL_WORKER_DEPLOYMENT: z
    .string()
    .regex(/^[A-Za-z0-9._-]{1,100}$/, 'must be a name of letters, digits, ".", "_" and "-"')
    .optional(),
  /** Worker: this worker's build id in its deployment; unset, the hash of the workflow code (workers of one build agree). */
  TEMPORAL_WORKER_BUILD_ID: z
    .string()
    .regex(/^[A-Za-z0-9._-]{1,100}$/, 'must be letters, digits, ".", "_" and "-"')
    .optional(),
  /** Temporal over TLS (docs/operations.md): any of these turns TLS on. Certificate, key and CA: a PEM file path or the PEM text. */
  TEMPORAL_TLS: z
    .enum(['true', 'false'], { message: 'must be "true" or "false"' })
    .transform((v) => v === 'true')
    .optional(),
  TEMPORAL_TLS_CERT: z.string().min(1).optional(),
  TEMPORAL_TLS_KEY: z.string().min(1).optional(),
  TEMPORAL_TLS_CA: z.string().min(1).optional(),
  TEMPORAL_TLS_SERVER_NAME: z.string().min(1).optional(),
  /** Temporal Cloud API key (sent as a bearer token; implies TLS). */
  TEMPORAL_API_KEY: z.string().min(1).optional(),
  /** History encryption (src/temporal/codec.ts): on unless explicitly off; on needs the keys below. */
  PAYLOAD_CODEC: z.enum(['on', 'off'], { message: 'must be "on" (encrypt Temporal payloads) or "off"' }).default('on'),
  /** Key id → base64 of a 32-byte AES-256 key; every key decrypts, PAYLOAD_CODEC_KEY_ID encrypts. */
  PAYLOAD_CODEC_KEYS: jsonVariable(
    z.record(
      z.string().regex(/^[A-Za-z0-9._-]{1,64}$/, 'key ids are 1-64 letters, digits, ".", "_" or "-"'),
      z
        .string()
        .refine(
          (v) => /^[A-Za-z0-9+/]+={0,2}$/.test(v) && Buffer.from(v, 'base64').length === 32,
          'must be the base64 of 32 random bytes (openssl rand -base64 32)',
        ),
    ),
    '{"2026-01":"<base64 of 32 bytes>"}',
  ).optional(),
  PAYLOAD_CODEC_KEY_ID: z.string().min(1).optional(),
  /** Bearer token of the codec endpoint (POST /encode, /decode) the worker serves for operators; unset: no endpoint. */
  CODEC_AUTH_TOKEN: z.string().min(32, 'must be at least 32 characters (openssl rand -hex 32)').optional(),
  CODEC_HOST: z.string().default('127.0.0.1'),
  CODEC_PORT: port.default(8089),
  /** The Temporal Web UI's origin allowed to call the codec endpoint from a browser (CORS), e.g. https://temporal.example.com. */
  CODEC_CORS_ORIGIN: z.url().optional(),
  RELAY_API_URL: z.url().default('https://api.relay.link'),
  /** Burn-and-mint mode: Circle's CCTP v2 network, attestation service and finality. */
  CCTP_ENVIRONMENT: z.enum(['mainnet', 'testnet']).default('mainnet'),
  IRIS_API_URL: z.url().optional(),
  CCTP_FINALITY: z.enum(['fast', 'standard']).default('fast'),
  CCTP_FEE_BUFFER_BPS: z.coerce.number().int().min(0).max(100_000).default(2000),
  /** Iris lookups per second this process makes at most for all waiting burns together (Circle blocks above 35/s per client). */
  IRIS_MAX_REQUESTS_PER_SECOND: z.coerce
    .number()
    .positive()
    .max(35, 'must be at most 35: Circle blocks a client above 35 requests/s for 5 minutes')
    .default(10),
  /** Extra CCTP deployments (JSON array of {chainId, domain, tokenMessenger, messageTransmitter, usdc}); the local stack sets it. */
  CCTP_LOCAL_CHAINS: jsonVariable(
    z.array(
      z.object({
        chainId: z.number().int().positive(),
        domain: z.number().int().nonnegative(),
        tokenMessenger: address,
        messageTransmitter: address,
        usdc: address,
        name: z.string().optional(),
        displayName: z.string().optional(),
      }),
    ),
    '[{"chainId":…,"domain":…,"tokenMessenger":"0x…","messageTransmitter":"0x…","usdc":"0x…"}]',
  ).optional(),
  RELAY_API_KEY: z.string().optional(),
  /**
   * Requests a minute to Relay by endpoint class, shared by every replica through Postgres (src/providers/providerQuota.ts);
   * 0 is unlimited. Unset: Relay's published limits on testnet and mainnet (with or without RELAY_API_KEY), none on devnet.
   */
  RELAY_RATE_LIMITS: jsonVariable(
    z.strictObject({ quote: z.number().int().min(0).optional(), status: z.number().int().min(0).optional(), other: z.number().int().min(0).optional() }),
    '{"quote":50,"status":200,"other":200}',
  ).optional(),
  HUB_CHAIN_ID: positiveInt,
  HUB_TOKEN_SYMBOL: z.string().default('USDC'),
  /** The hub token by address; the testnet and mainnet profiles pin the hub's USDC (a token list may hold two "USDC"). */
  HUB_TOKEN_ADDRESS: address.optional(),
  CHAIN_RPC_URLS: rpcUrls,
  /**
   * Keys (worker in development only; in production they live in the signer process, src/signer.ts). The API
   * refuses them: it derives addresses from the *_ACCOUNT_XPUB variables.
   */
  SIGNER_MNEMONIC: mnemonic.optional(),
  GAS_ACCOUNT_PRIVATE_KEY: hexKey.optional(),
  /** The worker's signer process (npm run start:signer) and the secret it authenticates the worker by. */
  SIGNER_URL: z.url().optional(),
  SIGNER_AUTH_TOKEN: signerAuthToken.optional(),
  /**
   * The API's extended public keys of the deposit and hub roles (npm run signer:xpubs prints them). The exit role's
   * xpub is never the API's: with it, anyone who reads the API could tie every route's withdrawal to its deposit.
   */
  DEPOSIT_ACCOUNT_XPUB: xpub.optional(),
  HUB_ACCOUNT_XPUB: xpub.optional(),
  /** Privacy Pools (0xbow) Entrypoint on the hub chain; the pool is the one registered there for the hub token. */
  PRIVACY_POOLS_ENTRYPOINT: address,
  /** Block of the pool's deployment: its events are scanned from here. */
  PRIVACY_POOLS_START_BLOCK: z.coerce.number().int().nonnegative().default(0),
  /** The ASP's public API (association-set leaves and roots, deposit reviews). */
  PRIVACY_POOLS_ASP_URL: z.url().default('https://api.0xbow.io'),
  /** A folder holding `artifacts/` with the circuit files; default: the npm package's, checked against the SDK's hashes either way. */
  PRIVACY_POOLS_CIRCUITS_DIR: z.string().min(1).optional(),
  /** Submits every route's pool withdrawal (Entrypoint.relay), receives the relay fees, and funds gas after a withdrawal. */
  POOL_RELAYER_PRIVATE_KEY: hexKey.optional(),
  /** Relay fee on each withdrawal, paid to the relayer; at most the pool's maxRelayFeeBPS. */
  PRIVACY_RELAY_FEE_BPS: z.coerce.number().int().min(0).max(9_999).default(10),
  /** Which prover: `auto` (native where `npm ci` built it and it passes its start-up check, else snarkjs), `native` (refuse to start without it), `snarkjs`. */
  PROVER: z.enum(['auto', 'native', 'snarkjs']).default('auto'),
  /** Proofs generated at once, one prover thread each. Default: one per core with the native prover, 1 with snarkjs. */
  PROOF_CONCURRENCY: positiveInt.optional(),
  /** Threads of one native proof. Default: the cores divided among PROOF_CONCURRENCY (1 with the defaults). */
  PROVER_THREADS: positiveInt.optional(),
  /** The native prover's executable; default: the one `npm ci` builds (native/groth16-prover/build/groth16-prover). */
  NATIVE_PROVER_PATH: z.string().min(1).optional(),
  /** Expected time from a deposit into the pool until the ASP approves it (part of etaSeconds). */
  POOL_ETA_SECONDS: z.coerce.number().int().nonnegative().default(3600),
  /**
   * Exit epochs of this many seconds on the clock: gates open for the next epoch, and in each epoch every gated note of
   * a class leaves with the class's chance, at a random moment of it (docs/privacy.md, "Timing").
   */
  PRIVACY_EXIT_EPOCH_SECONDS: positiveInt.default(600),
  /** The exit lottery's shortest mean wait for a class whose routes ask for anyone but themselves (docs/privacy.md). */
  PRIVACY_EXIT_MEAN_MIN_SECONDS: positiveInt.default(1800),
  /** ...and its longest, however quiet the class. */
  PRIVACY_EXIT_MEAN_MAX_SECONDS: positiveInt.default(3600),
  /** A class whose oldest gate that may still be open is this old flushes: every gated note leaves in the next epoch. */
  PRIVACY_EXIT_FLUSH_SECONDS: positiveInt.default(14_400),
  /** A class's traffic, from which its lottery's chance follows: its pool entries over this long. */
  PRIVACY_TRAFFIC_WINDOW_SECONDS: positiveInt.default(86_400),
  /** A note's gate opens once it has been in the pool this long, and no earlier (docs/privacy.md, "n − 1"). */
  PRIVACY_MIN_PEER_AGE_SECONDS: z.coerce.number().int().nonnegative().default(600),
  /** A note's gate opens once its anonymity set (src/privacy/anonymitySet.ts: its own note included) is this large... */
  PRIVACY_MIN_ANONYMITY_SET: positiveInt.default(5),
  /** ...or once it has waited this long from the start of the exit epoch it entered the pool in. */
  PRIVACY_MAX_WAIT_SECONDS: positiveInt.default(21_600),
  /** The largest `minAnonymitySet` a client may ask for at create. */
  PRIVACY_MAX_ANONYMITY_SET: positiveInt.default(50),
  /** How often a waiting route checks its review and anonymity set (the first checks come sooner, later ones later). */
  PRIVACY_POLL_SECONDS: positiveInt.default(30),
  /** A deposit the ASP has not approved after this long parks the route (0xbow: most within an hour, some take days). */
  PRIVACY_REVIEW_TIMEOUT_SECONDS: positiveInt.default(7 * 24 * 3600),
  FEE_BPS: z.coerce.number().int().min(0).max(10_000).default(150),
  /** Cross-asset quotes convert at a USD price held for an epoch of this many seconds on the clock (docs/privacy.md, "Price epochs"). */
  PRICE_EPOCH_SECONDS: positiveInt.default(3600),
  /** ...less this margin (it pays for the hold band below and the moves until the bridge-out; docs/money.md, "Price risk"). */
  PRICE_EPOCH_MARGIN_BPS: z.coerce.number().int().min(0).max(2_000).default(100),
  /**
   * At each exit epoch's start, a held price the market has left by more than this starts a new epoch; at any moment,
   * one it has left by more than the midpoint between this and the margin (docs/privacy.md, "Price epochs"). Unset:
   * 50, or half the margin when that is less (a deployment that pinned the old margin of 50 keeps its old band).
   */
  PRICE_EPOCH_HOLD_BPS: z.coerce.number().int().min(0).max(2_000).optional(),
  /**
   * Per chain, the most a pool withdrawal may offer per gas, in gwei: above it the withdrawal is not proved nor sent,
   * and the route waits in the pool for a later exit (docs/operations.md, "Fee ceilings"). Unlisted chains: none.
   */
  FEE_CEILING_GWEI: jsonVariable(
    z.record(z.string().regex(/^\d+$/), z.string().regex(/^\d+(\.\d{1,9})?$/, 'must be gwei, e.g. "2.5"')),
    '{"8453":"2.5"}',
  ).default({}),
  /** Identical quote requests within this many seconds get the same quote, computed once; 0 = off. Creates always price afresh. */
  QUOTE_CACHE_SECONDS: z.coerce.number().int().min(0).max(300).default(5),
  /** How long a create may cite a quote's quoteId and get exactly that quote (never past the quote's held prices). */
  QUOTE_TTL_SECONDS: z.coerce.number().int().min(5).max(600).default(30),
  /** The largest transfer the service takes, in USD at the source token's price; "0" = no maximum. */
  MAX_TRANSFER_USD: z
    .string()
    .regex(/^\d+(\.\d+)?$/, 'must be a decimal like "100000"')
    .default('100000'),
  /**
   * Headroom on the service's own gas in quotes (src/quote/gasCost.ts), in basis points of its cost at the current fees:
   * a route's transactions run minutes to hours after its quote, and fees move meanwhile.
   */
  GAS_COST_BUFFER_BPS: z.coerce.number().int().min(0).max(100_000).default(5000),
  /**
   * USD per whole unit of a chain's native currency, by chain id, for the gas in quotes where the price provider has
   * none (testnets: Relay prices no Sepolia ETH) or does not answer: {"11155111":"3000"}. The provider's price wins
   * when it has one.
   */
  NATIVE_USD_PRICES: jsonVariable(
    z.record(z.string().regex(/^\d+$/, 'keys must be chain ids'), z.string().regex(/^\d{1,12}(\.\d{1,18})?$/, 'must be a USD price like "3000" or "0.85"')),
    '{"11155111":"3000"}',
  ).default({}),
  FEE_MIN_USD: z
    .string()
    .regex(/^\d+(\.\d+)?$/, 'must be a decimal like "1" or "0.5"')
    .default('1'),
  DEPOSIT_TIMEOUT_SECONDS: positiveInt.default(3600),
  /** Blocks a transaction must be below its chain's head before it counts, for chains CHAIN_CONFIRMATIONS does not name. */
  DEPOSIT_CONFIRMATIONS: z.coerce.number().int().nonnegative().default(2),
  /**
   * Per chain: blocks a deposit into a route and the route's pool deposit must be below the head before they count (the
   * network profiles fill it in, docs/networks.md "Finality"). A chain not named uses DEPOSIT_CONFIRMATIONS.
   */
  CHAIN_CONFIRMATIONS: jsonVariable(
    z.record(z.string().regex(/^\d+$/, 'keys are chain ids'), z.number().int().nonnegative().max(10_000)),
    '{"1":12,"8453":10}',
  ).default({}),
  /** The task queues this worker polls (docs/performance.md): steps (workflows, short steps), waits (long waits), proofs (pool withdrawals). */
  WORKER_QUEUES: z
    .string()
    .default('steps,waits,proofs')
    .transform((v) =>
      v
        .split(',')
        .map((q) => q.trim())
        .filter(Boolean),
    )
    .pipe(z.array(z.enum(['steps', 'waits', 'proofs'], { message: 'must be a comma-separated list of steps, waits and proofs' })).min(1)),
  /** Activities of the steps queue this worker runs at once. */
  WORKER_STEP_SLOTS: positiveInt.default(100),
  /** Activities of the waits queue this worker runs at once (mostly idle polls: cheap). */
  WORKER_WAIT_SLOTS: positiveInt.default(1000),
  /** Workflows this worker keeps in memory between their tasks; the others are replayed from their history when they wake. */
  WORKER_MAX_CACHED_WORKFLOWS: z.coerce.number().int().min(2).default(100),
  /** Attempts of one step before the transfer parks for an operator (once it holds funds). */
  STEP_MAX_ATTEMPTS: positiveInt.default(8),
  /** Time one step may take, retries included, before the transfer parks. */
  STEP_TIME_BUDGET_SECONDS: positiveInt.default(1800),
  /** How often finished routes that received a transfer since their last check are checked for surplus, second and late deposits. */
  STRAY_SCAN_INTERVAL_SECONDS: positiveInt.default(60),
  /**
   * Automatic refunds of surplus, second and late deposits wait a random time in [min, max] seconds after they are found,
   * so that a refund does not follow the route's completion (or a deposit an observer sent to test it) in time
   * (docs/privacy.md, "Strays and refunds").
   */
  REFUND_DELAY_MIN_SECONDS: z.coerce.number().int().nonnegative().default(3600),
  REFUND_DELAY_MAX_SECONDS: z.coerce.number().int().nonnegative().default(21_600),
  /**
   * What a finished route's deposit address holds that is not refunded automatically (dust below REFUND_MIN_AMOUNT,
   * another token, no refundAddress) is flagged for an operator in batches: at the first multiple of this many seconds
   * (UTC) after it was found, not when the route finished (docs/privacy.md, "Strays and dust").
   */
  STRAY_LIST_BATCH_SECONDS: positiveInt.default(86_400),
  /**
   * The smallest refund per source-token symbol (human decimal): a deposit address holding less is not refunded
   * (the gas would cost more than it returns). Symbols not listed have no minimum.
   */
  REFUND_MIN_AMOUNT: jsonVariable(
    z.record(z.string().min(1), z.string().regex(/^\d+(\.\d+)?$/, 'must be a decimal like "0.10"')),
    '{"USDC":"0.10","ETH":"0.0001"}',
  ).default({
    USDC: '0.10',
    // A native stray costs the service a gas top-up and a refund: a wei poke must not make it pay them again and again.
    ETH: '0.0001',
  }),
  /**
   * Addresses an operator may send a route's funds to (routectl refund/recover) besides the route's own refundAddress
   * and recipient, comma-separated: e.g. the service's treasury. The worker's activities enforce it.
   */
  OPERATOR_ALLOWED_DESTINATIONS: z
    .string()
    .default('')
    .transform((v) =>
      v
        .split(',')
        .map((a) => a.trim())
        .filter(Boolean),
    )
    .pipe(z.array(address)),
  /**
   * Where income sweeps send the service's change notes (docs/operations.md, "Collecting the income"); without it no
   * sweep runs. The signer has its own copy (SIGNER_INCOME_TREASURY) and relays a sweep to no other address.
   */
  INCOME_TREASURY_ADDRESS: address.optional(),
  /** A change note is swept only once this old (hours): every withdrawal of its time is long past. */
  INCOME_SWEEP_MIN_AGE_HOURS: z.coerce.number().nonnegative().default(72),
  /** A sweep runs only with this many routes' change notes due at once. */
  INCOME_SWEEP_MIN_BATCH: z.coerce.number().int().min(1).default(8),
  /** The sweep grid's smallest step, in the hub token's smallest units (10000 = 0.01 USDC): amounts are 1, 2, 5 × 10^k of it. */
  INCOME_SWEEP_GRID_UNIT: z
    .string()
    .regex(/^[1-9]\d{0,30}$/, 'must be a positive integer (smallest units)')
    .default('10000'),
  /** Notes worth less than this (smallest units) stay in the pool: their withdrawal's gas would cost more. */
  INCOME_SWEEP_MIN_AMOUNT: z
    .string()
    .regex(/^\d{1,31}$/, 'must be an integer (smallest units)')
    .default('1000000'),
  /** Quotes and creates together per client and minute (client: its X-Api-Key, else its IP); 0 turns every abuse limit off. */
  RATE_LIMIT_PER_MINUTE: z.coerce.number().int().nonnegative().default(60),
  /** Creates per client and minute (each starts a workflow and takes an account index); 0 = no separate create limit. */
  RATE_LIMIT_CREATES_PER_MINUTE: z.coerce.number().int().nonnegative().default(10),
  /**
   * Without its statusToken, a route shows BRIDGING_IN a delay of its own after its funding, uniform in [0, this]; an
   * end past the hold shows a second such draw after it (docs/privacy.md, "Quiet public channels").
   */
  PUBLIC_STATUS_DELAY_MAX_SECONDS: z.coerce.number().int().nonnegative().default(21_600),
  /**
   * Without its statusToken a funded route's end shows this long after BRIDGING_IN showed (an end past it: its own
   * delay after the end, if later): at least the longest wait and two exit epochs, so that for a route that ends within
   * it the moment follows the funding, not the end.
   */
  PUBLIC_STATUS_HOLD_SECONDS: z.coerce.number().int().nonnegative().default(28_800),
  /** Reads by routeId without a statusToken (GET and the event stream) per client and minute; 0 = no limit (docs/privacy.md). */
  RATE_LIMIT_PUBLIC_READS_PER_MINUTE: z.coerce.number().int().nonnegative().default(30),
  /** A client's transfers still awaiting their deposit; creates beyond it answer 429 until some are funded or expire. 0 = no cap. */
  MAX_UNFUNDED_TRANSFERS_PER_CLIENT: z.coerce.number().int().nonnegative().default(20),
  /** Reverse proxies in front of the API that append to X-Forwarded-For; 0: the client is the socket's address. */
  TRUST_PROXY_HOPS: z.coerce.number().int().nonnegative().max(10).default(0),
  /** HMAC key of the stored client hashes (rate-limit buckets, transfers.client_hash); unset: one generated into the database. */
  CLIENT_HASH_KEY: z.string().min(32, 'must be at least 32 characters (e.g. openssl rand -base64 32)').optional(),
  /** The worker's HMAC key of webhook signatures (docs/api.md, "Webhooks"); required by the worker, never needed by the API. */
  WEBHOOK_SIGNING_SECRET: z.string().min(32, 'must be at least 32 characters (openssl rand -hex 32)').optional(),
  /** `true`: webhooks may be sent to private, loopback and link-local addresses (the local stack, tests); never in production. */
  WEBHOOK_ALLOW_PRIVATE_TARGETS: z
    .enum(['true', 'false'], { message: 'must be "true" or "false"' })
    .default('false')
    .transform((v) => v === 'true'),
  /** Each webhook waits a random 0..max seconds before its first attempt (docs/privacy.md, "Webhooks"). */
  WEBHOOK_MAX_DELAY_SECONDS: z.coerce.number().int().min(0).max(3600).default(30),
  /** API: `true` accepts http webhookUrls to any host (a test stack's receivers); default: https only, http to localhost. */
  WEBHOOK_ALLOW_HTTP: z
    .enum(['true', 'false'], { message: 'must be "true" or "false"' })
    .default('false')
    .transform((v) => v === 'true'),
  LOG_LEVEL: z.enum(['debug', 'info', 'warn', 'error']).default('info'),
  /**
   * OpenTelemetry traces (src/observability/tracing.ts, docs/observability.md "Traces"), off unless an OTLP/HTTP endpoint is
   * set: the collector's base URL (spans go to `<it>/v1/traces`), or the traces URL itself, which wins.
   */
  OTEL_EXPORTER_OTLP_ENDPOINT: z.url().optional(),
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: z.url().optional(),
  /** The service name of this process's spans; default `private-route-api` or `private-route-worker`. */
  OTEL_SERVICE_NAME: z.string().min(1).optional(),
  /** `skip`: this process applies no migrations at start (an API whose database role may not change the schema; the worker applies them). */
  DATABASE_MIGRATIONS: z.enum(['apply', 'skip'], { message: 'must be "apply" or "skip"' }).default('apply'),
  /** Connections of this process's database pool: replicas × this stays below the server's max_connections. */
  DATABASE_POOL_MAX: z.coerce.number().int().min(1).max(200).default(10),
  /** The server cancels a statement running longer than this (Postgres `statement_timeout`); 0 leaves the server's setting. */
  DATABASE_STATEMENT_TIMEOUT_MS: z.coerce.number().int().min(0).max(3_600_000).default(60_000),
});

export type Config = z.infer<typeof configSchema>;

export class ConfigError extends Error {
  override name = 'ConfigError';
}

/** The process a configuration is for: the API holds no key, the worker signs (through the signer process in production). */
export type ConfigComponent = 'api' | 'worker';

/** What the API must not be given: the service's keys and the secret that lets a process ask the signer. */
export const API_FORBIDDEN_SECRETS = ['SIGNER_MNEMONIC', 'GAS_ACCOUNT_PRIVATE_KEY', 'POOL_RELAYER_PRIVATE_KEY', 'SIGNER_AUTH_TOKEN'] as const;

/** The xpubs the API derives the addresses it hands out from (deposit and hub accounts; never the exit accounts). */
export const ACCOUNT_XPUB_VARIABLES = ['DEPOSIT_ACCOUNT_XPUB', 'HUB_ACCOUNT_XPUB'] as const;

const LOCAL_KEYS = ['SIGNER_MNEMONIC', 'GAS_ACCOUNT_PRIVATE_KEY', 'POOL_RELAYER_PRIVATE_KEY'] as const;

/** The configuration problem of the API's or the worker's key settings, or null. */
function keyProblem(env: Record<string, string | undefined>, component: ConfigComponent): string | null {
  const given = (name: string) => (env[name] ?? '').trim() !== '';
  if (component === 'api') {
    const keys = API_FORBIDDEN_SECRETS.filter(given);
    if (keys.length > 0) {
      return `the API holds no private key: remove ${keys.join(', ')} from its environment; give it the xpubs ${ACCOUNT_XPUB_VARIABLES.join(', ')} instead (npm run signer:token -- show, or signer:xpubs from a mnemonic, prints them; docs/operations.md, "Keys and the signer")`;
    }
    if (given('EXIT_ACCOUNT_XPUB')) {
      return 'remove EXIT_ACCOUNT_XPUB from the API: the exit accounts receive the pool withdrawals, and their xpub next to the deposit one would tie every withdrawal to its deposit; it stays with the signer (docs/operations.md, "Keys and the signer")';
    }
    const missing = ACCOUNT_XPUB_VARIABLES.filter((name) => !given(name));
    if (missing.length > 0)
      return `${missing.join(', ')} must be set: the API derives route addresses from the signer's xpubs (npm run signer:token -- show, or signer:xpubs from a mnemonic, prints them)`;
    return null;
  }
  const local = LOCAL_KEYS.filter(given);
  const remote = given('SIGNER_URL') || given('SIGNER_AUTH_TOKEN');
  if (remote && local.length > 0)
    return `the worker signs either through the signer process (SIGNER_URL, SIGNER_AUTH_TOKEN) or with local keys (development): remove ${local.join(', ')}`;
  if (remote && !(given('SIGNER_URL') && given('SIGNER_AUTH_TOKEN')))
    return 'SIGNER_URL and SIGNER_AUTH_TOKEN must both be set: the worker asks the signer process for every signature';
  if (!remote && local.length < LOCAL_KEYS.length) {
    return 'the worker needs a signer: SIGNER_URL and SIGNER_AUTH_TOKEN (the signer process, npm run start:signer), or for development SIGNER_MNEMONIC, GAS_ACCOUNT_PRIVATE_KEY and POOL_RELAYER_PRIVATE_KEY';
  }
  return null;
}

/** Reads the API's (`api`) or the worker's (`worker`) configuration; the signer process has its own (src/signer/config.ts). */
export function loadConfig(env: Record<string, string | undefined> = process.env, component: ConfigComponent = 'worker'): Config {
  // Checked before parsing, so that no validation message ever quotes a key given to the API.
  const keys = keyProblem(env, component);
  if (keys) throw new ConfigError(keys);
  const profiled = applyNetworkProfile(env);
  if (profiled.problems.length > 0) {
    throw new ConfigError(`the ${env.NETWORK} profile needs more settings:\n${profiled.problems.map((p) => `  ${p}`).join('\n')}\n(docs/networks.md)`);
  }
  const result = configSchema.safeParse(profiled.env);
  if (!result.success) {
    const lines = result.error.issues.map((issue) => `  ${issue.path.join('.') || '(root)'}: ${issue.message}`);
    throw new ConfigError(`invalid configuration:\n${lines.join('\n')}`);
  }
  const config = result.data;
  if (config.BRIDGE_PROVIDER === 'cctp' && config.HUB_TOKEN_SYMBOL.toUpperCase() !== 'USDC') {
    throw new ConfigError('HUB_TOKEN_SYMBOL must be USDC in burn-and-mint mode (BRIDGE_PROVIDER=cctp)');
  }
  if (config.GAS_ACCOUNT_PRIVATE_KEY && config.GAS_ACCOUNT_PRIVATE_KEY.toLowerCase() === config.POOL_RELAYER_PRIVATE_KEY?.toLowerCase()) {
    throw new ConfigError('POOL_RELAYER_PRIVATE_KEY must differ from GAS_ACCOUNT_PRIVATE_KEY: one account funding both sides of the pool would link them');
  }
  if (config.REFUND_DELAY_MIN_SECONDS > config.REFUND_DELAY_MAX_SECONDS) {
    throw new ConfigError('REFUND_DELAY_MIN_SECONDS must not exceed REFUND_DELAY_MAX_SECONDS');
  }
  if (config.PUBLIC_STATUS_HOLD_SECONDS < config.PRIVACY_MAX_WAIT_SECONDS + 2 * config.PRIVACY_EXIT_EPOCH_SECONDS) {
    throw new ConfigError(
      `PUBLIC_STATUS_HOLD_SECONDS (${config.PUBLIC_STATUS_HOLD_SECONDS}) must be at least PRIVACY_MAX_WAIT_SECONDS + 2 × PRIVACY_EXIT_EPOCH_SECONDS (${config.PRIVACY_MAX_WAIT_SECONDS + 2 * config.PRIVACY_EXIT_EPOCH_SECONDS}): a route that waits its longest would otherwise show its end when it happened (docs/privacy.md, "Quiet public channels")`,
    );
  }
  const holdBps = priceEpochHoldBps(config);
  if (holdBps > 0 && holdBps >= config.PRICE_EPOCH_MARGIN_BPS) {
    throw new ConfigError(
      `PRICE_EPOCH_HOLD_BPS (${holdBps}) must be below PRICE_EPOCH_MARGIN_BPS (${config.PRICE_EPOCH_MARGIN_BPS}): the margin pays for a held price that far from the market`,
    );
  }
  if (config.PRIVACY_EXIT_MEAN_MIN_SECONDS > config.PRIVACY_EXIT_MEAN_MAX_SECONDS) {
    throw new ConfigError('PRIVACY_EXIT_MEAN_MIN_SECONDS must not exceed PRIVACY_EXIT_MEAN_MAX_SECONDS');
  }
  if (config.PRIVACY_EXIT_FLUSH_SECONDS < config.PRIVACY_EXIT_MEAN_MAX_SECONDS) {
    throw new ConfigError(
      'PRIVACY_EXIT_FLUSH_SECONDS must be at least PRIVACY_EXIT_MEAN_MAX_SECONDS: a class flushed sooner than its mean wait leaves in the order it came (docs/privacy.md, "Timing")',
    );
  }
  if (config.PRIVACY_MIN_ANONYMITY_SET > config.PRIVACY_MAX_ANONYMITY_SET) {
    throw new ConfigError('PRIVACY_MIN_ANONYMITY_SET must not exceed PRIVACY_MAX_ANONYMITY_SET');
  }
  if (component === 'worker' && !config.WEBHOOK_SIGNING_SECRET) {
    throw new ConfigError('WEBHOOK_SIGNING_SECRET must be set for the worker: it signs every webhook delivery (openssl rand -hex 32; docs/api.md, "Webhooks")');
  }
  const temporalProblem = temporalConnectionProblem(config);
  if (temporalProblem) throw new ConfigError(temporalProblem);
  const codecProblem = payloadCodecProblem(config);
  if (codecProblem) throw new ConfigError(codecProblem);
  return config;
}

/** The problem with the history-encryption settings, or null. */
export function payloadCodecProblem(config: Pick<Config, 'PAYLOAD_CODEC' | 'PAYLOAD_CODEC_KEYS' | 'PAYLOAD_CODEC_KEY_ID'>): string | null {
  if (config.PAYLOAD_CODEC === 'off') return null;
  if (!config.PAYLOAD_CODEC_KEYS || !config.PAYLOAD_CODEC_KEY_ID) {
    return 'PAYLOAD_CODEC_KEYS and PAYLOAD_CODEC_KEY_ID must be set: Temporal history is encrypted (docs/operations.md, "Encrypted history"); PAYLOAD_CODEC=off stores workflow inputs in clear';
  }
  if (!(config.PAYLOAD_CODEC_KEY_ID in config.PAYLOAD_CODEC_KEYS)) {
    return `PAYLOAD_CODEC_KEY_ID "${config.PAYLOAD_CODEC_KEY_ID}" is not a key id of PAYLOAD_CODEC_KEYS (${Object.keys(config.PAYLOAD_CODEC_KEYS).join(', ')})`;
  }
  return null;
}

// The xpubs are no keys, but they link every route's deposit, hub and exit addresses (index i of each): never printed either.
const SECRET_KEYS = new Set([
  'SIGNER_MNEMONIC',
  'GAS_ACCOUNT_PRIVATE_KEY',
  'POOL_RELAYER_PRIVATE_KEY',
  'SIGNER_AUTH_TOKEN',
  'DEPOSIT_ACCOUNT_XPUB',
  'HUB_ACCOUNT_XPUB',
  'RELAY_API_KEY',
  'DATABASE_URL',
  'CLIENT_HASH_KEY',
  'TEMPORAL_TLS_KEY',
  'TEMPORAL_API_KEY',
  'PAYLOAD_CODEC_KEYS',
  'CODEC_AUTH_TOKEN',
  'WEBHOOK_SIGNING_SECRET',
]);

const URL_KEYS = new Set(['RELAY_API_URL', 'IRIS_API_URL', 'PRIVACY_POOLS_ASP_URL', 'OTEL_EXPORTER_OTLP_ENDPOINT', 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT']);

/** The configuration with every secret replaced by "(set)" and URLs cut to their origin (RPC keys live in paths), safe to print. */
export function describeConfig(config: Config): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(config).map(([k, v]) => {
      if (v === undefined) return [k, v];
      if (SECRET_KEYS.has(k)) return [k, '(set)'];
      if (URL_KEYS.has(k)) return [k, urlOrigin(String(v))];
      if (k === 'CHAIN_RPC_URLS') return [k, Object.fromEntries(Object.entries(v as Record<string, string>).map(([id, url]) => [id, urlOrigin(url)]))];
      return [k, v];
    }),
  );
}

export function rpcUrlFor(config: Config, chainId: number): string {
  const url = config.CHAIN_RPC_URLS[String(chainId)];
  if (!url) throw new ConfigError(`no RPC URL configured for chain ${chainId} (CHAIN_RPC_URLS)`);
  return url;
}

/** The price epochs' hold band: PRICE_EPOCH_HOLD_BPS, else 50 bps or half the margin, whichever is less. */
export function priceEpochHoldBps(config: Pick<Config, 'PRICE_EPOCH_HOLD_BPS' | 'PRICE_EPOCH_MARGIN_BPS'>): number {
  return config.PRICE_EPOCH_HOLD_BPS ?? Math.min(50, config.PRICE_EPOCH_MARGIN_BPS / 2);
}
