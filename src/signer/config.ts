import { z } from 'zod';
import { DEFAULT_RELAY_SENDERS, MAX_RELAY_SENDERS } from '../accounts/relaySenders.ts';
import { ConfigError, configSchema, mnemonic } from '../config.ts';
import { applyNetworkProfile, type NetworkName, networkProfile } from '../networks/profiles.ts';
import { signerAuthToken } from './protocol.ts';

const hexKey = z.string().regex(/^0x[0-9a-fA-F]{64}$/, 'must be a 0x-prefixed 32-byte hex private key');
const wei = z.string().regex(/^\d{1,30}$/, 'must be an amount in wei (a decimal integer)');

/** Wei: one value for every chain, or a JSON object by chain id (chains not named: nothing allowed). */
const weiByChain = (fallback: string) =>
  z
    .string()
    .default(fallback)
    .transform((value, ctx) => {
      try {
        const parsed: unknown = value.trim().startsWith('{') ? JSON.parse(value) : value;
        if (typeof parsed === 'string') return { default: BigInt(wei.parse(parsed)), byChain: {} as Record<string, bigint> };
        const byChain = z.record(z.string().regex(/^\d+$/), wei).parse(parsed);
        return { default: 0n, byChain: Object.fromEntries(Object.entries(byChain).map(([k, v]) => [k, BigInt(v)])) };
      } catch {
        ctx.addIssue({ code: 'custom', message: 'must be wei as a decimal integer, or a JSON object {"<chainId>":"<wei>"}' });
        return z.NEVER;
      }
    });

/**
 * The signer process's configuration: the keys, the shared secret, where it listens (loopback by default), and its
 * spending policy (docs/security.md): the database it reads read-only, the audit log it appends to, and the
 * contracts the service calls (the same variables, and network profile, as the worker's).
 */
export const signerConfigSchema = z.object({
  /** Where the keys are: `env` (the three below; development and the local stack only) or `pkcs11` (a token, docs/security.md). */
  SIGNER_KEYS: z.enum(['env', 'pkcs11'], { message: 'must be "env" or "pkcs11"' }).default('env'),
  SIGNER_MNEMONIC: mnemonic.optional(),
  GAS_ACCOUNT_PRIVATE_KEY: hexKey.optional(),
  POOL_RELAYER_PRIVATE_KEY: hexKey.optional(),
  /** The token's PKCS#11 library, its label and its user PIN (SIGNER_KEYS=pkcs11). */
  SIGNER_PKCS11_MODULE: z.string().min(1).default('/usr/lib/softhsm/libsofthsm2.so'),
  SIGNER_PKCS11_TOKEN: z.string().min(1).max(32).optional(),
  SIGNER_PKCS11_PIN: z.string().min(4, 'must be the token user PIN (at least 4 characters)').optional(),
  /** The pool relayer's sending accounts, taking turns with withdrawals and mints (src/accounts/relaySenders.ts). */
  POOL_RELAY_SENDERS: z.coerce.number().int().min(1).max(MAX_RELAY_SENDERS).default(DEFAULT_RELAY_SENDERS),
  SIGNER_AUTH_TOKEN: signerAuthToken,
  SIGNER_HOST: z.string().min(1).default('127.0.0.1'),
  SIGNER_PORT: z.coerce.number().int().min(0).max(65535).default(3100),
  LOG_LEVEL: z.enum(['debug', 'info', 'warn', 'error']).default('info'),
  NETWORK: configSchema.shape.NETWORK,
  /** `enforce` (the default; the only choice with NETWORK=mainnet) or `off` (signs what the token holder asks: tests of the signer itself). */
  SIGNER_POLICY: z.enum(['enforce', 'off'], { message: 'must be "enforce" or "off"' }).default('enforce'),
  /** The service's database, read by the policy only (every transaction read-only); a role with SELECT only is best (deploy/postgres/roles.sql). */
  SIGNER_DATABASE_URL: z.string().min(1).optional(),
  /** The append-only, hash-chained audit log (created owner-only). */
  SIGNER_AUDIT_LOG: z.string().min(1).optional(),
  /**
   * The chains the signer signs for, comma-separated chain ids; on testnet and mainnet the network profile's chains
   * by default. Unset on devnet: any.
   */
  SIGNER_CHAIN_IDS: z
    .string()
    .regex(/^\s*\d+(\s*,\s*\d+)*\s*$/, 'must be chain ids, comma-separated (e.g. 1,8453,42161)')
    .transform((v) => v.split(',').map((id) => Number(id.trim())))
    .optional(),
  /** Where income sweeps go: the only address the relayer relays a sweep of a change note to (docs/security.md). */
  SIGNER_INCOME_TREASURY: z
    .string()
    .regex(/^0x[0-9a-fA-F]{40}$/, 'must be a 0x-prefixed 20-byte hex address')
    .optional(),
  /** The largest native top-up of a route account in one transaction, in wei: one value, or a JSON object by chain id. */
  SIGNER_TOP_UP_CAP_WEI: weiByChain('200000000000000000'),
  /** The most one transaction may pay in fees (gas limit × price per gas), in wei: one value, or a JSON object by chain id. */
  SIGNER_TX_FEE_CAP_WEI: weiByChain('500000000000000000'),
  /** Signatures per minute per role, as JSON ({"gas":300,…}); unset roles keep their defaults (src/signer/policy/spendingPolicy.ts). */
  SIGNER_RATE_LIMITS: z
    .string()
    .optional()
    .transform((value, ctx) => {
      if (value === undefined) return {};
      try {
        return z
          .record(z.enum(['deposit', 'hub', 'exit', 'gas', 'poolRelayer', 'noteSecrets']), z.number().int().positive())
          .parse(JSON.parse(value)) as Partial<Record<string, number>>;
      } catch {
        ctx.addIssue({ code: 'custom', message: 'must be JSON like {"gas":300,"poolRelayer":300} (positive integers per role)' });
        return z.NEVER;
      }
    }),
  HUB_TOKEN_SYMBOL: configSchema.shape.HUB_TOKEN_SYMBOL,
  PRIVACY_POOLS_ENTRYPOINT: configSchema.shape.PRIVACY_POOLS_ENTRYPOINT.optional(),
  CCTP_ENVIRONMENT: configSchema.shape.CCTP_ENVIRONMENT,
  CCTP_LOCAL_CHAINS: configSchema.shape.CCTP_LOCAL_CHAINS,
});

export type SignerConfig = z.infer<typeof signerConfigSchema>;

export function loadSignerConfig(env: Record<string, string | undefined> = process.env): SignerConfig {
  // The network profile fills in the Entrypoint and the CCTP environment as it does for the worker.
  const profiled = applyNetworkProfile(env).env;
  // The network's chains bound what the signer signs for, unless the deployment names its own.
  const network = env.NETWORK ?? 'devnet';
  const profile = network === 'testnet' || network === 'mainnet' ? networkProfile(network as NetworkName) : null;
  if (profile && !profiled.SIGNER_CHAIN_IDS?.trim()) profiled.SIGNER_CHAIN_IDS = profile.chains.map((c) => c.chainId).join(',');
  const result = signerConfigSchema.safeParse(profiled);
  if (!result.success) {
    // Only the variable names and the rule: a zod message never quotes the value here, and must not.
    const lines = result.error.issues.map((issue) => `  ${issue.path.join('.') || '(root)'}: ${issue.message}`);
    throw new ConfigError(`invalid signer configuration:\n${lines.join('\n')}`);
  }
  const config = result.data;
  if (config.SIGNER_POLICY === 'off' && config.NETWORK === 'mainnet') {
    throw new ConfigError('SIGNER_POLICY=off is refused with NETWORK=mainnet: the signer must check every request against its spending policy');
  }
  if (config.SIGNER_POLICY === 'enforce') {
    const missing = (['SIGNER_DATABASE_URL', 'SIGNER_AUDIT_LOG', 'PRIVACY_POOLS_ENTRYPOINT'] as const).filter((name) => !config[name]);
    if (missing.length > 0) {
      throw new ConfigError(
        `the signer's spending policy (SIGNER_POLICY=enforce, the default) needs ${missing.join(', ')} (docs/security.md); SIGNER_POLICY=off signs without it (never on mainnet)`,
      );
    }
  }
  if (config.SIGNER_KEYS === 'pkcs11') checkTokenKeys(config);
  else checkEnvironmentKeys(config);
  return config;
}

function checkTokenKeys(config: SignerConfig): void {
  const missing = (['SIGNER_PKCS11_TOKEN', 'SIGNER_PKCS11_PIN'] as const).filter((name) => !config[name]);
  if (missing.length > 0) throw new ConfigError(`SIGNER_KEYS=pkcs11 needs ${missing.join(', ')} (docs/security.md, "Keys in a PKCS#11 token")`);
  const envKeys = ENVIRONMENT_KEYS.filter((name) => config[name] !== undefined);
  if (envKeys.length > 0) {
    throw new ConfigError(
      `SIGNER_KEYS=pkcs11 keeps every key in the token: remove ${envKeys.join(', ')} from the signer's environment (import them once: npm run signer:token -- init --import)`,
    );
  }
}

function checkEnvironmentKeys(config: SignerConfig): void {
  if (config.NETWORK === 'mainnet') {
    throw new ConfigError(
      'keys in environment variables (SIGNER_KEYS=env) are refused with NETWORK=mainnet: keep them in a PKCS#11 token (SIGNER_KEYS=pkcs11, docs/security.md)',
    );
  }
  const missing = ENVIRONMENT_KEYS.filter((name) => config[name] === undefined);
  if (missing.length > 0)
    throw new ConfigError(`invalid signer configuration:\n${missing.map((name) => `  ${name}: is required with SIGNER_KEYS=env (the default)`).join('\n')}`);
  if (config.GAS_ACCOUNT_PRIVATE_KEY!.toLowerCase() === config.POOL_RELAYER_PRIVATE_KEY!.toLowerCase()) {
    throw new ConfigError('POOL_RELAYER_PRIVATE_KEY must differ from GAS_ACCOUNT_PRIVATE_KEY: one account funding both sides of the pool would link them');
  }
}

const ENVIRONMENT_KEYS = ['SIGNER_MNEMONIC', 'GAS_ACCOUNT_PRIVATE_KEY', 'POOL_RELAYER_PRIVATE_KEY'] as const;
