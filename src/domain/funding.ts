/**
 * Who funded a route, from the token transfers into its deposit address: the senders are those of the transfers that
 * brought the balance to the route's amount, and nothing that came after.
 *
 * The chain's Transfer log names a `from` that anyone can forge for the price of gas: `transferFrom(X, deposit, 0)`
 * passes on USDC and OpenZeppelin tokens with no allowance at all. So a zero-value transfer names nobody, a dust
 * transfer (under 1 % of the amount) never makes its sender the route's client, and the client is the sender that paid
 * the most (to take a route's identity a forger has to pay more than its user did). A non-zero transfer does move its
 * sender's own tokens, so it still ties that sender to the route: the address-reuse check sees it.
 */

export interface DepositTransfer {
  from: string;
  value: bigint;
  blockNumber: number;
  logIndex: number;
  txHash: string;
}

export interface Funding {
  /** The senders of the non-dust transfers up to the one that reached the amount, each once, in order of arrival. */
  senders: string[];
  /** The sender that paid the most of them (earliest on a tie): the route's client in its anonymity set. */
  client: string | null;
  /** The client's largest transfer: the user's own deposit transaction. */
  txHash: string | null;
  /** Every sender that moved tokens (any non-zero value) up to the amount: what ties an address to the route on chain. */
  tiedAddresses: string[];
  /** Whether the transfers reached the amount. */
  complete: boolean;
}

/** Under this share of the amount a transfer is dust: 1 %, in basis points. */
export const DUST_BPS = 100n;

export function isDust(value: bigint, amount: bigint): boolean {
  return value * 10_000n < amount * DUST_BPS;
}

/** The funding of a route of `amount` from the transfers into its deposit address (any order; duplicates counted once). */
export function fundingOf(transfers: readonly DepositTransfer[], amount: bigint): Funding {
  const unique = new Map(transfers.map((t) => [`${t.txHash.toLowerCase()}:${t.logIndex}`, t]));
  const ordered = [...unique.values()].sort((a, b) => a.blockNumber - b.blockNumber || a.logIndex - b.logIndex);
  const counted: DepositTransfer[] = [];
  let balance = 0n;
  for (const transfer of ordered) {
    if (balance >= amount) break;
    balance += transfer.value;
    counted.push(transfer);
  }
  const paid = counted.filter((t) => !isDust(t.value, amount));
  const bySender = new Map<string, { total: bigint; largest: DepositTransfer }>();
  for (const t of paid) {
    const key = t.from.toLowerCase();
    const seen = bySender.get(key);
    if (!seen) bySender.set(key, { total: t.value, largest: t });
    else {
      seen.total += t.value;
      if (t.value > seen.largest.value) seen.largest = t;
    }
  }
  let client: { total: bigint; largest: DepositTransfer } | null = null;
  for (const entry of bySender.values()) if (!client || entry.total > client.total) client = entry;
  const distinct = (list: DepositTransfer[]) => [...new Map(list.map((t) => [t.from.toLowerCase(), t.from])).values()];
  return {
    senders: distinct(paid),
    client: client?.largest.from ?? null,
    txHash: client?.largest.txHash ?? null,
    tiedAddresses: distinct(counted.filter((t) => t.value > 0n)),
    complete: balance >= amount,
  };
}

/** How a route funded from its own recipient fails (before the pool, refunded): the FAILED route's error begins with it. */
export const ADDRESS_REUSE_REFUSED = 'ADDRESS_REUSE_REFUSED';

/** The addresses among `tied` equal to `recipient`: funding a route from the address it pays links the two for anyone. */
export function reusedAddress(funding: Pick<Funding, 'tiedAddresses'>, recipient: string): string | null {
  return funding.tiedAddresses.find((a) => a.toLowerCase() === recipient.toLowerCase()) ?? null;
}
