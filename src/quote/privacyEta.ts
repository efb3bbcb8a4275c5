import { amountClassKey } from '../privacy/amountClass.ts';
import { expectedPrivacyWaitSeconds, type PrivacyRules } from '../privacy/exitLottery.ts';
import type { ClassActivity } from './amountAdvice.ts';
import type { QuoteService } from './quoteService.ts';

/**
 * Quotes whose etaSeconds count the wait in the pool (docs/privacy.md, "Timing"): the gate's wait for the set the
 * route asks for (a create's minAnonymitySet, else the service's minimum) and the exit lottery's mean wait, both from
 * the class's traffic. The traffic is the payouts of the class in the last day (public, as the quote's
 * amountClass.paidLast24h), never what waits in the pool now.
 */
export function withPrivacyEta(service: QuoteService, opts: { activity: ClassActivity; rules: PrivacyRules; minAnonymitySet: number }): QuoteService {
  return {
    ...service,
    async quote(request, options) {
      const resolved = await service.quote(request, options);
      const { quote, destToken } = resolved;
      const key = amountClassKey(quote.destChainId, destToken.address, BigInt(quote.amountClass.value));
      const paidLast24h = (await opts.activity([key])).get(key) ?? 0;
      const entries = (paidLast24h * opts.rules.trafficWindowSeconds) / 86_400;
      const target = Math.max(opts.minAnonymitySet, request.minAnonymitySet ?? 0);
      const wait = expectedPrivacyWaitSeconds(opts.rules, target, entries);
      return { ...resolved, quote: { ...quote, etaSeconds: quote.etaSeconds + wait } };
    },
  };
}
