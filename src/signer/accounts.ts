import { type Address, type LocalAccount, getAddress, serializeTransaction } from 'viem';
import { toAccount } from 'viem/accounts';
import { createRouteAddressBook, type RouteAccountRole, type RouteAddresses, type RouteKeyring } from '../accounts/routeAccounts.ts';
import type { Signer, SignerAccount, SignerPublicKeys } from './signer.ts';

/** The worker's accounts: addresses from the signer's public keys, every signature asked of the signer. */
export interface SignerAccounts {
  keyring: RouteKeyring;
  gasAccount: LocalAccount;
  /** The relayer itself: receives the relay fees, funds exit accounts. */
  poolRelayer: LocalAccount;
  /** Its sending accounts, the relayer first: they take turns sending withdrawals and mints. */
  relaySenders: LocalAccount[];
}

export function signerAccounts(signer: Signer, publicKeys: SignerPublicKeys): SignerAccounts {
  const book = createRouteAddressBook(publicKeys.xpubs);
  // Activities look a route's accounts up at every step; a public derivation per role is worth remembering.
  const known = new Map<number, RouteAddresses>();
  const addresses = {
    routeAddresses(index: number): RouteAddresses {
      let found = known.get(index);
      if (!found) {
        found = book.routeAddresses(index);
        if (known.size >= 10_000) known.delete(known.keys().next().value as number);
        known.set(index, found);
      }
      return found;
    },
  };
  const account = (address: Address, ref: SignerAccount): LocalAccount =>
    toAccount({
      address: getAddress(address),
      signTransaction: (transaction) => signer.signTransaction(ref, serializeTransaction(transaction)),
      signMessage: async () => {
        throw new Error('the signer signs transactions only');
      },
      signTypedData: async () => {
        throw new Error('the signer signs transactions only');
      },
    });
  return {
    keyring: {
      routeAddresses: (index) => addresses.routeAddresses(index),
      routeAccounts(index) {
        const own = addresses.routeAddresses(index);
        const of = (role: RouteAccountRole) => account(own[role], { role, index });
        return { deposit: of('deposit'), hub: of('hub'), exit: of('exit') };
      },
    },
    gasAccount: account(publicKeys.gasAddress, { role: 'gas' }),
    poolRelayer: account(publicKeys.poolRelayerAddress, { role: 'poolRelayer' }),
    relaySenders: publicKeys.poolRelayerAddresses.map((address, index) => account(address, { role: 'poolRelayer', index })),
  };
}
