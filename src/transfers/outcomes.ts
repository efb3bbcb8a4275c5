import { explorerTxUrl } from '../quote/chainDetails.ts';

/**
 * What became of a transfer's money, as the full view shows it (docs/api.md, "Outcomes"): what its deposit address
 * received, and the refunds sent from it. Pure: src/transfers/transferService.ts reads the ledger and the deposit's
 * transfers and asks here.
 */

/**
 * A refund of the route, from its ledger's `refunded` entry. The ledger books a refund once its transaction is
 * mined (activities/funds.ts bookRefund), so every refund shown is CONFIRMED; one waiting its delay or in flight does
 * not show yet.
 */
export interface Refund {
  status: 'CONFIRMED';
  /** What went back, in the token's smallest units (what its transaction moved). */
  amount: string;
  /** The token contract refunded: the route's source token, or another token sent to its deposit address. */
  token: string;
  /** The source token's symbol; null for another token (a stray of a token the route does not use). */
  symbol: string | null;
  chainId: number;
  txHash: string;
  /** The transaction's explorer page; null where its chain has no known explorer. */
  explorerUrl: string | null;
}

/** The ledger entry fields the outcomes read (src/transfers/ledgerStore.ts LedgerRow). */
export interface LedgerMovement {
  kind: string;
  chainId: number;
  token: string;
  amount: string;
  txHash: string | null;
}

/** The route fields the outcomes read. */
export interface OutcomeRoute {
  sourceToken: string;
  symbol: string;
}

const sameAddress = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();

/** The route's refunds in the order they were booked (oldest first). */
export function refundsOf(route: OutcomeRoute, ledger: readonly LedgerMovement[], explorers: ReadonlyMap<number, string>): Refund[] {
  return ledger
    .filter((entry) => entry.kind === 'refunded' && entry.txHash !== null)
    .map((entry) => ({
      status: 'CONFIRMED',
      amount: entry.amount,
      token: entry.token,
      symbol: sameAddress(entry.token, route.sourceToken) ? route.symbol : null,
      chainId: entry.chainId,
      txHash: entry.txHash as string,
      explorerUrl: explorerTxUrl(explorers.get(entry.chainId), entry.txHash),
    }));
}

/**
 * What the deposit address received of the route's source token (smallest units): what the route took (the ledger's
 * `received`, booked when the deposit was taken), else the sum of the transfers into it seen while it awaited its
 * deposit (an underpaid or expired route took nothing). "0" when nothing arrived.
 */
export function depositedAmountOf(route: OutcomeRoute, ledger: readonly LedgerMovement[], depositTransferValues: readonly string[]): string {
  const received = ledger.find((entry) => entry.kind === 'received' && sameAddress(entry.token, route.sourceToken));
  if (received) return received.amount;
  return depositTransferValues.reduce((sum, value) => sum + BigInt(value), 0n).toString();
}
