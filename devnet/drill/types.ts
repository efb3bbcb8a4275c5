/** The drill's vocabulary: the plan its caller gives, its options, and the report it returns. */

/** One step of the plan a caller gives (the runner adds the stack before it, and the finish and the checks after it). */
export type DrillStep =
  /** Creates `count` transfers through the API and funds them from the faucet, as senders would. */
  | { kind: 'create'; count: number }
  /** Runs a worker with DRILL_CRASH_AT=point until it dies there (or `pointTimeoutMs` passes: the point was not hit). */
  | { kind: 'crash'; point: string }
  /** Restarts the server under a running worker, and measures how the API and the worker come back. */
  | { kind: 'restart'; server: 'temporal' | 'postgres' };

export interface DrillOptions {
  plan: DrillStep[];
  /** Bridge mode of the stack: relay (deposit-address, default) or cctp (burn-and-mint; one transfer in three pays on the hub). */
  bridge?: 'relay' | 'cctp';
  /** How long a worker with a crash point may run before the point counts as not hit (default 60 s). */
  pointTimeoutMs?: number;
  /**
   * STEP_MAX_ATTEMPTS of the drill's stack (default 20). Each kill costs every activity in flight one attempt of
   * its step, and a drill kills far more often than any real failure would: with the service's default (8) a
   * step killed 8 times in a row parks, by design. The report gives the most attempts one activity used.
   */
  stepMaxAttempts?: number;
  /** How long the last, clean worker may take to finish every transfer (default 10 minutes). */
  finishTimeoutMs?: number;
  /** Progress lines (default: stderr). */
  log?: (line: string) => void;
  /** Keep the data folder (logs, databases, chains) afterwards; it is always kept when the drill fails. */
  keepDataDir?: boolean;
  signal?: AbortSignal;
}

/** One worker process of the drill. */
export interface WorkerLife {
  index: number;
  /** The crash point it ran with, or why it ran without one. */
  role: string;
  pid: number;
  /** Seconds from spawn until its /readyz answered 200 (null: never). */
  bootSeconds: number | null;
  /** How it ended: killed at its point, killed by the drill, stopped, or exited on its own. */
  end: 'hit' | 'not-hit' | 'killed' | 'stopped' | 'exited';
  /** Seconds from spawn to its end. */
  lifeSeconds: number;
  /** Activities of transfers that were running in it when it died (lost with it; Temporal retries them). */
  interrupted: Array<{ routeId: string; activityType: string; attempt: number }>;
  /**
   * What this worker picked up after the kills before it: the activities lost with earlier workers and still
   * outstanding at its spawn, how many of them completed while it ran, and the seconds from its spawn until
   * the first and the last of them completed (all: null when it was killed before every one completed).
   * Null when nothing was outstanding.
   */
  recovery: { outstanding: number; completed: number; first: number | null; all: number | null } | null;
  logFile: string;
}

export interface ServerRestart {
  server: 'temporal' | 'postgres';
  /** Seconds the server was down (stop begun → accepting connections again). */
  downSeconds: number;
  /** Seconds from the server being back until the API's /readyz answered 200 (null: not within the limit). */
  apiReadySeconds: number | null;
  /** Seconds from the server being back until the worker's /readyz answered 200. */
  workerReadySeconds: number | null;
  /** Seconds from the server being back until a transfer made progress (Postgres state changed). */
  progressSeconds: number | null;
  /** The worker lived through the restart (did not exit). */
  workerSurvived: boolean;
}

export interface TransferOutcome {
  routeId: string;
  route: string;
  status: string;
  error: string | null;
  amount: bigint;
  quoted: bigint;
  /**
   * True when the recipient must receive exactly `quoted` (Relay's exact-output order, the direct leg). False for a
   * CCTP payout to another chain: it burns B with B − maxFee ≥ quote, and Circle's unused fee buffer is minted to
   * the recipient too (docs/money.md), so quote ≤ received ≤ B.
   */
  exact: boolean;
  /** The recipient's balance of the destination token at the end (a fresh address: all of it came from us). */
  received: bigint;
  /** Token Transfer logs to the recipient on its chain. */
  payouts: number;
  /** Token Transfer logs out of the deposit address on the source chain, and their sum. */
  depositSends: number;
  depositSent: bigint;
  /** The pool's Deposited events of the route's hub account. */
  poolDeposits: number;
  /** The ledger's withdrawal is one of the Entrypoint's WithdrawalRelayed transactions (and no other route's). */
  withdrawalFound: boolean;
  /** Live intents of the route the chain never mined. */
  unminedIntents: number;
  problems: string[];
}

export interface DrillReport {
  bridge: 'relay' | 'cctp';
  dataDir: string;
  transfers: TransferOutcome[];
  workers: WorkerLife[];
  restarts: ServerRestart[];
  /** Crash points in plan order with the number of workers killed there, and those never hit. */
  kills: Array<{ point: string; kills: number; tries: number }>;
  pool: { deposits: number; withdrawals: number };
  /** The most attempts one lost activity had used when it was lost (each kill costs the activities in flight one), and the step budget. */
  attempts: { most: number; stepMaxAttempts: number };
  seconds: { stack: number; crashes: number; finish: number; total: number };
  problems: string[];
  passed: boolean;
}

/** The drill could not run (the stack, a worker that would not start, a server that would not come back). */
export class DrillError extends Error {
  override name = 'DrillError';
}
