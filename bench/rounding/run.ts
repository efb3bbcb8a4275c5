/**
 * What amount classes cost users (docs/privacy.md, "Amount classes"): the rounding of the output down to its class,
 * in basis points of the output before it, through the service's own quote code over a bridge with the local stack's
 * fees (0.1 % a leg), the pool's (50 bps vetting, 10 bps relay) and the default service fee (1.5 %, at least 1 USD).
 *
 *   npm run bench:rounding [-- --samples 20000 --json]
 *
 * Prints the mean, median, 95th percentile and worst case for amounts spread evenly on a log scale (10 to 100,000 USDC),
 * for the round amounts people send, and for USDC → WETH; and what following the quote's first suggestion saves.
 */
import { freeNetwork } from '../../src/quote/gasCost.ts';
import { parseArgs } from 'node:util';
import type { Address } from 'viem';
import { formatAmount } from '../../src/money/amount.ts';
import type { BridgeQuoteRequest, BridgeToken, DepositAddressBridge } from '../../src/providers/bridge.ts';
import type { PrivacyPool } from '../../src/providers/privacyPool.ts';
import { createInMemoryPriceEpochs } from '../../src/quote/priceEpochs.ts';
import { createQuoteService } from '../../src/quote/quoteService.ts';

const USDC = (chainId: number): BridgeToken => ({ chainId, address: `0x${'1'.repeat(40)}` as Address, symbol: 'USDC', name: 'USD Coin', decimals: 6 });
const WETH = (chainId: number): BridgeToken => ({ chainId, address: `0x${'2'.repeat(40)}` as Address, symbol: 'WETH', name: 'Wrapped Ether', decimals: 18 });
const USD: Record<string, bigint> = { [USDC(0).address]: 1n, [WETH(0).address]: 2500n };
const decimalsOf = (address: Address) => (address === USDC(0).address ? 6 : 18);
const FEE_PER_MILLE = 1n;

/** The local stack's bridge: fixed prices, 0.1 % a leg, exact input and exact output. */
function convert(request: BridgeQuoteRequest, amount: bigint): bigint {
  const value = amount * USD[request.originCurrency]! * 10n ** BigInt(decimalsOf(request.destinationCurrency));
  return ((value / (USD[request.destinationCurrency]! * 10n ** BigInt(decimalsOf(request.originCurrency)))) * (1000n - FEE_PER_MILLE)) / 1000n;
}
function exactOutput(request: BridgeQuoteRequest): bigint {
  let high = 1n;
  while (convert(request, high) < request.amount) high *= 2n;
  let low = high / 2n;
  while (high - low > 1n) {
    const middle = (low + high) / 2n;
    if (convert(request, middle) >= request.amount) high = middle;
    else low = middle;
  }
  return high;
}
const bridge: DepositAddressBridge = {
  listChains: async () => [1, 2, 3].map((chainId) => ({ chainId, name: `c${chainId}`, displayName: `Chain ${chainId}` })),
  listTokens: async (chainId) => [USDC(chainId), WETH(chainId)],
  quote: async (request) => {
    const exact = request.tradeType === 'EXACT_OUTPUT';
    return {
      requestId: null,
      depositAddress: null,
      amountIn: exact ? exactOutput(request) : request.amount,
      amountOut: exact ? request.amount : convert(request, request.amount),
      amountInUsd: null,
      amountOutUsd: null,
      timeEstimateSeconds: 10,
    };
  },
  orderStatus: async () => ({ state: 'waiting', providerStatus: 'waiting', inTxHashes: [], outTxHashes: [] }),
  tokenUsdPrice: async (_chainId, address) => String(USD[address]),
};
const refuse = async (): Promise<never> => {
  throw new Error('not used');
};
const pool: PrivacyPool = {
  chainId: 2,
  fees: async () => ({ depositFeeBps: 50, withdrawalFeeBps: 10, minimumDeposit: 1_000_000n }),
  deposit: refuse,
  review: refuse,
  reviewMany: refuse,
  withdraw: refuse,
  minedWithdrawal: refuse,
  minedDeposit: refuse,
  ragequit: refuse,
  unspent: refuse,
};
const quotes = createQuoteService({
  bridge,
  pool,
  hubChainId: 2,
  hubTokenSymbol: 'USDC',
  feePolicy: { feeBps: 150n, feeMinUsd: '1' },
  networkCosts: freeNetwork,
  priceEpochs: createInMemoryPriceEpochs({ epochSeconds: 3600, marginBps: 50 }),
  priceMarginBps: 50,
  poolEtaSeconds: 60,
  previewAccount: `0x${'9'.repeat(40)}`,
});

interface Figures {
  amounts: number;
  meanBps: number;
  medianBps: number;
  p95Bps: number;
  worstBps: number;
  worstAt: string;
}

/** The rounding of each amount's quote, in bps of the output before rounding (fractional, for the statistics). */
async function roundingOf(amounts: string[], destTokenSymbol: string): Promise<Figures> {
  const bps: Array<{ amount: string; bps: number }> = [];
  for (const amount of amounts) {
    const { quote } = await quotes.quote({ sourceChainId: 1, destChainId: 3, amount, destTokenSymbol });
    const rounding = BigInt(quote.roundingAmount);
    const before = BigInt(quote.quotedOutputAmount) + rounding;
    bps.push({ amount, bps: Number((rounding * 1_000_000n) / before) / 100 });
  }
  const sorted = [...bps].sort((a, b) => a.bps - b.bps);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!.bps;
  const worst = sorted.at(-1)!;
  return {
    amounts: bps.length,
    meanBps: bps.reduce((sum, x) => sum + x.bps, 0) / bps.length,
    medianBps: at(0.5),
    p95Bps: at(0.95),
    worstBps: worst.bps,
    worstAt: worst.amount,
  };
}

/** Amounts spread evenly on a log scale from 10 to 100,000 USDC, to the cent, deterministic. */
const logSpread = (samples: number) =>
  Array.from({ length: samples }, (_, i) => formatAmount(BigInt(Math.floor(10 ** (1 + (4 * (i + 0.5)) / samples) * 100)) * 10_000n, 6));
/** What people send: round amounts. */
const ROUND = [
  '10',
  '20',
  '25',
  '30',
  '40',
  '50',
  '75',
  '100',
  '150',
  '200',
  '250',
  '300',
  '400',
  '500',
  '750',
  '1000',
  '1500',
  '2000',
  '2500',
  '5000',
  '10000',
  '25000',
  '50000',
  '100000',
];

async function main() {
  const { values } = parseArgs({ options: { samples: { type: 'string', default: '5000' }, json: { type: 'boolean', default: false } } });
  const samples = Number(values.samples);
  if (!Number.isInteger(samples) || samples < 10) throw new Error('--samples must be an integer ≥ 10');
  const results = {
    logSpreadUsdc: await roundingOf(logSpread(samples), 'USDC'),
    roundAmountsUsdc: await roundingOf(ROUND, 'USDC'),
    logSpreadWeth: await roundingOf(logSpread(Math.min(samples, 2000)), 'WETH'),
    // Following the quote's first suggestion for the same class: the smallest input that pays it.
    roundAmountsUsdcAtSuggestedInput: await roundingOf(
      await Promise.all(
        ROUND.map(async (amount) => {
          const request = { sourceChainId: 1, destChainId: 3, amount, destTokenSymbol: 'USDC' };
          const { quote } = await quotes.quote(request);
          return formatAmount(await quotes.inputFor(request, BigInt(quote.quotedOutputAmount)), 6);
        }),
      ),
      'USDC',
    ),
  };
  if (values.json) {
    process.stdout.write(`${JSON.stringify(results, null, 2)}\n`);
    return;
  }
  const line = (label: string, f: Figures) =>
    `${label.padEnd(48)} n=${String(f.amounts).padEnd(6)} mean ${f.meanBps.toFixed(1)} bps, median ${f.medianBps.toFixed(1)}, p95 ${f.p95Bps.toFixed(1)}, worst ${f.worstBps.toFixed(1)} (at ${f.worstAt})`;
  process.stdout.write(
    [
      'rounding of the output down to its amount class, in bps of the output before rounding',
      line('USDC → USDC, 10–100,000 USDC evenly on a log scale', results.logSpreadUsdc),
      line('USDC → USDC, round amounts (10, 20, 25 … 100,000)', results.roundAmountsUsdc),
      line('USDC → WETH, 10–100,000 USDC evenly on a log scale', results.logSpreadWeth),
      line('USDC → USDC, round amounts at the suggested input', results.roundAmountsUsdcAtSuggestedInput),
      '',
    ].join('\n'),
  );
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
