import { ceilDiv, formatAmount } from '../money/amount.ts';
import { classOutput, QuoteError, type QuoteService, type ResolvedQuote } from './quoteService.ts';

const BPS = 10_000n;

/** A partner's fee on an output before it: its basis points, rounded up (the partner is never paid less than its rate). */
export function partnerFeeOf(output: bigint, feeBps: number): bigint {
  return ceilDiv(output * BigInt(feeBps), BPS);
}

/** The smallest output before the partner's fee that leaves at least `net` after it. */
export function outputBeforePartnerFee(net: bigint, feeBps: number): bigint {
  if (feeBps === 0) return net;
  let before = ceilDiv(net * BPS, BPS - BigInt(feeBps));
  while (before - partnerFeeOf(before, feeBps) < net) before++;
  while (before > net && before - 1n - partnerFeeOf(before - 1n, feeBps) >= net) before--;
  return before;
}

/**
 * What of a pool note a route must keep for its partner when it pays a bridge-out: the partner's fee (destination
 * units) in the order's input units, at the order's own rate (its input for the quoted output), rounded up.
 */
export function partnerFeeReserve(partnerFee: bigint, orderInput: bigint, quotedOutput: bigint): bigint {
  if (partnerFee === 0n || quotedOutput === 0n) return 0n;
  return ceilDiv(partnerFee * orderInput, quotedOutput);
}

/**
 * Quotes for a partner's key (TransferRequest.partnerFeeBps, set by the API from the key, never from the body) with
 * the partner's fee taken from the output: quotedOutputAmount is the output after the service's fee, less the
 * partner's fee (itemized as partnerFeeAmount), rounded down to its amount class. The service keeps the difference
 * as it keeps its own fee, and owes it to the partner (the ledger's partner_fee; `routectl partner fees`).
 */
export function withPartnerFees(service: QuoteService): QuoteService {
  return {
    ...service,
    async quote(request, options) {
      const resolved = await service.quote(request, options);
      return applyPartnerFee(resolved, request.partnerFeeBps ?? 0);
    },
    async inputFor(request, output) {
      return service.inputFor(request, outputBeforePartnerFee(output, request.partnerFeeBps ?? 0));
    },
  };
}

function applyPartnerFee(resolved: ResolvedQuote, feeBps: number): ResolvedQuote {
  const { quote } = resolved;
  if (feeBps === 0)
    return { ...resolved, quote: { ...quote, partnerFeeAmount: '0', partnerFeeUsd: quote.quotedOutputUsd === null ? null : 0, partnerFeeBps: 0 } };
  const before = BigInt(quote.quotedOutputAmount) + BigInt(quote.roundingAmount);
  const partnerFee = partnerFeeOf(before, feeBps);
  if (before - partnerFee <= 0n) {
    throw new QuoteError(
      `amount ${formatAmount(BigInt(quote.amount), resolved.sourceToken.decimals)} ${quote.symbol} is too small: the fees exceed the output`,
      {
        code: 'INVALID_AMOUNT',
        limit: 'min',
        sourceToken: resolved.sourceToken,
      },
    );
  }
  const { output, rounding, roundingBps } = classOutput(before - partnerFee);
  // USD figures are for display: scaled from the quote's own USD value of its output before rounding.
  const usdPerUnit = quote.quotedOutputUsd === null || before === 0n ? null : (quote.quotedOutputUsd + (quote.roundingUsd ?? 0)) / Number(before);
  const usd = (units: bigint) => (usdPerUnit === null ? null : Math.round(Number(units) * usdPerUnit * 100) / 100);
  return {
    ...resolved,
    quote: {
      ...quote,
      quotedOutputAmount: output.toString(),
      quotedOutputUsd: usd(output),
      roundingAmount: rounding.toString(),
      roundingUsd: usd(rounding),
      partnerFeeAmount: partnerFee.toString(),
      partnerFeeUsd: usd(partnerFee),
      partnerFeeBps: feeBps,
      amountClass: { ...quote.amountClass, value: output.toString(), roundingBps },
    },
  };
}
