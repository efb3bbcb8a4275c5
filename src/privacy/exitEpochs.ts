/**
 * Exit epochs on the clock (docs/privacy.md, "Timing"): time cut into epochs of PRIVACY_EXIT_EPOCH_SECONDS (UTC). Gates
 * open for the next epoch (src/privacy/gate.ts), the exit lottery draws per epoch (src/privacy/exitLottery.ts), and the
 * public view and held webhooks move only as an epoch begins. Pure and dependency-free: the workflows use it too.
 */

/** The start (ms) of the epoch `now` (ms) falls in. */
export function epochStart(now: number, epochSeconds: number): number {
  const epochMs = epochSeconds * 1000;
  return Math.floor(now / epochMs) * epochMs;
}

/** The start (ms) of the epoch after the one `now` (ms) falls in. */
export function nextEpochStart(now: number, epochSeconds: number): number {
  return epochStart(now, epochSeconds) + epochSeconds * 1000;
}
