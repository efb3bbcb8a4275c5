import { inArray } from 'drizzle-orm';
import { ConfigError } from '../config.ts';
import type { Database } from '../db/client.ts';
import { signerFingerprints } from '../db/schema.ts';
import { ROUTE_ACCOUNT_ROLES, type ApiAccountRole, type RouteAccountRole, type RouteAddressBook } from './routeAccounts.ts';

/**
 * One row per route account role: the address of derivation index 0, which no route is ever given (the
 * route_account_index sequence starts at 1; quotes use it only as a placeholder account). Addresses, never a
 * secret. The deposit row keeps the name it had before the xpubs, so existing databases stay valid.
 */
const ROW_NAMES: Record<RouteAccountRole, string> = { deposit: 'route-keyring', hub: 'route-keyring/hub', exit: 'route-keyring/exit' };

/** The deposit address of index 0 (the original fingerprint). */
export function signerFingerprint(addresses: RouteAddressBook<ApiAccountRole>): string {
  return addresses.routeAddresses(0).deposit;
}

/**
 * Every API and worker start calls this. The worker's addresses come from the signer's public keys, the API's
 * from its xpubs (DEPOSIT_ACCOUNT_XPUB, HUB_ACCOUNT_XPUB; the API has no exit role). The first start records each
 * role's fingerprint it knows, every later one must match: an API whose xpubs are not the signer's would hand out deposit
 * addresses whose funds the worker cannot move, so it refuses to start instead (docs/operations.md).
 */
export async function checkSignerFingerprint(db: Database, addresses: RouteAddressBook<ApiAccountRole>, component: 'api' | 'worker'): Promise<void> {
  const own: Partial<Record<RouteAccountRole, string>> = addresses.routeAddresses(0);
  const roles = ROUTE_ACCOUNT_ROLES.filter((role) => own[role] !== undefined);
  await db
    .insert(signerFingerprints)
    .values(roles.map((role) => ({ name: ROW_NAMES[role], address: own[role] as string })))
    .onConflictDoNothing();
  const rows = await db
    .select()
    .from(signerFingerprints)
    .where(inArray(signerFingerprints.name, Object.values(ROW_NAMES)));
  for (const role of roles) {
    const address = own[role] as string;
    const recorded = rows.find((row) => row.name === ROW_NAMES[role]);
    if (!recorded) throw new Error('the signer fingerprint could not be recorded');
    if (recorded.address.toLowerCase() === address.toLowerCase()) continue;
    const source =
      component === 'api'
        ? `the ${role} xpub of this api (${role.toUpperCase()}_ACCOUNT_XPUB) is not the signer's this database's transfers were created with`
        : `the signer of this worker (SIGNER_URL, or SIGNER_MNEMONIC in development) is not the one this database's transfers were created with`;
    const remedy =
      component === 'api'
        ? "Give the API the signer's xpubs: npm run signer:token -- show on the signer's host (or signer:xpubs where its mnemonic is) prints them."
        : 'Start the worker against the signer (and mnemonic) of the deployment that created the transfers (a different one could not move their deposits).';
    throw new ConfigError(
      `${source}: its ${role} account 0 is ${address}, the database recorded ${recorded.address} on ${recorded.createdAt.toISOString()}. ${remedy} See "Keys and the signer" in docs/operations.md.`,
    );
  }
}
