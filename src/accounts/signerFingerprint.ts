import { eq } from 'drizzle-orm';
import { ConfigError } from '../config.ts';
import type { Database } from '../db/client.ts';
import { signerFingerprints } from '../db/schema.ts';
import type { RouteKeyring } from './routeAccounts.ts';

const SIGNER = 'route-keyring';

/**
 * The keyring's public fingerprint: the deposit address of derivation index 0, which no route is ever given
 * (the route_account_index sequence starts at 1; quotes use it only as a placeholder account). An address,
 * never the secret.
 */
export function signerFingerprint(keyring: RouteKeyring): string {
  return keyring.routeAccounts(0).deposit.address;
}

/**
 * Every API and worker start calls this: the first one records the keyring's fingerprint in the database,
 * every later one must match it. An API and a worker with different SIGNER_MNEMONICs would hand out deposit
 * addresses whose funds the worker cannot move; they refuse to start instead (docs/operations.md).
 */
export async function checkSignerFingerprint(db: Database, keyring: RouteKeyring, component: 'api' | 'worker'): Promise<void> {
  const address = signerFingerprint(keyring);
  await db.insert(signerFingerprints).values({ name: SIGNER, address }).onConflictDoNothing();
  const [recorded] = await db.select().from(signerFingerprints).where(eq(signerFingerprints.name, SIGNER));
  if (!recorded) throw new Error('the signer fingerprint could not be recorded');
  if (recorded.address.toLowerCase() === address.toLowerCase()) return;
  throw new ConfigError(
    `SIGNER_MNEMONIC of this ${component} is not the one this database's transfers were created with: ` +
      `its accounts' fingerprint is ${address}, the database recorded ${recorded.address} on ${recorded.createdAt.toISOString()}. ` +
      'Start the API and the worker with the same SIGNER_MNEMONIC as the deployment that created the transfers ' +
      '(a different one could not move their deposits). See "Signer fingerprint" in docs/operations.md.',
  );
}
