/** What a route holds, and where a parked route stopped. */
import type { Address } from './address.ts';

/** What a route holds and where (amounts in smallest units); `pool`: an unspent note, which its depositor `address` can ragequit. */
export interface HeldFunds {
  place: 'deposit' | 'hub' | 'pool' | 'exit';
  chainId: number;
  token: Address;
  address: Address;
  amount: string;
  /** A stray the scanner listed at a finished route's deposit address: when its batch flags it for an operator (ISO). */
  listedFrom?: string;
}

/** Where a parked transfer stopped and why. */
export interface ParkedStep {
  step: string;
  error: string;
  /** ISO-8601. */
  since: string;
}
