/**
 * Which token of a chain's catalogue a request names: by symbol, by address, or both (then they must agree). A
 * symbol that names more than one token (USDC and a bridged USDC.e whose symbol is also "USDC", or any two symbols
 * equal but for case) is refused rather than resolved to whichever the catalogue lists first.
 * Pure: the quote services turn a problem into their QuoteError.
 */
import type { BridgeToken } from '../providers/bridge.ts';

/** How a request names one token; the caller has applied its defaults (at least one of the two is set). */
export interface TokenChoice {
  symbol?: string;
  address?: string;
}

/** The request's field names for that token, for the messages (e.g. tokenSymbol and tokenAddress). */
export interface TokenFields {
  symbol: string;
  address: string;
}

export type TokenProblemCode = 'UNSUPPORTED_TOKEN' | 'AMBIGUOUS_TOKEN' | 'TOKEN_MISMATCH';

export type TokenPick = { token: BridgeToken } | { problem: { code: TokenProblemCode; message: string } };

const sameText = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();

/** The one token of `tokens` (one chain's catalogue) that `choice` names, or why there is none. */
export function pickToken(
  tokens: readonly BridgeToken[],
  choice: TokenChoice,
  fields: TokenFields,
  chain: { chainId: number; displayName: string },
): TokenPick {
  const where = `chain ${chain.chainId} (${chain.displayName})`;
  const list = `see GET /api/bridge/tokens?chainId=${chain.chainId}`;
  if (choice.address !== undefined) {
    const token = tokens.find((t) => sameText(t.address, choice.address!));
    if (!token)
      return { problem: { code: 'UNSUPPORTED_TOKEN', message: `${fields.address} ${choice.address} is not a supported token on ${where} (${list})` } };
    if (choice.symbol !== undefined && !sameText(choice.symbol, token.symbol)) {
      return {
        problem: {
          code: 'TOKEN_MISMATCH',
          message: `${fields.symbol} "${choice.symbol}" disagrees with ${fields.address} ${choice.address}, which is ${token.symbol} on ${where}: send one of them, or both naming the same token`,
        },
      };
    }
    return { token };
  }
  const symbol = choice.symbol ?? '';
  const named = tokens.filter((t) => sameText(t.symbol, symbol));
  if (named.length === 0) return { problem: { code: 'UNSUPPORTED_TOKEN', message: `${fields.symbol} "${symbol}" is not supported on ${where} (${list})` } };
  if (named.length > 1) {
    const candidates = named.map((t) => `${t.symbol} (${t.name}) ${t.address}`).join(', ');
    return {
      problem: {
        code: 'AMBIGUOUS_TOKEN',
        message: `${fields.symbol} "${symbol}" names ${named.length} tokens on ${where}: ${candidates}; send ${fields.address} with the address of the one you mean`,
      },
    };
  }
  return { token: named[0]! };
}

/** GET /api/bridge/tokens' `search`: a case-insensitive part of the symbol or name, or the token's whole address. */
export function matchesTokenSearch(token: Pick<BridgeToken, 'symbol' | 'name' | 'address'>, search: string | undefined): boolean {
  const term = search?.trim().toLowerCase();
  if (!term) return true;
  return token.symbol.toLowerCase().includes(term) || token.name.toLowerCase().includes(term) || token.address.toLowerCase() === term;
}
