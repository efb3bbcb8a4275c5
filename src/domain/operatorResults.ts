/** What operator actions answer (routectl, through the operator workflows in workflows/operator.ts). */

/** What an operator sees of an intent after a void or cancel. */
export interface IntentSummary {
  id: number;
  routeId: string;
  step: string;
  status: string;
  voidReason: string | null;
  minedTxHash: string | null;
}

/** One movement of a failed route's funds by `routectl recover` (as booked in the ledger). */
export interface Recovered {
  place: 'pool' | 'hub' | 'exit';
  /** `hub:0`, `hub:1`…: the ledger key of a recovery send; `pool`: the ragequit into the hub account. */
  key: string;
  amount: string;
  txHash: string;
}
