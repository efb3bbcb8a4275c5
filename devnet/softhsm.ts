import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

/** SoftHSM2's PKCS#11 library (Debian's softhsm2 package; npm test installs it: scripts/ensure-test-packages.sh). */
export const SOFTHSM_MODULE = '/usr/lib/softhsm/libsofthsm2.so';
const TOKEN_LABEL = 'private-route';

export interface SoftHsmToken {
  /** The signer's settings for it (SIGNER_KEYS=pkcs11), SOFTHSM2_CONF included. */
  env: Record<string, string>;
  /** Whether the token was initialised by this call (its keys still to be put in). */
  fresh: boolean;
}

/**
 * A SoftHSM2 token of its own in `dir` (its configuration, object store and PIN, owner-only), initialised on first
 * use and found again after: the local stack's and the tests' stand-in for the production HSM.
 */
export function softHsmToken(dir: string): SoftHsmToken {
  if (!existsSync(SOFTHSM_MODULE)) {
    throw new Error(`${SOFTHSM_MODULE} is missing: install Debian's softhsm2 (bash scripts/ensure-test-packages.sh), or unset DEVNET_SIGNER_KEYS`);
  }
  const tokens = path.join(dir, 'tokens');
  mkdirSync(tokens, { recursive: true, mode: 0o700 });
  const conf = path.join(dir, 'softhsm2.conf');
  writeFileSync(conf, `directories.tokendir = ${tokens}\nobjectstore.backend = file\nlog.level = ERROR\nslots.removable = false\n`, { mode: 0o600 });
  const pinFile = path.join(dir, 'user-pin');
  const env = { SOFTHSM2_CONF: conf };
  const fresh = !existsSync(pinFile);
  if (fresh) {
    const pin = randomBytes(12).toString('hex');
    // The security officer's PIN is never needed again on a development token: a random one, forgotten.
    execFileSync('softhsm2-util', ['--init-token', '--free', '--label', TOKEN_LABEL, '--so-pin', randomBytes(12).toString('hex'), '--pin', pin], {
      env: { ...process.env, ...env },
      stdio: 'ignore',
    });
    writeFileSync(pinFile, pin, { mode: 0o600 });
  }
  return {
    fresh,
    env: {
      ...env,
      SIGNER_KEYS: 'pkcs11',
      SIGNER_PKCS11_MODULE: SOFTHSM_MODULE,
      SIGNER_PKCS11_TOKEN: TOKEN_LABEL,
      SIGNER_PKCS11_PIN: readFileSync(pinFile, 'utf8'),
    },
  };
}
