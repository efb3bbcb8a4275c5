import type { Address, Hex, LocalAccount } from 'viem';
import type { NoteReview } from '../domain/observations.ts';

/**
 * The narrow interface of a zero-knowledge privacy pool on the hub chain, as the transfer workflow uses it.
 * `src/providers/privacy-pools` implements it for Privacy Pools (0xbow); a Railgun adapter would map
 * deposit → shield, review → proof-of-innocence standby, withdraw → relayed unshield, ragequit → unshield
 * to the origin address. Amounts are bigint in the pool asset's smallest units. Every method that moves
 * funds is idempotent per route: calling it again settles the first call's transaction, never a second one.
 */
export interface PrivacyPool {
  readonly chainId: number;
  /**
   * Fees in basis points for `asset`, each rounded down by the pool: on the way in (vetting) and on the way
   * out (relay); and the smallest deposit the pool takes.
   */
  fees(asset: Address): Promise<{ depositFeeBps: number; withdrawalFeeBps: number; minimumDeposit: bigint }>;
  /** Moves `amount` of `asset` from `owner` into the pool as the route's note; its secrets derive from `noteIndex`. */
  deposit(input: { routeId: string; owner: LocalAccount; asset: Address; amount: bigint; noteIndex: number }): Promise<PoolNote>;
  /** The route's note if one of its recorded deposit attempts is mined; null otherwise. Read-only: it broadcasts nothing. */
  minedDeposit(input: { routeId: string; asset: Address }): Promise<PoolNote | null>;
  /** Whether the pool lets the note out privately yet (Privacy Pools: the ASP's review). */
  review(note: PoolNote): Promise<NoteReview>;
  /** The same for many notes at once, in their order: one read of the ASP for all of them. */
  reviewMany(notes: Array<Pick<PoolNote, 'asset' | 'label'>>): Promise<NoteReview[]>;
  /**
   * Withdraws the destination's `amount` (gross, before the withdrawal fee) of the note to its `to`, proved in
   * zero knowledge and submitted by the account shared by all routes; the rest of the note stays in the pool as
   * change. The destination is asked for when a new attempt is about to be proved (after any wait for a prover),
   * and again for an attempt after one that reverted; never for an attempt already recorded.
   */
  withdraw(input: {
    routeId: string;
    note: PoolNote;
    noteIndex: number;
    /**
     * Which of the route's notes `note` is: 0 (the default) its deposit, k ≥ 1 the change its k-th withdrawal left
     * (Privacy Pools: its secrets are the withdrawal secrets of the label at k − 1; the new change's at k).
     */
    generation?: number;
    destination: WithdrawalDestination;
    admit?: WithdrawalAdmission;
  }): Promise<PoolWithdrawal>;
  /** The route's withdrawal if one of its recorded attempts is mined; null otherwise. Read-only: it broadcasts nothing. */
  minedWithdrawal(input: { routeId: string; asset: Address }): Promise<PoolWithdrawal | null>;
  /**
   * The note's depositor takes it back, publicly: for a note the pool will never let out privately. A reverted
   * attempt moved nothing and is followed by a new one; null when, after one reverted, the note is spent.
   */
  ragequit(input: { routeId: string; owner: LocalAccount; note: PoolNote; noteIndex: number }): Promise<{ txHash: Hex; amount: bigint } | null>;
  /** What of the original note is still unspent: its value, or 0 once withdrawn from or ragequit. */
  unspent(note: PoolNote, noteIndex: number): Promise<bigint>;
}

/**
 * Asked before each proof of a new withdrawal attempt with the pool as the proof will see it: first with an amount of 0,
 * before the destination is asked for, then with the amount the destination takes; throwing refuses the withdrawal:
 * nothing is proved, recorded or sent, and `withdraw` rejects with that error.
 */
export type WithdrawalAdmission = (state: ProvingState) => Promise<void>;

/** The trees a withdrawal proof is about to prove against (Privacy Pools' state tree, the ASP's approved set), and its amount. */
export interface ProvingState {
  /** Every commitment in the state tree at the root the proof uses (decimal strings). */
  commitments: ReadonlySet<string>;
  /** Every label in the ASP's approved set at the root the proof uses (decimal strings). */
  approvedLabels: ReadonlySet<string>;
  /** Leaves of the state tree at that root: later proofs see at least as many. */
  leafCount: number;
  /** What the withdrawal takes from the note (gross): a note worth less could not be the one it spends. */
  amount: bigint;
}

/** Where a withdrawal goes and how much of the note it takes (gross). */
export type WithdrawalDestination = () => Promise<{ to: Address; amount: bigint }>;

/** Public facts of a route's deposit into the pool (no secrets: those derive from the signer's key). */
export interface PoolNote {
  asset: Address;
  /** Privacy Pools: the deposit's label (decimal); it identifies the note and its change notes. */
  label: string;
  /** The note's commitment (decimal). */
  commitment: string;
  /** Value of the note after the deposit fee. */
  value: bigint;
  txHash: Hex;
  blockNumber: bigint;
  /** Unix seconds of the deposit's block. */
  timestamp: number;
}

export interface PoolWithdrawal {
  txHash: Hex;
  /** What `to` received: the gross amount less the withdrawal fee. */
  delivered: bigint;
  fee: bigint;
  blockNumber: bigint;
  /** Unix seconds of the withdrawal's block. */
  timestamp: number;
}
