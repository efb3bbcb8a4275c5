import type { TransferStatus } from '../../workflows/types.ts';

/** One status a transfer reached, when, and the transaction that brought it there where the full view names one. */
export interface StatusHistoryEntry {
  status: TransferStatus;
  /** ISO 8601. */
  at: string;
  /** BRIDGING_IN: the sender's deposit; RECEIVED_ON_HUB: the bridge's delivery on the hub; COMPLETED: the payment. */
  txHash: string | null;
}

interface TransferFacts {
  createdAt: Date;
  updatedAt: Date;
  depositTxHash: string | null;
  bridgeInTxHash: string | null;
  payoutTxHash: string | null;
}

const HASH_OF: Partial<Record<TransferStatus, 'depositTxHash' | 'bridgeInTxHash' | 'payoutTxHash'>> = {
  BRIDGING_IN: 'depositTxHash',
  RECEIVED_ON_HUB: 'bridgeInTxHash',
  COMPLETED: 'payoutTxHash',
};

/**
 * The statuses of a transfer in the order it reached them (`reached`: its transfer_statuses rows by sequence), for the
 * statusToken's holder: AWAITING_DEPOSIT at creation, then every recorded status. The shield and the withdrawal keep
 * no hash here, as in the rest of the full view.
 */
export function statusHistoryOf(transfer: TransferFacts, reached: { status: string; reachedAt: Date }[]): StatusHistoryEntry[] {
  const history: StatusHistoryEntry[] = [{ status: 'AWAITING_DEPOSIT', at: transfer.createdAt.toISOString(), txHash: null }];
  for (const { status, reachedAt } of reached) {
    if (status === 'AWAITING_DEPOSIT') continue;
    // A transfer that could not be started is recorded FAILED at time 0 (so the public view shows it at once).
    const at = reachedAt.getTime() === 0 ? transfer.updatedAt : reachedAt;
    const hash = HASH_OF[status as TransferStatus];
    history.push({ status: status as TransferStatus, at: at.toISOString(), txHash: hash ? transfer[hash] : null });
  }
  return history;
}
