/**
 * Types shared by the workflow, its activities and the code that starts it.
 * Amounts are decimal strings of smallest units: the default payload converter cannot carry bigint.
 */

export const TRANSFER_STATUSES = [
  'AWAITING_DEPOSIT',
  'BRIDGING_IN',
  'RECEIVED_ON_HUB',
  'SHIELDED',
  'UNSHIELD_SENT',
  'BRIDGING_OUT',
  'COMPLETED',
  'FAILED',
] as const;

export type TransferStatus = (typeof TRANSFER_STATUSES)[number];

export type Address = `0x${string}`;

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

/** Where a parked transfer stopped and why. */
export interface ParkedStep {
  step: string;
  error: string;
  /** ISO-8601. */
  since: string;
}

/** What the `state` query answers. */
export interface TransferState {
  status: TransferStatus;
  step: string | null;
  parked: ParkedStep | null;
}

/** What a route holds and where (amounts in smallest units); `pool`: an unspent note, which its depositor `address` can ragequit. */
export interface HeldFunds {
  place: 'deposit' | 'hub' | 'pool' | 'exit';
  chainId: number;
  token: Address;
  address: Address;
  amount: string;
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

export const TASK_QUEUE_DEFAULT = 'private-route';
/** New transfers run version 2; `transferWorkflow` (v1) only finishes transfers started before it. */
export const WORKFLOW_TYPE = 'transferWorkflowV2';

/**
 * The task queues of one deployment, named after TEMPORAL_TASK_QUEUE (docs/performance.md):
 * - `steps`: workflow tasks and the short steps that move money or write the books;
 * - `waits`: long waits on the outside world (bridge fills, the deposit watchers, the stray-deposit scan), many slots;
 * - `proofs`: pool withdrawals, which prove (one proof uses every core): workers here scale proving out.
 * Money-moving steps never wait behind a long poll or a proof for a slot.
 */
export function taskQueues(base: string) {
  return { steps: base, waits: `${base}-waits`, proofs: `${base}-proofs` };
}

/** Custom search attributes, registered by temporal-dev.yaml. */
export const SEARCH_ATTRIBUTES = { status: 'TransferStatus', needsAttention: 'NeedsAttention' } as const;

export const REFUND_WORKFLOW_TYPE = 'refundWorkflow';

/**
 * A route's lastError once a refund gave up (refundWorkflow flags it). While it stands, the stray scanner refunds
 * nothing of the route automatically: an operator's `routectl refund` decides, and clears it when it succeeds.
 */
export const refundFailedNote = (to: string, cause: string) => `refund to ${to} failed: ${cause}. Fix the cause, then run routectl refund again`;
export const isRefundFailedNote = (lastError: string | null) => lastError !== null && /^refund to 0x[0-9a-fA-F]{40} failed: /.test(lastError);

export const STRAY_SCANNER_WORKFLOW_TYPE = 'strayDepositScannerWorkflow';
export const STRAY_SCANNER_WORKFLOW_ID = 'stray-deposit-scanner';

export const DEPOSIT_WATCHER_WORKFLOW_TYPE = 'depositWatcherWorkflow';
export const PRIVACY_WATCHER_WORKFLOW_TYPE = 'privacyWatcherWorkflow';
export const PRIVACY_WATCHER_WORKFLOW_ID = 'privacy-watcher';
/** One deposit watcher per source chain. */
export const depositWatcherWorkflowId = (chainId: number) => `deposit-watcher-${chainId}`;

/** One status of a route as the projection records it (activities/projection.ts writeStatus). */
export interface StatusProjection {
  routeId: string;
  /** Strictly increasing per route; a write with an older sequence number is ignored. */
  seq: number;
  status: TransferStatus;
  error?: string;
  payoutTxHash?: string;
  heldFunds?: HeldFunds[];
}
