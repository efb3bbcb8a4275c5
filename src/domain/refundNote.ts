/**
 * A route's lastError once a refund gave up (refundWorkflow flags it). While it stands, the stray scanner refunds
 * nothing of the route automatically: an operator's `routectl refund` decides, and clears it when it succeeds.
 */
export const refundFailedNote = (to: string, cause: string) => `refund to ${to} failed: ${cause}. Fix the cause, then run routectl refund again`;
export const isRefundFailedNote = (lastError: string | null) => lastError !== null && /^refund to 0x[0-9a-fA-F]{40} failed: /.test(lastError);
