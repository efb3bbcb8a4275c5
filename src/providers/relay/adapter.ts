import { getAddress, isAddress, zeroAddress, type Address, type Hex } from 'viem';
import {
  BridgeRouteError,
  BridgeUnavailableError,
  type BridgeChain,
  type BridgeOrderState,
  type BridgeOrderStatus,
  type BridgeQuote,
  type BridgeQuoteRequest,
  type BridgeToken,
  type DepositAddressBridge,
} from '../bridge.ts';
import { createRelayClient, type RelayClientOptions, type RelayQuoteRequest } from './client.ts';

export interface RelayBridgeOptions {
  /** e.g. https://api.relay.link, or the local emulator's URL. */
  baseUrl: string;
  apiKey?: string;
  fetch?: typeof fetch;
  timeoutMs?: number;
  quota?: RelayClientOptions['quota'];
}

/** Relay's /currencies/v2 accepts at most 100. */
const CURRENCY_LIMIT = 100;

/** Relay intent statuses (docs: references/api/get-intents-status-v3) → our order states. */
const STATUS_MAP: Record<string, BridgeOrderState> = {
  waiting: 'waiting',
  depositing: 'waiting',
  pending: 'pending',
  submitted: 'pending',
  delayed: 'pending',
  success: 'success',
  refund: 'refunded',
  // The docs' prose spells it "refunded" and v1 used "fallback" for refunds.
  refunded: 'refunded',
  fallback: 'refunded',
  failure: 'failed',
};

/** Addresses Relay and other aggregators use for a chain's native coin. */
const NATIVE_ADDRESSES = new Set(['0x0000000000000000000000000000000000000000', '0xeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee']);

const isNativeCurrency = (c: { address: string; metadata?: { isNative?: boolean } }) =>
  c.metadata?.isNative === true || NATIVE_ADDRESSES.has(c.address.toLowerCase());

/**
 * Whether the service moves this currency: any ERC-20, and a chain's native currency when it is ETH (18 decimals),
 * named by the zero address as Relay does. Other native currencies (AVAX, POL…) are not offered: their deposits and
 * fills are read like ETH's, but no route prices their gas against them (docs/api.md, "Native currency").
 */
export function movable(c: { address: string; symbol: string; decimals: number; metadata?: { isNative?: boolean } }): boolean {
  if (!isNativeCurrency(c)) return true;
  return c.symbol === 'ETH' && c.decimals === 18;
}

export function createRelayBridge(opts: RelayBridgeOptions): DepositAddressBridge {
  const client = createRelayClient(opts);

  return {
    async listChains(): Promise<BridgeChain[]> {
      // Relay's chain entries carry no deposit-address flag (that is per currency, see
      // listTokens), so we keep every enabled EVM chain.
      const chains = await client.getChains();
      return chains
        .filter((c) => c.vmType === 'evm' && c.disabled !== true)
        .map((c) => ({
          chainId: c.id,
          name: c.name,
          displayName: c.displayName,
          logoUrl: c.logoUrl ?? c.iconUrl ?? undefined,
          vmType: c.vmType,
          // Relay answers "" for a chain without an explorer.
          ...(c.explorerUrl && { explorerUrl: c.explorerUrl.replace(/\/+$/, '') }),
          ...(c.currency && { nativeCurrency: { symbol: c.currency.symbol, decimals: c.currency.decimals } }),
        }));
    },

    async listTokens(chainId: number, search?: string): Promise<BridgeToken[]> {
      const term = search?.trim() || undefined;
      const currencies = await client.getCurrencies({
        chainIds: [chainId],
        term,
        verified: true,
        limit: CURRENCY_LIMIT,
        depositAddressOnly: true,
      });
      // Relay's search is fuzzy and may include other chains' entries; keep exact matches only.
      const needle = term?.toLowerCase();
      return (
        currencies
          .filter((c) => c.chainId === chainId && isAddress(c.address, { strict: false }))
          .filter((c) => c.vmType === undefined || c.vmType === 'evm')
          .filter(movable)
          .filter((c) => !needle || c.symbol.toLowerCase().includes(needle) || c.name.toLowerCase().includes(needle))
          // The native currency first: a quote naming "ETH" means it, not an ERC-20 that calls itself ETH.
          .sort((a, b) => Number(isNativeCurrency(b)) - Number(isNativeCurrency(a)))
          .map((c) => ({
            chainId: c.chainId,
            address: isNativeCurrency(c) ? zeroAddress : getAddress(c.address),
            symbol: c.symbol,
            name: c.name,
            decimals: c.decimals,
            logoUrl: c.metadata?.logoURI || undefined,
          }))
          // Relay may name the native currency twice (0x0… and 0xeee…): once is enough.
          .filter((t, i, all) => all.findIndex((o) => o.address === t.address) === i)
      );
    },

    async quote(request: BridgeQuoteRequest): Promise<BridgeQuote> {
      if (request.amount <= 0n) throw new BridgeRouteError('no route: amount must be greater than zero');
      const body: RelayQuoteRequest = {
        user: request.user,
        recipient: request.recipient,
        originChainId: request.originChainId,
        destinationChainId: request.destinationChainId,
        originCurrency: request.originCurrency,
        destinationCurrency: request.destinationCurrency,
        amount: request.amount.toString(),
        tradeType: request.tradeType,
        refundTo: request.refundTo,
        useDepositAddress: request.useDepositAddress,
        // A strict deposit address is bound to this one order: an exact payment fills, an
        // underpayment refunds. Relay accepts EXACT_OUTPUT deposit addresses only in strict mode.
        ...(request.useDepositAddress ? { strict: true } : {}),
      };
      const res = await client.getQuote(body);

      let requestId: string | null = null;
      let depositAddress: Address | null = null;
      if (request.useDepositAddress) {
        // Relay puts both on the deposit step (docs: get-quote-v2, steps[].requestId / steps[].depositAddress).
        const step = res.steps.find((s) => s.depositAddress !== undefined) ?? res.steps[0];
        if (!step?.requestId || !step.depositAddress || !isAddress(step.depositAddress, { strict: false })) {
          throw new BridgeRouteError('no route: relay returned no deposit address for this pair');
        }
        requestId = step.requestId;
        depositAddress = getAddress(step.depositAddress);
      }

      return {
        requestId,
        depositAddress,
        amountIn: BigInt(res.details.currencyIn.amount),
        amountOut: BigInt(res.details.currencyOut.amount),
        minAmountOut: BigInt(res.details.currencyOut.minimumAmount ?? res.details.currencyOut.amount),
        amountInUsd: res.details.currencyIn.amountUsd ?? null,
        amountOutUsd: res.details.currencyOut.amountUsd ?? null,
        timeEstimateSeconds: res.details.timeEstimate ?? 0,
      };
    },

    async orderStatus(requestId: string): Promise<BridgeOrderStatus> {
      const res = await client.getStatus(requestId);
      // Unknown future statuses are treated as still in flight rather than guessed terminal.
      const state = STATUS_MAP[res.status] ?? 'pending';
      const status: BridgeOrderStatus = {
        state,
        providerStatus: res.status,
        inTxHashes: hexes(res.inTxHashes),
        outTxHashes: hexes(res.txHashes),
      };
      if (res.destinationChainId !== undefined) status.destinationChainId = res.destinationChainId;
      if (res.details) status.details = res.details;
      return status;
    },

    async tokenUsdPrice(chainId: number, address: Address): Promise<string | null> {
      const price = await client.getTokenPrice(chainId, address);
      if (price === null) return null;
      const text = typeof price === 'number' ? numberToDecimal(price) : price.trim();
      if (!/^\d+(\.\d+)?$/.test(text)) {
        throw new BridgeUnavailableError(`relay returned an unusable price for ${address} on chain ${chainId}`);
      }
      return /^[0.]+$/.test(text) ? null : text;
    },
  };
}

function hexes(values: string[] | undefined): Hex[] {
  return (values ?? []).filter((v): v is Hex => /^0x[0-9a-fA-F]+$/.test(v));
}

/** A JSON number as a plain decimal string (no exponent), e.g. 1e-7 → "0.0000001". */
function numberToDecimal(value: number): string {
  if (!Number.isFinite(value) || value < 0) return 'NaN';
  const text = String(value);
  if (!/e/i.test(text)) return text;
  return value.toFixed(20).replace(/\.?0+$/, '');
}
