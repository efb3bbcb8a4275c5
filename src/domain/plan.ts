/**
 * The route plan: everything the workflow needs to carry one transfer out, fixed at creation, and the bridge legs it
 * runs. Amounts are decimal strings of smallest units: the default payload converter cannot carry bigint.
 */
import type { Address } from './address.ts';

/** Everything the workflow needs to carry one transfer out, fixed at creation. */
export interface RoutePlan {
  routeId: string;
  accountIndex: number;
  sourceChainId: number;
  hubChainId: number;
  destChainId: number;
  sourceToken: Address;
  hubToken: Address;
  destToken: Address;
  /** Deposit expected on the source chain, source-token units. */
  amount: string;
  /** What the recipient receives, destination-token units. */
  quotedOutputAmount: string;
  depositAddress: Address;
  hubAccount: Address;
  /**
   * Only in transfers created before the API stopped knowing the exit accounts (it has no exit xpub); the worker
   * derives a route's exit account from its account index either way (activities/deps.ts exitAddressOf).
   */
  exitAccount?: Address;
  recipient: Address;
  /** ISO-8601 instant after which a missing deposit fails the transfer. */
  depositDeadline: string;
  /** Where undeliverable deposits are refunded; null = held for an operator. */
  refundAddress: Address | null;
  settings: TransferSettings;
  /** How the route leaves the privacy pool (absent from transfers started before the pool's privacy rules). */
  privacy: PrivacyPlan;
}

/** The exit epoch a withdrawal leaves in: it starts at `startsAt` (ms since the epoch) and lasts `seconds`. */
export interface ExitEpoch {
  startsAt: number;
  seconds: number;
  /** The route leaves because it waited its longest (its set counts only peers whose longest wait ended too). */
  atLongestWait?: boolean;
}

/** When a route may leave the privacy pool (docs/privacy.md). */
export interface PrivacyPlan {
  /**
   * Exit epochs (docs/privacy.md): once the route may leave (approved, set reached or waited its longest), it withdraws
   * at a random moment of the next epoch of this many seconds on the clock. Absent from routes created before them.
   */
  exitEpochSeconds?: number;
  /** Routes created before exit epochs: the delay drawn at creation that the withdrawal waited once it could leave. */
  delaySeconds?: number;
  /** The anonymity set (its own deposit included) the route waits for... */
  minAnonymitySet: number;
  /** ...at most this long after its deposit; then it leaves with what it has. */
  maxWaitSeconds: number;
  /** Longest interval between two checks of the note's review and anonymity set (early on; it grows with the wait). */
  pollSeconds: number;
  /** A deposit still not approved after this long parks the route for an operator. */
  reviewTimeoutSeconds: number;
}

export interface TransferSettings {
  /** Attempts of one step before parking (once funds were received). */
  stepMaxAttempts: number;
  /** Time budget of one step, retries included, before parking. */
  stepTimeBudgetSeconds: number;
  /** A fresh deposit wait granted by an operator retry of an underpaid route. */
  depositTimeoutSeconds: number;
}

export type BridgeLeg = 'in' | 'out';

/** How a leg moves funds: a Relay deposit-address order, a CCTP burn, or a plain transfer on one chain. */
export type BridgeLegKind = 'relay' | 'cctp' | 'direct';

export interface BridgeOrderRef {
  kind: BridgeLegKind;
  /** Relay: the order's requestId; CCTP: the burn transaction; direct: the transfer transaction. */
  requestId: string;
  amountIn: string;
  /** The least the leg delivers (Relay: quoted output; CCTP: amount - maxFee; direct: the amount). */
  amountOut: string;
}
