import { z } from 'zod';
import { BridgeRouteError, BridgeUnavailableError } from '../bridge.ts';
import { describeError, truncate } from '../errorText.ts';

/**
 * A small typed client for the parts of Relay's public API (https://docs.relay.link) that the
 * deposit-address bridge needs. Responses are validated for the fields we read only; every
 * object schema is loose so Relay can add fields without breaking us.
 *
 * Error mapping: 400/422 → BridgeRouteError (the request cannot be served as asked);
 * anything else that is not 2xx, network failures, timeouts and malformed bodies →
 * BridgeUnavailableError. The API key travels only in the `x-api-key` header and is scrubbed
 * from every error message.
 */

export interface RelayClientOptions {
  baseUrl: string;
  apiKey?: string;
  fetch?: typeof fetch;
  /** Per-request timeout. Default 15 s. */
  timeoutMs?: number;
  /** Takes each request from the quota its endpoint class shares across replicas (src/providers/providerQuota.ts). */
  quota?: (bucket: 'relay:quote' | 'relay:status' | 'relay:other') => Promise<void>;
}

const DEFAULT_TIMEOUT_MS = 15_000;

const integerString = z.string().regex(/^\d+$/, 'expected an integer string');

// GET /chains (docs: references/api/get-chains)
const chainSchema = z.looseObject({
  id: z.number().int(),
  name: z.string(),
  displayName: z.string(),
  vmType: z.string().optional(),
  disabled: z.boolean().optional(),
  depositEnabled: z.boolean().optional(),
  iconUrl: z.string().nullish(),
  logoUrl: z.string().nullish(),
  explorerUrl: z.string().nullish(),
  currency: z.looseObject({ symbol: z.string(), decimals: z.number().int() }).nullish(),
});
const chainsResponseSchema = z.looseObject({ chains: z.array(chainSchema) });
export type RelayChain = z.infer<typeof chainSchema>;

// POST /currencies/v2 (docs: references/api/get-currencies-v2): a flat list.
const currencySchema = z.looseObject({
  chainId: z.number().int(),
  address: z.string(),
  symbol: z.string(),
  name: z.string(),
  decimals: z.number().int().nonnegative(),
  vmType: z.string().optional(),
  metadata: z
    .looseObject({
      logoURI: z.string().nullish(),
      verified: z.boolean().optional(),
      isNative: z.boolean().optional(),
    })
    .optional(),
});
const currenciesResponseSchema = z.array(currencySchema);
export type RelayCurrency = z.infer<typeof currencySchema>;

export interface RelayCurrenciesRequest {
  chainIds?: number[];
  term?: string;
  verified?: boolean;
  limit?: number;
  depositAddressOnly?: boolean;
}

// POST /quote/v2 (docs: references/api/get-quote-v2)
export interface RelayQuoteRequest {
  user: string;
  recipient: string;
  originChainId: number;
  destinationChainId: number;
  originCurrency: string;
  destinationCurrency: string;
  /** Smallest units, decimal string. */
  amount: string;
  tradeType: 'EXACT_INPUT' | 'EXACT_OUTPUT';
  refundTo: string;
  useDepositAddress: boolean;
  strict?: boolean;
}

const quoteAmountSchema = z.looseObject({
  amount: integerString,
  amountUsd: z.string().nullish(),
  // The amount less the slippage tolerance: what the order delivers at least.
  minimumAmount: integerString.optional(),
});
const quoteResponseSchema = z.looseObject({
  steps: z.array(
    z.looseObject({
      id: z.string(),
      requestId: z.string().optional(),
      depositAddress: z.string().optional(),
    }),
  ),
  details: z.looseObject({
    currencyIn: quoteAmountSchema,
    currencyOut: quoteAmountSchema,
    timeEstimate: z.number().nonnegative().optional(),
  }),
});
export type RelayQuoteResponse = z.infer<typeof quoteResponseSchema>;

// GET /intents/status/v3 (docs: references/api/get-intents-status-v3)
const statusResponseSchema = z.looseObject({
  status: z.string(),
  details: z.string().nullish(),
  inTxHashes: z.array(z.string()).optional(),
  txHashes: z.array(z.string()).optional(),
  updatedAt: z.number().optional(),
  originChainId: z.number().int().optional(),
  destinationChainId: z.number().int().optional(),
});
export type RelayStatusResponse = z.infer<typeof statusResponseSchema>;

// GET /currencies/token/price (docs: references/api/get-token-price): `price` is a number in
// v1 and a string in /v2, so accept both.
const priceResponseSchema = z.looseObject({ price: z.union([z.number(), z.string()]).nullish() });

// Relay's error body. /quote/v2 documents `errorCode`; older endpoints send `code`, the price
// endpoint `error`.
const errorBodySchema = z.looseObject({
  message: z.string().optional(),
  errorCode: z.string().optional(),
  code: z.string().optional(),
  error: z.string().optional(),
});

export interface RelayClient {
  getChains(): Promise<RelayChain[]>;
  getCurrencies(request: RelayCurrenciesRequest): Promise<RelayCurrency[]>;
  getQuote(request: RelayQuoteRequest): Promise<RelayQuoteResponse>;
  getStatus(requestId: string): Promise<RelayStatusResponse>;
  /** USD price as Relay reports it, or null when Relay has no price for the token. */
  getTokenPrice(chainId: number, address: string): Promise<number | string | null>;
}

export function createRelayClient(opts: RelayClientOptions): RelayClient {
  const baseUrl = opts.baseUrl.replace(/\/+$/, '');
  const doFetch = opts.fetch ?? globalThis.fetch;
  const timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const scrub = (text: string) => (opts.apiKey ? text.split(opts.apiKey).join('***') : text);

  interface Call {
    method: 'GET' | 'POST';
    path: string;
    body?: unknown;
  }

  const describeCall = (c: Call) => `${c.method} ${c.path.split('?')[0]}`;

  /** Sends the request; network failures and timeouts become BridgeUnavailableError. */
  async function send(c: Call): Promise<{ status: number; ok: boolean; text: string }> {
    await opts.quota?.(c.path.startsWith('/quote') ? 'relay:quote' : c.path.startsWith('/intents/status') ? 'relay:status' : 'relay:other');
    const headers: Record<string, string> = { accept: 'application/json' };
    if (c.body !== undefined) headers['content-type'] = 'application/json';
    if (opts.apiKey) headers['x-api-key'] = opts.apiKey;
    try {
      const res = await doFetch(`${baseUrl}${c.path}`, {
        method: c.method,
        headers,
        body: c.body === undefined ? undefined : JSON.stringify(c.body),
        signal: AbortSignal.timeout(timeoutMs),
      });
      return { status: res.status, ok: res.ok, text: await res.text() };
    } catch (err) {
      const reason =
        err instanceof Error && (err.name === 'TimeoutError' || err.name === 'AbortError') ? `no answer within ${timeoutMs} ms` : describeError(err);
      throw new BridgeUnavailableError(scrub(`relay unreachable (${describeCall(c)}): ${reason}`));
    }
  }

  function parse<T>(c: Call, text: string, schema: z.ZodType<T>): T {
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      throw new BridgeUnavailableError(scrub(`relay answered ${describeCall(c)} with a body that is not JSON`));
    }
    const parsed = schema.safeParse(json);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      const where = issue ? `${issue.path.join('.') || '(root)'}: ${issue.message}` : 'invalid shape';
      throw new BridgeUnavailableError(scrub(`unexpected response from relay (${describeCall(c)}): ${where}`));
    }
    return parsed.data;
  }

  async function call<T>(c: Call, schema: z.ZodType<T>): Promise<T> {
    const res = await send(c);
    if (!res.ok) throw httpError(describeCall(c), res.status, res.text, scrub);
    return parse(c, res.text, schema);
  }

  return {
    async getChains() {
      return (await call({ method: 'GET', path: '/chains' }, chainsResponseSchema)).chains;
    },
    async getCurrencies(request) {
      return call({ method: 'POST', path: '/currencies/v2', body: request }, currenciesResponseSchema);
    },
    async getQuote(request) {
      return call({ method: 'POST', path: '/quote/v2', body: request }, quoteResponseSchema);
    },
    async getStatus(requestId) {
      const query = new URLSearchParams({ requestId });
      return call({ method: 'GET', path: `/intents/status/v3?${query}` }, statusResponseSchema);
    },
    async getTokenPrice(chainId, address) {
      const c: Call = { method: 'GET', path: `/currencies/token/price?${new URLSearchParams({ address, chainId: String(chainId) })}` };
      const res = await send(c);
      // Relay answers 400 ({error}) for tokens it cannot price.
      if (res.status === 400 || res.status === 404) return null;
      if (!res.ok) throw httpError(describeCall(c), res.status, res.text, scrub);
      return parse(c, res.text, priceResponseSchema).price ?? null;
    },
  };
}

function httpError(what: string, status: number, body: string, scrub: (text: string) => string): Error {
  const parsed = errorBodySchema.safeParse(safeJson(body));
  const info = parsed.success ? parsed.data : {};
  // Scrub before truncating so a cut can never leave part of the key behind.
  const message = truncate(scrub(info.message ?? info.error ?? (body.trim() || `HTTP ${status}`)));
  const code = info.errorCode ?? info.code;
  const detail = code ? `${message} (${scrub(code)})` : message;

  if (status === 400 || status === 422) return new BridgeRouteError(`no route: ${detail}`);
  if (status === 429) return new BridgeUnavailableError(`relay rate limit hit (${what}): ${detail}`);
  if (status === 401 || status === 403) {
    return new BridgeUnavailableError(`relay refused the request (${what}, HTTP ${status}); check the API key: ${detail}`, false);
  }
  return new BridgeUnavailableError(`relay error (${what}, HTTP ${status}): ${detail}`);
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
