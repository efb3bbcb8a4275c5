/**
 * `npm run signer:token -- init [--import]` (node dist/src/signerToken.js in production): puts the signer's keys into
 * its PKCS#11 token once (SIGNER_PKCS11_MODULE, SIGNER_PKCS11_TOKEN, SIGNER_PKCS11_PIN), then prints the API's xpubs.
 * Without --import every key is generated inside the token; with it, SIGNER_MNEMONIC, GAS_ACCOUNT_PRIVATE_KEY and
 * POOL_RELAYER_PRIVATE_KEY are read from the environment and imported (then remove them from every environment).
 * `npm run signer:token -- show` prints the xpubs and the shared accounts' addresses of an initialised token.
 */
import { z } from 'zod';
import { DEFAULT_RELAY_SENDERS, MAX_RELAY_SENDERS } from './accounts/relaySenders.ts';
import { mnemonic } from './config.ts';
import { openPkcs11Token } from './signer/pkcs11/token.ts';
import { initialiseToken } from './signer/pkcs11/setup.ts';
import { createTokenSigner } from './signer/pkcs11/tokenSigner.ts';

const [command, ...flags] = process.argv.slice(2);
const settings = z
  .object({
    SIGNER_PKCS11_MODULE: z.string().min(1).default('/usr/lib/softhsm/libsofthsm2.so'),
    SIGNER_PKCS11_TOKEN: z.string().min(1).max(32),
    SIGNER_PKCS11_PIN: z.string().min(4),
    POOL_RELAY_SENDERS: z.coerce.number().int().min(1).max(MAX_RELAY_SENDERS).default(DEFAULT_RELAY_SENDERS),
  })
  .safeParse(process.env);
const fail = (message: string): never => {
  process.stderr.write(`${message}\n`);
  process.exit(2);
};
if (command !== 'init' && command !== 'show') fail('usage: signer:token init [--import] | show');
if (!settings.success) fail('set SIGNER_PKCS11_TOKEN (the token label) and SIGNER_PKCS11_PIN (its user PIN); SIGNER_PKCS11_MODULE defaults to SoftHSM2');
const { SIGNER_PKCS11_MODULE, SIGNER_PKCS11_TOKEN, SIGNER_PKCS11_PIN, POOL_RELAY_SENDERS } = settings.data!;

try {
  const token = openPkcs11Token({ module: SIGNER_PKCS11_MODULE, tokenLabel: SIGNER_PKCS11_TOKEN, pin: SIGNER_PKCS11_PIN });
  try {
    if (command === 'init') {
      const imported = flags.includes('--import') ? importedKeys() : undefined;
      const { created } = initialiseToken(token, imported);
      process.stdout.write(`# ${imported ? 'imported' : 'generated'} in token "${SIGNER_PKCS11_TOKEN}": ${created.join(', ')}\n`);
    }
    const keys = await createTokenSigner(token, POOL_RELAY_SENDERS).publicKeys();
    process.stdout.write(
      [
        '# The API takes these two (docs/operations.md, "Keys and the signer"); the exit role\'s xpub stays with the signer.',
        `DEPOSIT_ACCOUNT_XPUB=${keys.xpubs.deposit}`,
        `HUB_ACCOUNT_XPUB=${keys.xpubs.hub}`,
        `# gas account ${keys.gasAddress}; pool relayer and its sending accounts (POOL_RELAY_SENDERS) ${keys.poolRelayerAddresses.join(', ')}: fund them on every chain they pay on`,
        '',
      ].join('\n'),
    );
  } finally {
    token.close();
  }
} catch (error) {
  fail(`signer:token ${command}: ${(error as Error).message}`);
}

function importedKeys() {
  const hexKey = z.string().regex(/^0x[0-9a-fA-F]{64}$/);
  const parsed = z.object({ SIGNER_MNEMONIC: mnemonic, GAS_ACCOUNT_PRIVATE_KEY: hexKey, POOL_RELAYER_PRIVATE_KEY: hexKey }).safeParse(process.env);
  if (!parsed.success) return fail('--import reads SIGNER_MNEMONIC, GAS_ACCOUNT_PRIVATE_KEY and POOL_RELAYER_PRIVATE_KEY from the environment: set all three');
  return {
    mnemonic: parsed.data.SIGNER_MNEMONIC,
    gasPrivateKey: parsed.data.GAS_ACCOUNT_PRIVATE_KEY as `0x${string}`,
    poolRelayerPrivateKey: parsed.data.POOL_RELAYER_PRIVATE_KEY as `0x${string}`,
  };
}
