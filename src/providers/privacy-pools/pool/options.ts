import type { Address, LocalAccount } from 'viem';
import type { ChainClients } from '../../../chain/clients.ts';
import type { TxSender } from '../../../chain/txSender.ts';
import type { NoteSecretsProvider } from '../../../signer/signer.ts';
import type { AspClient } from '../asp.ts';
import type { LeafStore } from './leafStore.ts';
import type { Prover } from '../prover.ts';

export interface PrivacyPoolsOptions {
  chainId: number;
  entrypoint: Address;
  /** Block of the pools' deployment (or earlier): event scans start here. */
  fromBlock: bigint;
  /** Relay fee charged on every withdrawal, paid to the relayer; at most each pool's maxRelayFeeBPS. */
  relayFeeBps: number;
  /** Receives the relay fees (named in every withdrawal's proof). */
  relayer: LocalAccount;
  /** Submit the withdrawals (Entrypoint.relay), taking turns; the relayer is one of them. */
  relaySenders: readonly LocalAccount[];
  /** Each note's nullifier and secret, asked of the signer (which keeps the master keys); never stored. */
  secrets: NoteSecretsProvider;
  clients: ChainClients;
  sender: TxSender;
  prover: Prover;
  /** The ASP's API client for a pool's scope (createAspClient in production). */
  asp: (scope: bigint) => AspClient;
  /** Keeps each pool's final leaves between starts (createPostgresLeafStore); omitted: every start scans from fromBlock. */
  leafStore?: LeafStore;
}
