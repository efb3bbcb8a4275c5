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
import { startSignerServer } from './signer/signerApi.ts';

const logger = createLogger({ level: (process.env.LOG_LEVEL as 'info' | undefined) ?? 'info', fields: { component: 'signer' } });

try {
  const config = loadSignerConfig();
  const signer = createLocalSigner({
    mnemonic: config.SIGNER_MNEMONIC,
    gasPrivateKey: config.GAS_ACCOUNT_PRIVATE_KEY as `0x${string}`,
    poolRelayerPrivateKey: config.POOL_RELAYER_PRIVATE_KEY as `0x${string}`,
  });
  const server = await startSignerServer(signer, { authToken: config.SIGNER_AUTH_TOKEN, logger, host: config.SIGNER_HOST, port: config.SIGNER_PORT });
  const keys = await signer.publicKeys();
  logger.info('signer listening', { url: server.url, gasAddress: keys.gasAddress, poolRelayerAddress: keys.poolRelayerAddress });
  const stops = new StopList(logger);
  stops.add('signer HTTP', server.stop);
  onShutdown(logger, () => stops.stopAll());
} catch (error) {
  // A system error (a port in use) is safe to print; any other one could quote a key it was given.
  const detail = (error as NodeJS.ErrnoException).code ? String(error) : error instanceof Error ? error.name : 'unknown';
  logger.error(error instanceof ConfigError ? error.message : 'signer failed to start', { error: detail });
  process.exit(1);
}
