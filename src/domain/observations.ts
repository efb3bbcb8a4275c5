/**
 * What the watchers tell a waiting transfer (activities/depositWatcher.ts, activities/privacyWatcher.ts): the
 * payloads of the `depositObserved` and `privacyObserved` signals (workflows/definitions.ts), spelled once.
 */

/** The ASP's review of a note in the privacy pool. */
export type NoteReview = 'pending' | 'approved' | 'rejected';

/**
 * What the deposit watcher tells a waiting transfer: its deposit address's balance of the route's token at a block.
 * Sent again after every new transfer into the address; an older block never overrides a newer one.
 */
export interface DepositObservation {
  balance: string;
  blockNumber: number;
}

/**
 * What the privacy watcher tells a shielded transfer: the ASP's review of its note and its anonymity set now, sent
 * when either of what the route waits for changes.
 */
export interface PrivacyObservation {
  review: NoteReview;
  anonymitySet: number;
}
