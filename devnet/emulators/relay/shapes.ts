import { zeroAddress, type Address } from 'viem';
import type { DevnetChain, DevnetToken } from '../../manifest.ts';
import { isNative } from './currencies.ts';
import { formatUnits, usdValue, type PricedToken } from './pricing.ts';

/**
 * Relay's response shapes (docs.relay.link API reference), filled from the devnet manifest.
 * Fields we cannot meaningfully emulate get Relay's neutral values (null, false, empty).
 */

export function relayCurrency(chainId: number, token: DevnetToken) {
  return {
    chainId,
    address: token.address.toLowerCase(),
    symbol: token.symbol,
    name: token.name,
    decimals: token.decimals,
    vmType: 'evm' as const,
    metadata: { verified: true, isNative: isNative(token) },
  };
}

/** GET /chains entry. */
export function relayChain(chain: DevnetChain, solver: Address) {
  const tokens = chain.tokens.map((t) => ({
    id: t.symbol.toLowerCase(),
    symbol: t.symbol,
    name: t.name,
    address: t.address.toLowerCase(),
    decimals: t.decimals,
  }));
  return {
    id: chain.chainId,
    name: chain.name,
    displayName: chain.displayName,
    httpRpcUrl: chain.rpcUrl,
    wsRpcUrl: '',
    explorerUrl: '',
    explorerName: '',
    explorerPaths: null,
    // "If the network supports depositing to this chain, e.g. allows this chain to be set as the destination chain"
    depositEnabled: true,
    tokenSupport: 'Limited' as const,
    disabled: false,
    partialDisableLimit: 0,
    blockProductionLagging: false,
    currency: { id: 'eth', symbol: 'ETH', name: 'Ether', address: zeroAddress, decimals: 18, supportsBridging: false },
    withdrawalFee: 0,
    depositFee: 0,
    surgeEnabled: false,
    featuredTokens: tokens.map((t) => ({ ...t, supportsBridging: true, metadata: {} })),
    erc20Currencies: tokens.map((t) => ({
      ...t,
      supportsBridging: true,
      supportsPermit: false,
      withdrawalFee: 0,
      depositFee: 0,
      surgeEnabled: false,
    })),
    solverCurrencies: tokens,
    iconUrl: null,
    logoUrl: null,
    brandColor: null,
    contracts: {},
    vmType: 'evm' as const,
    explorerQueryParams: null,
    baseChainId: chain.chainId,
    statusMessage: null,
    solverAddresses: [solver.toLowerCase()],
    tags: [],
  };
}

/** The {currency, amount, amountFormatted, amountUsd, minimumAmount} object of quote details. */
export function relayAmount(chainId: number, token: DevnetToken, amount: bigint, priced: PricedToken) {
  return {
    currency: relayCurrency(chainId, token),
    amount: amount.toString(),
    amountFormatted: formatUnits(amount, token.decimals),
    amountUsd: usdValue(amount, priced),
    minimumAmount: amount.toString(),
  };
}

export function relayError(message: string, errorCode: string) {
  return { message, errorCode };
}
