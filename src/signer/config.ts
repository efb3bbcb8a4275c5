import { z } from 'zod';
import { ConfigError, mnemonic } from '../config.ts';
import { signerAuthToken } from './protocol.ts';

const hexKey = z.string().regex(/^0x[0-9a-fA-F]{64}$/, 'must be a 0x-prefixed 32-byte hex private key');

/** The signer process's configuration: the keys, the shared secret, and where it listens (loopback by default). */
export const signerConfigSchema = z.object({
  SIGNER_MNEMONIC: mnemonic,
  GAS_ACCOUNT_PRIVATE_KEY: hexKey,
  POOL_RELAYER_PRIVATE_KEY: hexKey,
  SIGNER_AUTH_TOKEN: signerAuthToken,
  SIGNER_HOST: z.string().min(1).default('127.0.0.1'),
  SIGNER_PORT: z.coerce.number().int().min(0).max(65535).default(3100),
  LOG_LEVEL: z.enum(['debug', 'info', 'warn', 'error']).default('info'),
});

export type SignerConfig = z.infer<typeof signerConfigSchema>;

export function loadSignerConfig(env: Record<string, string | undefined> = process.env): SignerConfig {
  const result = signerConfigSchema.safeParse(env);
  if (!result.success) {
    // Only the variable names and the rule: a zod message never quotes the value here, and must not.
    const lines = result.error.issues.map((issue) => `  ${issue.path.join('.') || '(root)'}: ${issue.message}`);
    throw new ConfigError(`invalid signer configuration:\n${lines.join('\n')}`);
  }
  const config = result.data;
  if (config.GAS_ACCOUNT_PRIVATE_KEY.toLowerCase() === config.POOL_RELAYER_PRIVATE_KEY.toLowerCase()) {
    throw new ConfigError('POOL_RELAYER_PRIVATE_KEY must differ from GAS_ACCOUNT_PRIVATE_KEY: one account funding both sides of the pool would link them');
  }
  return config;
}
