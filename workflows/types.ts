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
  exitAccount: Address;
  recipient: Address;
  /** ISO-8601 instant after which a missing deposit fails the transfer. */
  depositDeadline: string;
}

export type BridgeLeg = 'in' | 'out';

export interface BridgeOrderRef {
  requestId: string;
  amountIn: string;
  amountOut: string;
}

export const TASK_QUEUE_DEFAULT = 'private-route';
export const WORKFLOW_TYPE = 'transferWorkflow';

/** Custom search attributes, registered by temporal-dev.yaml. */
export const SEARCH_ATTRIBUTES = { status: 'TransferStatus', needsAttention: 'NeedsAttention' } as const;
