import type { Hex } from 'viem';
import type { DevnetManifest } from '../../manifest.ts';
import { serveWithLoop } from '../http.ts';
import { createFaultRegistry, type FaultController, type FaultRegistry } from '../faults.ts';
import { connectOnchain } from './onchain.ts';
import { openOrderStore } from './orders.ts';
import { createPriceFeed, type PriceWalkOptions } from './priceWalk.ts';
import { parseUsdPrice, validateFeeBps } from './pricing.ts';
import { createRelayApp } from './relayApi.ts';
import { createWatcher } from './watcher.ts';

export type { FaultController, FaultMode, FaultOperation, FaultSpec } from '../faults.ts';
export type { PriceWalkOptions } from './priceWalk.ts';

export interface RelayEmulatorOptions {
  manifest: DevnetManifest;
  /** 0 = a free port chosen by the OS. */
  port: number;
  /** Default 127.0.0.1. */
  host?: string;
  /** Pays fills and refunds; must hold the destination (and, for refunds, origin) tokens. */
  solverPrivateKey: Hex;
  /**
   * Deposit addresses are HD-derived from it (m/44'/60'/0'/0/i). Default: a fresh random
   * mnemonic, kept in the state file when there is one.
   */
  depositMnemonic?: string;
  /** USD price of one whole token, by symbol, e.g. { USDC: '1', WETH: '2500' }: the prices at start. */
  usdPrices: Record<string, string>;
  /** Prices drift from usdPrices in a seeded random walk. Default: they stay fixed. */
  priceWalk?: PriceWalkOptions;
  /** The clock of the price walk (epoch ms); the walk starts at its value when the emulator starts. Default Date.now. */
  now?: () => number;
  /** Solver fee on every quote. Default 10 (0.1%). */
  feeBps?: number;
  /** How often deposit addresses are checked. Default 500 ms. */
  pollIntervalMs?: number;
  /** Fault registry shared with other emulators of the stack; default: its own. */
  faults?: FaultRegistry;
  /** JSON file keeping orders and the next deposit index across restarts. */
  statePath?: string;
  log?: (obj: object) => void;
}

export interface RelayEmulator {
  url: string;
  port: number;
  stop(): Promise<void>;
  faults: FaultController;
}

/**
 * Starts a local stand-in for Relay (api.relay.link) backed by the devnet chains: the same
 * HTTP API for chains, currencies, prices, quotes with deposit addresses, intent status and
 * the public request history, and a solver that fills (or refunds) deposit-address orders on chain.
 */
export async function startRelayEmulator(opts: RelayEmulatorOptions): Promise<RelayEmulator> {
  const log = opts.log ?? (() => {});
  const feeBps = validateFeeBps(opts.feeBps ?? 10);
  const startPrices = new Map(Object.entries(opts.usdPrices).map(([symbol, text]) => [symbol, parseUsdPrice(text)]));
  const now = opts.now ?? Date.now;
  const prices = createPriceFeed({ startPrices, walk: opts.priceWalk, startedAt: now(), now });

  const onchain = connectOnchain(opts.manifest, opts.solverPrivateKey);
  const store = openOrderStore({ statePath: opts.statePath, depositMnemonic: opts.depositMnemonic });
  const faults = opts.faults ?? createFaultRegistry(log);
  const watcher = createWatcher({ store, onchain, faults, pollIntervalMs: opts.pollIntervalMs ?? 500, log });
  const app = createRelayApp({ manifest: opts.manifest, onchain, store, faults, prices, feeBps, log });

  const server = await serveWithLoop(app, watcher, {
    port: opts.port,
    host: opts.host,
    name: 'relay_emulator',
    log,
    started: { solver: onchain.solver, feeBps: Number(feeBps), priceWalk: opts.priceWalk ?? null },
  });
  return { ...server, faults };
}
