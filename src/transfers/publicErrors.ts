import { ADDRESS_REUSE_REFUSED } from '../domain/funding.ts';

/**
 * The public view's `error` (a reader holding the routeId, not the statusToken): one line from a fixed catalogue,
 * never the stored text. Stored errors carry addresses, amounts, times, and an operator's free words; masking the
 * numbers (issue 18) still let rare words single a route out, and tie the public view to a support conversation.
 * The statusToken's holder reads the stored error in full.
 */
export const PUBLIC_ERRORS = {
  notStarted: 'the transfer could not be started; do not deposit',
  noDeposit: 'no deposit received by the deadline',
  addressReuse: `${ADDRESS_REUSE_REFUSED}: the deposit came from the recipient; it was refunded before the pool`,
  underpaid: 'the deposit was less than the amount; it was refunded',
  refunded: 'the transfer failed; its deposit was refunded',
  other: 'the transfer failed; the statusToken shows why',
} as const;

export type PublicError = (typeof PUBLIC_ERRORS)[keyof typeof PUBLIC_ERRORS];

/** The catalogue's line for a stored error (null: none). */
export function publicError(stored: string | null): PublicError | null {
  if (stored === null) return null;
  if (stored.startsWith(PUBLIC_ERRORS.notStarted)) return PUBLIC_ERRORS.notStarted;
  if (stored.startsWith('no deposit received')) return PUBLIC_ERRORS.noDeposit;
  if (stored.startsWith(ADDRESS_REUSE_REFUSED)) return PUBLIC_ERRORS.addressReuse;
  if (stored.startsWith('underpaid')) return PUBLIC_ERRORS.underpaid;
  // The workflow's own refund text ("<cause>; refunded <units> to <address> (tx <hash>)"), never an operator's words.
  if (!stored.startsWith('failed by operator') && /; refunded \d+ to 0x[0-9a-fA-F]{40} \(tx 0x[0-9a-fA-F]{64}\)/.test(stored)) return PUBLIC_ERRORS.refunded;
  return PUBLIC_ERRORS.other;
}
