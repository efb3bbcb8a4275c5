/**
 * Production entry point of the signer process (`npm run start:signer`): the only process holding the
 * mnemonic, the gas and pool-relayer keys and the pool's master keys. The worker asks it for signatures and
 * note secrets over HTTP (SIGNER_URL, SIGNER_AUTH_TOKEN); the API never talks to it.
 */
import { ConfigError } from './config.ts';
import { createLogger } from './logger.ts';
import { StopList, onShutdown } from './shutdown.ts';
import { loadSignerConfig } from './signer/config.ts';
import { createLocalSigner } from './signer/local.ts';
import { openPkcs11Token } from './signer/pkcs11/token.ts';
import { createTokenSigner } from './signer/pkcs11/tokenSigner.ts';
import { hashPrecommitment, type Secret } from '@0xbow/privacy-pools-core-sdk';
import { poseidon1 } from 'poseidon-lite';
import { createRouteAddressBook } from './accounts/routeAccounts.ts';
import { CCTP_V2_CONTRACTS } from './providers/cctp/chains.ts';
import { openAuditLog } from './signer/policy/auditLog.ts';
import { connectRouteRecords } from './signer/policy/routeFacts.ts';
import { createSpendingPolicy, type SpendingPolicy } from './signer/policy/spendingPolicy.ts';
import type { SignerConfig } from './signer/config.ts';
import type { Signer } from './signer/signer.ts';
import { startSignerServer } from './signer/signerApi.ts';

const logger = createLogger({ level: (process.env.LOG_LEVEL as 'info' | undefined) ?? 'info', fields: { component: 'signer' } });

try {
  const config = loadSignerConfig();
  const stops = new StopList(logger);
  const signer = keysOf(config, stops);
  const policy = config.SIGNER_POLICY === 'enforce' ? await spendingPolicyOf(config, signer, stops) : undefined;
  const server = await startSignerServer(signer, { authToken: config.SIGNER_AUTH_TOKEN, logger, host: config.SIGNER_HOST, port: config.SIGNER_PORT, policy });
  const keys = await signer.publicKeys();
  logger.info('signer listening', {
    url: server.url,
    gasAddress: keys.gasAddress,
    poolRelayerAddress: keys.poolRelayerAddress,
    relaySenders: keys.poolRelayerAddresses.length,
    policy: config.SIGNER_POLICY,
    keys: config.SIGNER_KEYS,
  });
  stops.add('signer HTTP', server.stop);
  onShutdown(logger, () => stops.stopAll());
} catch (error) {
  // A system error (a port in use) is safe to print; any other one could quote a key it was given.
  const detail = (error as NodeJS.ErrnoException).code ? String(error) : error instanceof Error ? error.name : 'unknown';
  logger.error(error instanceof ConfigError ? error.message : 'signer failed to start', { error: detail });
  process.exit(1);
}

/** The keys: in the PKCS#11 token (SIGNER_KEYS=pkcs11), or in this process's memory from the environment (development). */
function keysOf(config: SignerConfig, stops: StopList): Signer {
  if (config.SIGNER_KEYS === 'pkcs11') {
    try {
      const token = openPkcs11Token({ module: config.SIGNER_PKCS11_MODULE, tokenLabel: config.SIGNER_PKCS11_TOKEN!, pin: config.SIGNER_PKCS11_PIN! });
      stops.add('PKCS#11 session', async () => token.close());
      return createTokenSigner(token, config.POOL_RELAY_SENDERS);
    } catch (error) {
      // The token's messages name labels and PKCS#11 return codes, never the PIN.
      throw new ConfigError(`the PKCS#11 token could not be used: ${(error as Error).message}`);
    }
  }
  return createLocalSigner({
    mnemonic: config.SIGNER_MNEMONIC!,
    gasPrivateKey: config.GAS_ACCOUNT_PRIVATE_KEY as `0x${string}`,
    poolRelayerPrivateKey: config.POOL_RELAYER_PRIVATE_KEY as `0x${string}`,
    relaySenders: config.POOL_RELAY_SENDERS,
  });
}

/** The spending policy (docs/security.md) on this signer's own records reader and audit log. */
async function spendingPolicyOf(config: SignerConfig, signer: Signer, stops: StopList): Promise<SpendingPolicy> {
  const keys = await signer.publicKeys();
  const book = createRouteAddressBook(keys.xpubs);
  const records = connectRouteRecords({
    url: config.SIGNER_DATABASE_URL!,
    hubSymbol: config.HUB_TOKEN_SYMBOL,
    ownAccounts: (index) => book.routeAddresses(index),
  });
  const audit = await openAuditLog(config.SIGNER_AUDIT_LOG!);
  stops.add('audit log', audit.close);
  stops.add('policy database reads', records.close);
  // The worker's own choice: the local deployments when given, else Circle's one pair per environment.
  const cctp = config.CCTP_LOCAL_CHAINS ?? [CCTP_V2_CONTRACTS[config.CCTP_ENVIRONMENT]];
  const { default: topUpDefault, byChain } = config.SIGNER_TOP_UP_CAP_WEI;
  return createSpendingPolicy({
    records,
    audit,
    noteKeysOf: async (scope, index) => {
      const { nullifier, secret } = await signer.depositSecrets(scope, index);
      return { precommitment: hashPrecommitment(nullifier as Secret, secret as Secret), nullifierHash: poseidon1([nullifier]) };
    },
    changeNullifierHashOf: async (label, index) => poseidon1([(await signer.withdrawalSecrets(label, index)).nullifier]),
    rateLimits: config.SIGNER_RATE_LIMITS,
    contracts: {
      entrypoints: [config.PRIVACY_POOLS_ENTRYPOINT as `0x${string}`],
      tokenMessengers: cctp.map((c) => c.tokenMessenger as `0x${string}`),
      messageTransmitters: cctp.map((c) => c.messageTransmitter as `0x${string}`),
      gasAccount: keys.gasAddress,
      poolRelayer: keys.poolRelayerAddress,
      incomeTreasury: config.SIGNER_INCOME_TREASURY as `0x${string}` | undefined,
      chainIds: config.SIGNER_CHAIN_IDS,
      topUpCap: (chainId) => byChain[String(chainId)] ?? topUpDefault,
      txFeeCap: (chainId) => config.SIGNER_TX_FEE_CAP_WEI.byChain[String(chainId)] ?? config.SIGNER_TX_FEE_CAP_WEI.default,
    },
  });
}
