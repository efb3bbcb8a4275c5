import { isAddressEqual, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import type { DevnetManifest } from '../../manifest.ts';
import { listen } from '../http.ts';
import { createFaultRegistry, type FaultController, type FaultRegistry } from '../faults.ts';
import { connectDomains, createAttester } from './attester.ts';
import { DEFAULT_IRIS_FEES, validateFees, type IrisFees } from './fees.ts';
import { createIrisApp } from './irisApi.ts';
import { openMessageStore } from './store.ts';

export type { IrisFees } from './fees.ts';

export interface IrisEmulatorOptions {
  /** Must carry the CCTP deployment (`startDevnetChains({ cctp: true })`). */
  manifest: DevnetManifest;
  /** 0 = a free port chosen by the OS. */
  port: number;
  /** Default 127.0.0.1. */
  host?: string;
  /** Signs attestations; must be the deployment's attester (DEVNET_CCTP_ATTESTER_KEY). */
  attesterPrivateKey: Hex;
  /** Fault registry shared with the stack's other emulators; default: its own. */
  faults?: FaultRegistry;
  /** Minimum fees in bps. Default fast 1, standard 0. */
  fees?: IrisFees;
  /** How long a burn stays pending_confirmations after Iris first sees it. Default 1000 ms. */
  pendingMs?: number;
  /** JSON file keeping the attested messages across restarts. */
  statePath?: string;
  /** Destination blocks an attested burn stays receivable (its expirationBlock). Default 100,000. */
  expirationBlocks?: bigint;
  log?: (obj: object) => void;
}

export interface IrisEmulator {
  url: string;
  port: number;
  faults: FaultController;
  stop(): Promise<void>;
}

/**
 * Starts a local stand-in for Circle's attestation service (Iris, iris-api.circle.com) for the devnet
 * CCTP v2 contracts: the same HTTP API for fees, messages and attestations, signing with a local
 * attester key that the devnet MessageTransmitterV2s accept.
 */
export async function startIrisEmulator(opts: IrisEmulatorOptions): Promise<IrisEmulator> {
  const log = opts.log ?? (() => {});
  const { cctp } = opts.manifest;
  if (!cctp) throw new Error('the devnet manifest has no CCTP deployment (start the chains with cctp: true)');
  const attester = privateKeyToAccount(opts.attesterPrivateKey);
  if (!isAddressEqual(attester.address, cctp.attester)) {
    throw new Error(`attester key ${attester.address} is not the devnet CCTP attester ${cctp.attester}`);
  }
  const fees = validateFees(opts.fees ?? DEFAULT_IRIS_FEES);
  const faults = opts.faults ?? createFaultRegistry(log);
  const domains = connectDomains(opts.manifest);
  const service = createAttester({
    domains,
    attesterPrivateKey: opts.attesterPrivateKey,
    fees,
    pendingMs: opts.pendingMs ?? 1000,
    faults,
    store: openMessageStore(opts.statePath),
    ...(opts.expirationBlocks !== undefined && { expirationBlocks: opts.expirationBlocks }),
    log,
  });
  const app = createIrisApp({ attester: service, domains: new Set(domains.keys()), fees, faults, publicKey: attester.publicKey, log });

  const { url, port, close } = await listen(app, opts.port, opts.host);
  log({ event: 'iris_emulator.started', url, attester: attester.address, fees });

  let stopping: Promise<void> | undefined;
  return {
    url,
    port,
    faults,
    stop() {
      stopping ??= close().then(() => log({ event: 'iris_emulator.stopped', url }));
      return stopping;
    },
  };
}
