/** What refunds and the stray-deposit scanner share (activities/funds.ts, activities/strays.ts). */
import type { Address } from 'viem';
import { parseAmount } from '../src/money/amount.ts';
import type { Transfer } from '../src/transfers/transferStore.ts';
import type { ActivityDeps } from './deps.ts';

/** Past the bridge-in: the route's own deposit has left its deposit address, so what arrives there is a stray. */
export const PAST_DEPOSIT: readonly string[] = ['RECEIVED_ON_HUB', 'SHIELDED', 'UNSHIELD_SENT', 'BRIDGING_OUT'];

/** Whether `balance` of `token` is below REFUND_MIN_AMOUNT (set per source-token symbol; other tokens have none). */
export function belowRefundMinimum(
  deps: ActivityDeps,
  route: Pick<Transfer, 'sourceToken' | 'symbol' | 'sourceDecimals'>,
  token: Address,
  balance: bigint,
): boolean {
  const minimum = token.toLowerCase() === route.sourceToken.toLowerCase() ? deps.refundMinimums?.[route.symbol] : undefined;
  return minimum !== undefined && balance < parseAmount(minimum, route.sourceDecimals, `REFUND_MIN_AMOUNT.${route.symbol}`);
}
