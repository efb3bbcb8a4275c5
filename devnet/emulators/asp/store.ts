import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { isAddressEqual, type Address, type Hex } from 'viem';
import { z } from 'zod';

export type ReviewStatus = 'pending' | 'approved' | 'declined';

/** One deposit into the pool (its `Deposited` event) and the ASP's review of it. */
export interface AspDeposit {
  label: bigint;
  commitment: bigint;
  /** After the Entrypoint's vetting fee. */
  value: bigint;
  precommitmentHash: bigint;
  depositor: Address;
  txHash: Hex;
  blockNumber: number;
  /** Block timestamp, seconds. */
  timestamp: number;
  /** When the emulator saw it, epoch ms: the review is due approvalDelayMs later. */
  seenAt: number;
  reviewStatus: ReviewStatus;
}

export interface AspState {
  /** The last block scanned for pool events and its hash; null before the first scan. */
  scanned: { block: number; hash: Hex } | null;
  /** In chain order. */
  deposits: AspDeposit[];
  /** Every commitment of the pool's state tree, in insertion order. */
  stateTreeLeaves: bigint[];
  /** Approved labels, in approval order: the leaves of the ASP tree. */
  aspLeaves: bigint[];
  /** The root of aspLeaves and when it was computed (epoch ms); null before the first approval. */
  mtRoot: { root: bigint; createdAt: number } | null;
  /** Entrypoint.latestRoot() as last read; null while the chain has none. */
  onchainMtRoot: bigint | null;
}

/** The pool a state belongs to. */
export interface PoolKey {
  chainId: number;
  entrypoint: Address;
  pool: Address;
  scope: bigint;
}

export interface AspStore {
  readonly state: Readonly<AspState>;
  depositByLabel(label: bigint): AspDeposit | undefined;
  /** Applies `change` to the state, then writes the state file. */
  update(change: (state: AspState) => void): void;
  /** Forgets everything (the chain is not the one the state was built from). */
  reset(): void;
}

const decimal = z
  .string()
  .regex(/^[0-9]+$/)
  .transform((text) => BigInt(text));
const hex = z
  .string()
  .regex(/^0x[0-9a-fA-F]*$/)
  .transform((h) => h as Hex);

const depositSchema = z.object({
  label: decimal,
  commitment: decimal,
  value: decimal,
  precommitmentHash: decimal,
  depositor: hex.transform((h) => h as Address),
  txHash: hex,
  blockNumber: z.number().int().nonnegative(),
  timestamp: z.number().int().nonnegative(),
  seenAt: z.number(),
  reviewStatus: z.enum(['pending', 'approved', 'declined']),
});

const fileSchema = z.object({
  version: z.literal(1),
  pool: z.object({ chainId: z.number().int(), entrypoint: hex, pool: hex, scope: decimal }),
  scanned: z.object({ block: z.number().int().nonnegative(), hash: hex }).nullable(),
  deposits: z.array(depositSchema),
  stateTreeLeaves: z.array(decimal),
  aspLeaves: z.array(decimal),
  mtRoot: z.object({ root: decimal, createdAt: z.number() }).nullable(),
  onchainMtRoot: decimal.nullable(),
});

const emptyState = (): AspState => ({ scanned: null, deposits: [], stateTreeLeaves: [], aspLeaves: [], mtRoot: null, onchainMtRoot: null });

/**
 * The emulator's state in memory and, with a statePath, in a JSON file (big numbers as decimal strings)
 * rewritten atomically on every change, so a restarted local stack keeps its reviews and roots. A file
 * written for another pool or chain is ignored (and replaced on the next change).
 */
export function openAspStore(opts: { statePath?: string; pool: PoolKey; log: (obj: object) => void }): AspStore {
  const { statePath, pool } = opts;
  let state = statePath && existsSync(statePath) ? loadState(statePath, pool, opts.log) : emptyState();
  let byLabel = indexByLabel(state.deposits);

  const persist = () => {
    if (!statePath) return;
    const tmp = `${statePath}.tmp`;
    writeFileSync(tmp, `${JSON.stringify({ version: 1, pool, ...state }, decimalBigints, 2)}\n`);
    renameSync(tmp, statePath);
  };

  return {
    get state() {
      return state;
    },
    depositByLabel: (label) => byLabel.get(label),
    update(change) {
      change(state);
      byLabel = indexByLabel(state.deposits);
      persist();
    },
    reset() {
      state = emptyState();
      byLabel = new Map();
      persist();
    },
  };
}

function loadState(path: string, pool: PoolKey, log: (obj: object) => void): AspState {
  const parsed = fileSchema.safeParse(JSON.parse(readFileSync(path, 'utf8')));
  if (!parsed.success) throw new Error(`ASP emulator state ${path} is invalid: ${parsed.error.message}`);
  const { version: _, pool: saved, ...state } = parsed.data;
  const samePool =
    saved.chainId === pool.chainId && saved.scope === pool.scope && isAddressEqual(saved.entrypoint, pool.entrypoint) && isAddressEqual(saved.pool, pool.pool);
  if (samePool) return state;
  log({ event: 'asp.state_ignored', reason: 'written for another pool', path, chainId: saved.chainId, pool: saved.pool });
  return emptyState();
}

function indexByLabel(deposits: AspDeposit[]): Map<bigint, AspDeposit> {
  return new Map(deposits.map((d) => [d.label, d]));
}

function decimalBigints(_key: string, value: unknown): unknown {
  return typeof value === 'bigint' ? value.toString() : value;
}
