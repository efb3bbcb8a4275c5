/**
 * The USD price of a chain's native currency for the gas in quotes: the provider's (Relay's price API), else the
 * operator's NATIVE_USD_PRICES for that chain. Without either, null (the quote is refused: the service's gas on that
 * chain cannot be priced). A provider that fails falls back only where the operator set a price; elsewhere its error
 * stands.
 */
export function nativeUsdPrices(opts: {
  fromProvider: (chainId: number) => Promise<string | null>;
  overrides: Record<string, string>;
}): (chainId: number) => Promise<string | null> {
  return async (chainId) => {
    const fallback = opts.overrides[String(chainId)] ?? null;
    try {
      return (await opts.fromProvider(chainId)) ?? fallback;
    } catch (error) {
      if (fallback !== null) return fallback;
      throw error;
    }
  };
}
