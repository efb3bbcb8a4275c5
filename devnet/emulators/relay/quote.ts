import { randomBytes } from 'node:crypto';
import { encodeFunctionData, erc20Abi, getAddress, isAddress, type Address, type Hex } from 'viem';
import { z } from 'zod';
import type { DevnetChain, DevnetManifest, DevnetToken } from '../../manifest.ts';
import type { FaultOperation, FaultRegistry } from '../faults.ts';
import { currenciesOf, isNative, priceSymbolOf } from './currencies.ts';
import type { Onchain } from './onchain.ts';
import type { OrderStore } from './orders.ts';
import type { PriceFeed } from './priceWalk.ts';
import { BPS, formatUnits, quoteExactInput, quoteExactOutput, usdMicros, type PricedToken, type UsdPrice } from './pricing.ts';
import { relayAmount } from './shapes.ts';

export const TIME_ESTIMATE_SECONDS = 10;

/** A Relay-style error answer: HTTP status plus {message, errorCode}. */
export class RelayApiError extends Error {
  constructor(
    readonly status: 400 | 500,
    message: string,
    readonly errorCode: string,
  ) {
    super(message);
  }
}

export interface QuoteContext {
  manifest: DevnetManifest;
  onchain: Onchain;
  store: OrderStore;
  faults: FaultRegistry;
  prices: PriceFeed;
  feeBps: bigint;
  log: (obj: object) => void;
}

// The subset of Relay's /quote/v2 body the emulator understands; other fields are ignored.
const quoteBodySchema = z.looseObject({
  user: z.string(),
  recipient: z.string().optional(),
  originChainId: z.number().int(),
  destinationChainId: z.number().int(),
  originCurrency: z.string(),
  destinationCurrency: z.string(),
  amount: z.string(),
  tradeType: z.enum(['EXACT_INPUT', 'EXACT_OUTPUT', 'EXPECTED_OUTPUT']),
  refundTo: z.string().optional(),
  useDepositAddress: z.boolean().optional(),
  strict: z.boolean().optional(),
});

const bad = (message: string, errorCode: string) => new RelayApiError(400, message, errorCode);

/** POST /quote/v2: validates like Relay, prices at the current USD prices, and records deposit-address orders. */
export async function createQuote(ctx: QuoteContext, rawBody: unknown) {
  const parsed = quoteBodySchema.safeParse(rawBody);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw bad(`body/${issue?.path.join('/') ?? ''} ${issue?.message ?? 'is invalid'}`, 'INVALID_INPUT');
  }
  const body = parsed.data;

  const user = toAddress(body.user, 'user');
  const recipient = body.recipient === undefined ? user : toAddress(body.recipient, 'recipient');
  const refundTo = body.refundTo === undefined ? undefined : toAddress(body.refundTo, 'refundTo');

  const origin = findChain(ctx.manifest, body.originChainId);
  const destination = findChain(ctx.manifest, body.destinationChainId);
  const tokenIn = findToken(origin, body.originCurrency, 'INVALID_INPUT_CURRENCY');
  const tokenOut = findToken(destination, body.destinationCurrency, 'INVALID_OUTPUT_CURRENCY');
  if (origin.chainId === destination.chainId && tokenIn.address === tokenOut.address) {
    throw bad('Origin and destination currency cannot be the same on the same chain', 'UNSUPPORTED_ROUTE');
  }

  if (!/^\d+$/.test(body.amount)) throw bad('Amount must be a positive integer string', 'INVALID_INPUT');
  const amount = BigInt(body.amount);
  if (amount === 0n) throw bad('Amount must be greater than zero', 'AMOUNT_TOO_LOW');

  const exactInput = body.tradeType === 'EXACT_INPUT';
  const useDepositAddress = body.useDepositAddress === true;
  if (useDepositAddress && !exactInput && body.strict !== true) {
    throw bad('EXACT_OUTPUT deposit address requests are only supported when strict is enabled', 'UNSUPPORTED_ROUTE');
  }
  if (body.strict === true && refundTo === undefined) {
    throw bad('refundTo is required for strict deposit addresses', 'INVALID_INPUT');
  }

  // One snapshot for both sides, so a step boundary cannot fall between them.
  const prices = ctx.prices.pricesAt();
  const pricedIn = priced(prices, tokenIn);
  const pricedOut = priced(prices, tokenOut);

  const operation = operationOf(ctx.manifest, origin.chainId, destination.chainId);
  if (ctx.faults.take(operation, 'fail')) throw new RelayApiError(500, 'injected fault', 'INTERNAL_ERROR');

  const amountIn = exactInput ? amount : quoteExactOutput(amount, pricedIn, pricedOut, ctx.feeBps);
  const amountOut = exactInput ? quoteExactInput(amount, pricedIn, pricedOut, ctx.feeBps) : amount;
  if (amountOut <= 0n) throw bad('Amount is too low to cover fees', 'AMOUNT_TOO_LOW');

  const liquidity = await ctx.onchain.balanceOf(destination.chainId, tokenOut.address, ctx.onchain.solver);
  if (liquidity < amountOut) {
    throw bad(`Solver has insufficient liquidity for ${tokenOut.symbol} on chain ${destination.chainId}`, 'INSUFFICIENT_LIQUIDITY');
  }

  const requestId = `0x${randomBytes(32).toString('hex')}` as Hex;
  let depositAddress: Address | undefined;
  if (useDepositAddress) {
    const allocated = ctx.store.allocateDepositAddress();
    depositAddress = allocated.address;
    const [baselineBalance, fromBlock] = await Promise.all([
      ctx.onchain.balanceOf(origin.chainId, tokenIn.address, depositAddress),
      ctx.onchain.blockNumber(origin.chainId),
    ]);
    const now = Date.now();
    ctx.store.add({
      requestId,
      depositAddress,
      depositIndex: allocated.index,
      user,
      recipient,
      refundTo: refundTo ?? recipient,
      tradeType: exactInput ? 'EXACT_INPUT' : 'EXACT_OUTPUT',
      operation,
      originChainId: origin.chainId,
      originCurrency: tokenIn.address,
      amountIn,
      destinationChainId: destination.chainId,
      destinationCurrency: tokenOut.address,
      amountOut,
      baselineBalance,
      fromBlock,
      status: 'waiting',
      inTxHashes: [],
      txHashes: [],
      payoutErrors: 0,
      createdAt: now,
      updatedAt: now,
    });
    ctx.log({ event: 'order.created', requestId, depositAddress, amountIn: `${amountIn}`, amountOut: `${amountOut}` });
  }

  const fee = (amountIn * ctx.feeBps) / BPS;
  const inMicros = usdMicros(amountIn, pricedIn);
  const outMicros = usdMicros(amountOut, pricedOut);
  return {
    steps: [
      {
        id: 'deposit' as const,
        action: 'Confirm transaction in your wallet',
        description: depositAddress ? `Send ${tokenIn.symbol} to the deposit address` : 'Deposit funds for executing the bridge',
        kind: 'transaction',
        requestId,
        ...(depositAddress ? { depositAddress: depositAddress.toLowerCase() } : {}),
        items: [
          {
            status: 'incomplete',
            data: { from: user, ...depositCall(tokenIn, depositAddress ?? ctx.onchain.solver, amountIn), chainId: origin.chainId },
            check: { endpoint: `/intents/status/v3?requestId=${requestId}`, method: 'GET' },
          },
        ],
      },
    ],
    fees: {
      relayer: relayAmount(origin.chainId, tokenIn, fee, pricedIn),
      relayerGas: relayAmount(origin.chainId, tokenIn, 0n, pricedIn),
      relayerService: relayAmount(origin.chainId, tokenIn, fee, pricedIn),
      app: relayAmount(origin.chainId, tokenIn, 0n, pricedIn),
    },
    details: {
      operation: origin.chainId === destination.chainId ? 'swap' : tokenIn.symbol === tokenOut.symbol ? 'bridge' : 'swap',
      sender: user,
      recipient,
      currencyIn: relayAmount(origin.chainId, tokenIn, amountIn, pricedIn),
      currencyOut: relayAmount(destination.chainId, tokenOut, amountOut, pricedOut),
      totalImpact: {
        usd: formatUnits(outMicros - inMicros, 6),
        percent: inMicros === 0n ? '0' : formatUnits(((outMicros - inMicros) * 10_000n) / inMicros, 2),
      },
      swapImpact: { usd: '0', percent: '0' },
      rate: formatUnits((amountOut * 10n ** BigInt(tokenIn.decimals + 18)) / (amountIn * 10n ** BigInt(tokenOut.decimals)), 18),
      timeEstimate: TIME_ESTIMATE_SECONDS,
      userBalance: '0',
    },
  };
}

/** The deposit step's transaction: the native currency is sent as the transaction's value, an ERC-20 by transfer(). */
export function depositCall(token: DevnetToken, to: Address, amount: bigint): { to: Address; data: Hex; value: string } {
  if (isNative(token)) return { to, data: '0x', value: amount.toString() };
  return { to: token.address, data: encodeFunctionData({ abi: erc20Abi, functionName: 'transfer', args: [to, amount] }), value: '0' };
}

/** 'bridge-in' fills on the hub, 'bridge-out' starts from it; other routes have no fault class. */
export function operationOf(manifest: DevnetManifest, originChainId: number, destinationChainId: number): FaultOperation | null {
  const hub = manifest.chains.find((c) => c.role === 'hub')?.chainId;
  if (destinationChainId === hub) return 'bridge-in';
  if (originChainId === hub) return 'bridge-out';
  return null;
}

function toAddress(value: string, field: string): Address {
  if (!isAddress(value, { strict: false })) throw bad(`Invalid address for ${field}: ${value}`, 'INVALID_ADDRESS');
  return getAddress(value);
}

function findChain(manifest: DevnetManifest, chainId: number): DevnetChain {
  const chain = manifest.chains.find((c) => c.chainId === chainId);
  if (!chain) throw bad(`Unsupported chain: ${chainId}`, 'UNSUPPORTED_CHAIN');
  return chain;
}

function findToken(chain: DevnetChain, address: string, errorCode: string): DevnetToken {
  const token = currenciesOf(chain).find((t) => t.address.toLowerCase() === address.toLowerCase());
  if (!token) throw bad(`Unsupported currency ${address} on chain ${chain.chainId}`, errorCode);
  return token;
}

function priced(prices: Map<string, UsdPrice>, token: DevnetToken): PricedToken {
  const price = prices.get(priceSymbolOf(token));
  if (!price) throw bad(`No price available for ${token.symbol}`, 'NO_QUOTES');
  return { decimals: token.decimals, price };
}
