/**
 * What every step of the drill receives: its settings, its folder and ports, the event log, and the handles of
 * what runs (the stack, a restarted Temporal server, the worker process of the moment). Steps share nothing else.
 */
import type { ChildProcess } from 'node:child_process';
import type { WriteStream } from 'node:fs';
import type { Address, HttpTransport, PublicClient, WalletClient } from 'viem';
import type { PrivateKeyAccount } from 'viem/accounts';
import type { ChainRole, DevnetChain } from '../manifest.ts';
import type { LocalStack } from '../stack.ts';
import type { TemporalDevServer } from '../temporalServer.ts';
import type { EventLog } from './events.ts';
import { DrillError } from './types.ts';

export interface DrillSettings {
  bridge: 'relay' | 'cctp';
  pointTimeoutMs: number;
  finishTimeoutMs: number;
  stepMaxAttempts: number;
  log: (line: string) => void;
  signal?: AbortSignal;
}

export interface DrillPorts {
  api: number;
  temporal: number;
  temporalUi: number;
  postgres: number;
  relay: number;
  source: number;
  hub: number;
  destination: number;
  iris: number;
  asp: number;
  workerHttp: number;
}

/** The devnet's chains as the steps use them. */
export interface DrillChains {
  chain(role: ChainRole): DevnetChain;
  token(role: ChainRole, symbol: string): Address;
  client(role: ChainRole): PublicClient;
  /** Pays the transfers' deposits on the source chain. */
  faucet: WalletClient<HttpTransport, undefined, PrivateKeyAccount>;
  /** The hub's block when the stack was up: the pool's events since then are the drill's. */
  hubStartBlock: bigint;
}

/** A worker process the drill started. */
export interface WorkerProcess {
  index: number;
  /** The crash point it runs with, or why it runs without one. */
  role: string;
  pid: number;
  logFile: string;
  child: ChildProcess;
  spawnedAt: number;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** The crash point it announced it dies at (its stderr), once it did. */
  hitPoint: string | null;
  stderrTail: string;
}

export interface DrillContext {
  readonly settings: DrillSettings;
  readonly dataDir: string;
  /** The stack's and the workers' logs. */
  readonly logDir: string;
  readonly stackLog: WriteStream;
  readonly ports: DrillPorts;
  readonly events: EventLog;
  /** Set as soon as the stack is up, so that the cleanup stops it whatever fails next. */
  stack?: LocalStack;
  chains?: DrillChains;
  /** The environment the stack wrote for worker processes. */
  workerEnv?: Record<string, string>;
  /** The Temporal dev server the drill started itself after stopping the stack's. */
  temporalServer?: TemporalDevServer;
  /** The worker process running now, if any. */
  worker?: WorkerProcess;
  /** Follows the activities lost with killed workers until they complete. */
  follower?: { stop(): Promise<void> };
}

export function stackOf(ctx: DrillContext): LocalStack {
  if (!ctx.stack) throw new DrillError('the local stack is not started');
  return ctx.stack;
}

export function chainsOf(ctx: DrillContext): DrillChains {
  if (!ctx.chains) throw new DrillError("the devnet's chains are not opened");
  return ctx.chains;
}

export function stopIfAborted(ctx: DrillContext): void {
  if (ctx.settings.signal?.aborted) throw new DrillError('the drill was interrupted');
}

export const isRunning = (w: WorkerProcess) => w.child.exitCode === null && w.child.signalCode === null;
