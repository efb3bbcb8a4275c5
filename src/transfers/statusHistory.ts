import type { TransferStatus } from '../domain/status.ts';

/** One status a transfer reached, when, and the transaction that brought it there where the full view names one. */
export interface StatusHistoryEntry {
  status: TransferStatus;
  /** ISO 8601. */
  at: string;
  /**
   * BRIDGING_IN: the sender's deposit; RECEIVED_ON_HUB: the deposit account's send into the bridge, which the hub
   * received; COMPLETED: the payment. Null elsewhere and until seen.
   */
  txHash: string | null;
  /** The chain txHash is on (the source chain for the first two, the destination for the payment); null without one. */
  chainId: number | null;
}

interface TransferFacts {
  createdAt: Date;
  updatedAt: Date;
  sourceChainId: number;
  destChainId: number;
  depositTxHash: string | null;
  bridgeInTxHash: string | null;
  payoutTxHash: string | null;
}

const HASH_OF: Partial<Record<TransferStatus, { hash: 'depositTxHash' | 'bridgeInTxHash' | 'payoutTxHash'; chain: 'sourceChainId' | 'destChainId' }>> = {
  BRIDGING_IN: { hash: 'depositTxHash', chain: 'sourceChainId' },
  RECEIVED_ON_HUB: { hash: 'bridgeInTxHash', chain: 'sourceChainId' },
  COMPLETED: { hash: 'payoutTxHash', chain: 'destChainId' },
};

/**
 * The statuses of a transfer in the order it reached them (`reached`: its transfer_statuses rows by sequence), for the
 * statusToken's holder: AWAITING_DEPOSIT at creation, then every recorded status. The shield and the withdrawal keep
 * no hash here, as in the rest of the full view.
 */
export function statusHistoryOf(transfer: TransferFacts, reached: { status: string; reachedAt: Date }[]): StatusHistoryEntry[] {
  const history: StatusHistoryEntry[] = [{ status: 'AWAITING_DEPOSIT', at: transfer.createdAt.toISOString(), txHash: null, chainId: null }];
  for (const { status, reachedAt } of reached) {
    if (status === 'AWAITING_DEPOSIT') continue;
    // A transfer that could not be started is recorded FAILED at time 0 (so the public view shows it at once).
    const at = reachedAt.getTime() === 0 ? transfer.updatedAt : reachedAt;
    const source = HASH_OF[status as TransferStatus];
    const txHash = source ? transfer[source.hash] : null;
    history.push({ status: status as TransferStatus, at: at.toISOString(), txHash, chainId: source && txHash ? transfer[source.chain] : null });
  }
  return history;
}

/**
 * The history as it stood when the transfer reached `status`: an event stream that reads the view after the transfer
 * has moved on sends each event with the history up to its own status, not ahead of it.
 */
export function statusHistoryUpTo(history: StatusHistoryEntry[], status: string): StatusHistoryEntry[] {
  for (let i = history.length - 1; i >= 0; i--) if (history[i]!.status === status) return history.slice(0, i + 1);
  return history;
}
