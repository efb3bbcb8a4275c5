import { zeroAddress } from 'viem';
import type { DevnetChain, DevnetToken } from '../../manifest.ts';

/**
 * A chain's native currency as Relay names it: the zero address. Every devnet chain's is ETH (anvil), priced as WETH.
 */
export const NATIVE_ETH: DevnetToken = { symbol: 'ETH', name: 'Ether', decimals: 18, address: zeroAddress };

export const isNative = (token: { address: string }) => token.address.toLowerCase() === zeroAddress;

/** Every currency the emulated solver moves on a chain: its native currency, then the manifest's ERC-20s. */
export const currenciesOf = (chain: DevnetChain): DevnetToken[] => [NATIVE_ETH, ...chain.tokens];

/** The symbol a currency's USD price is kept under: the native currency is priced as its wrapped token. */
export const priceSymbolOf = (token: DevnetToken) => (isNative(token) ? 'WETH' : token.symbol);
