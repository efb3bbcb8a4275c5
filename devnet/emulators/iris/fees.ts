/** CCTP v2 finality thresholds (circlefin/evm-cctp-contracts/src/v2/FinalityThresholds.sol). */
export const FINALITY_THRESHOLD_CONFIRMED = 1000;
export const FINALITY_THRESHOLD_FINALIZED = 2000;

/** Iris's minimum fees per finality threshold, in basis points (fractions allowed, as Iris answers e.g. 1.3). */
export interface IrisFees {
  fastBps: number;
  standardBps: number;
}

export const DEFAULT_IRIS_FEES: IrisFees = { fastBps: 1, standardBps: 0 };

export function validateFees(fees: IrisFees): IrisFees {
  for (const [name, bps] of Object.entries(fees)) {
    if (!Number.isFinite(bps) || bps < 0 || bps >= 10_000) throw new Error(`Iris fee ${name} must be in [0, 10000) bps, got ${bps}`);
  }
  return fees;
}

/** GET /v2/burn/USDC/fees/{sourceDomainId}/{destDomainId} body. */
export function irisFeesBody(fees: IrisFees) {
  return [
    { finalityThreshold: FINALITY_THRESHOLD_CONFIRMED, minimumFee: fees.fastBps },
    { finalityThreshold: FINALITY_THRESHOLD_FINALIZED, minimumFee: fees.standardBps },
  ];
}

/** The fee at a rate in basis points, rounded up to a whole unit of the token. */
export function feeAmount(amount: bigint, bps: number): bigint {
  const milliBps = BigInt(Math.round(bps * 1000));
  return (amount * milliBps + 9_999_999n) / 10_000_000n;
}

export type AttestationTerms =
  | { finalityThresholdExecuted: number; feeExecuted: bigint }
  /** The burn's maxFee does not cover even the standard fee: Iris holds it (delayReason insufficient_fee). */
  | null;

/**
 * At which finality a burn is attested and the fee it pays. A fast burn (minFinalityThreshold ≤ 1000)
 * whose maxFee covers the fast fee is attested at 1000; otherwise the burn waits for finality (2000)
 * and pays the standard fee. The fee never exceeds maxFee, which the destination TokenMessengerV2 enforces.
 */
export function attestationTerms(burn: { amount: bigint; maxFee: bigint; minFinalityThreshold: number }, fees: IrisFees): AttestationTerms {
  if (burn.minFinalityThreshold <= FINALITY_THRESHOLD_CONFIRMED) {
    const fast = feeAmount(burn.amount, fees.fastBps);
    if (fast <= burn.maxFee) return { finalityThresholdExecuted: FINALITY_THRESHOLD_CONFIRMED, feeExecuted: fast };
  }
  const standard = feeAmount(burn.amount, fees.standardBps);
  if (standard <= burn.maxFee) return { finalityThresholdExecuted: FINALITY_THRESHOLD_FINALIZED, feeExecuted: standard };
  return null;
}
