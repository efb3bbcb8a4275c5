import { isHex, type Hex } from 'viem';
import { z } from 'zod';
import { BridgeUnavailableError } from '../bridge.ts';
import { canonicalBps, FINALITY_THRESHOLD } from './fees.ts';
import type { AttestationStatus } from './types.ts';
import { describeError, truncate } from '../errorText.ts';
import { PrivateRouteError } from '../../errors.ts';

/**
 * A small typed client for Circle's Iris API (CCTP v2), the endpoints the adapter needs:
 *
 * - GET /v2/burn/USDC/fees/{sourceDomainId}/{destDomainId} → a JSON array of
 *   `{ finalityThreshold, minimumFee }`, minimumFee in basis points (number, possibly fractional
 *   such as 1.3; a string is accepted too). 1000 = Fast, 2000 = Standard.
 * - GET /v2/messages/{sourceDomainId}?transactionHash= → `{ messages: [{ message, eventNonce,
 *   attestation, status, cctpVersion, delayReason, decodedMessage }] }`; status is "complete" or
 *   "pending_confirmations", and attestation is "PENDING" until signed. 404 until Iris has indexed
 *   the burn.
 * - POST /v2/reattest/{nonce} → `{ message, nonce }`: signs the message again, with a fresh expirationBlock (a burn's
 *   message can be received only before that block of the destination chain).
 *
 * Errors: 429 → IrisRateLimitedError (Circle allows 35 requests/s and blocks a client that exceeds it
 * for 5 minutes: stop calling until retryAfterMs has passed). The client enforces that itself: after
 * a 429 every call fails fast with IrisRateLimitedError, without touching the network, until the
 * delay is over, so concurrent activities sharing the client cannot prolong the block. 5xx, network failures, timeouts and
 * malformed bodies → IrisUnavailableError (retryable); any other 4xx → IrisRequestError (our request
 * is wrong, retrying the same call cannot help).
 */

export interface IrisClientOptions {
  /** https://iris-api.circle.com (mainnet) or https://iris-api-sandbox.circle.com (testnet), or a local emulator. */
  baseUrl: string;
  fetch?: typeof fetch;
  /** Per-request timeout. Default 10 s. */
  timeoutMs?: number;
  /** Clock, for tests. */
  now?: () => number;
}

export interface IrisFeeTier {
  finalityThreshold: number;
  /** Basis points of the burned amount, as an exact decimal string ("1", "1.3", "0"). */
  minimumFeeBps: string;
}

/** A tier is null when Iris publishes no fee for that threshold on the route. */
export interface IrisFees {
  fast: IrisFeeTier | null;
  standard: IrisFeeTier | null;
}

export interface IrisClient {
  getFees(sourceDomain: number, destDomain: number): Promise<IrisFees>;
  /** One lookup of the burn's message; the first one when a transaction holds several. */
  getMessages(sourceDomain: number, txHash: Hex): Promise<AttestationStatus>;
  /** Asks Iris to sign the message of `nonce` again (a fresh expirationBlock); GET /v2/messages then serves it. */
  reattest(nonce: Hex): Promise<void>;
}

/** Iris answered 429. Nothing may be sent to Iris before `retryAfterMs` has passed. */
export class IrisRateLimitedError extends BridgeUnavailableError {
  override name = 'IrisRateLimitedError';
  constructor(
    message: string,
    readonly retryAfterMs: number,
  ) {
    super(message);
  }
}

/** Iris could not be reached, timed out, failed (5xx) or answered with a body we cannot read. Retryable. */
export class IrisUnavailableError extends BridgeUnavailableError {
  override name = 'IrisUnavailableError';
}

/** Iris rejected the request itself (4xx other than 404 and 429). Not retryable as is. */
export class IrisRequestError extends PrivateRouteError {
  override name = 'IrisRequestError';
  constructor(
    message: string,
    readonly status: number,
  ) {
    super(message);
  }
}

const DEFAULT_TIMEOUT_MS = 10_000;
/** Circle's block after a rate-limit breach lasts 5 minutes; used when 429 carries no Retry-After. */
export const IRIS_RATE_LIMIT_BLOCK_MS = 5 * 60_000;

const feeEntrySchema = z.looseObject({
  finalityThreshold: z.number().int(),
  minimumFee: z.union([z.number().nonnegative(), z.string()]),
});
// The documented body is a bare array; tolerate a `{ data: [...] }` envelope as well.
const feesSchema = z.union([z.array(feeEntrySchema), z.looseObject({ data: z.array(feeEntrySchema) }).transform((b) => b.data)]);

const messageSchema = z.looseObject({
  message: z.string().nullish(),
  attestation: z.string().nullish(),
  status: z.string().nullish(),
  eventNonce: z.union([z.string(), z.number()]).nullish(),
  delayReason: z.string().nullish(),
});
const messagesSchema = z.looseObject({ messages: z.array(messageSchema) });

export function createIrisClient(opts: IrisClientOptions): IrisClient {
  const baseUrl = opts.baseUrl.replace(/\/+$/, '');
  const doFetch = opts.fetch ?? globalThis.fetch;
  const timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const now = opts.now ?? Date.now;
  let blockedUntil = 0;

  async function get(path: string, what: string, method: 'GET' | 'POST' = 'GET'): Promise<{ status: number; text: string; headers: Headers }> {
    const wait = blockedUntil - now();
    if (wait > 0) throw new IrisRateLimitedError(`iris rate limit in force (${what} not sent); retry after ${Math.ceil(wait / 1000)} s`, wait);
    let res: Response;
    try {
      res = await doFetch(`${baseUrl}${path}`, { method, headers: { accept: 'application/json' }, signal: AbortSignal.timeout(timeoutMs) });
      return { status: res.status, text: await res.text(), headers: res.headers };
    } catch (err) {
      const reason =
        err instanceof Error && (err.name === 'TimeoutError' || err.name === 'AbortError') ? `no answer within ${timeoutMs} ms` : describeError(err);
      throw new IrisUnavailableError(`iris unreachable (${what}): ${reason}`);
    }
  }

  function fail(what: string, res: { status: number; text: string; headers: Headers }): never {
    const detail = truncate(res.text.trim() || `HTTP ${res.status}`);
    if (res.status === 429) {
      const retryAfterMs = parseRetryAfter(res.headers.get('retry-after'), now()) ?? IRIS_RATE_LIMIT_BLOCK_MS;
      blockedUntil = Math.max(blockedUntil, now() + retryAfterMs);
      throw new IrisRateLimitedError(`iris rate limit hit (${what}); retry after ${Math.ceil(retryAfterMs / 1000)} s`, retryAfterMs);
    }
    if (res.status >= 400 && res.status < 500) throw new IrisRequestError(`iris rejected ${what} (HTTP ${res.status}): ${detail}`, res.status);
    throw new IrisUnavailableError(`iris error (${what}, HTTP ${res.status}): ${detail}`);
  }

  function parse<T>(what: string, text: string, schema: z.ZodType<T>): T {
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      throw new IrisUnavailableError(`iris answered ${what} with a body that is not JSON`);
    }
    const parsed = schema.safeParse(json);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      const where = issue ? `${issue.path.join('.') || '(root)'}: ${issue.message}` : 'invalid shape';
      throw new IrisUnavailableError(`unexpected response from iris (${what}): ${where}`);
    }
    return parsed.data;
  }

  return {
    async getFees(sourceDomain, destDomain) {
      const what = `GET /v2/burn/USDC/fees/${sourceDomain}/${destDomain}`;
      const res = await get(`/v2/burn/USDC/fees/${domain(sourceDomain)}/${domain(destDomain)}`, what);
      if (res.status !== 200) fail(what, res);
      const entries = parse(what, res.text, feesSchema);
      const tier = (threshold: number): IrisFeeTier | null => {
        const entry = entries.find((e) => e.finalityThreshold === threshold);
        if (!entry) return null;
        try {
          return { finalityThreshold: threshold, minimumFeeBps: canonicalBps(entry.minimumFee) };
        } catch {
          throw new IrisUnavailableError(`unexpected response from iris (${what}): minimumFee ${String(entry.minimumFee)}`);
        }
      };
      return { fast: tier(FINALITY_THRESHOLD.fast), standard: tier(FINALITY_THRESHOLD.standard) };
    },

    async getMessages(sourceDomain, txHash) {
      if (!isHex(txHash, { strict: true }) || txHash.length !== 66) throw new Error(`not a transaction hash: ${txHash}`);
      const what = `GET /v2/messages/${sourceDomain}`;
      const res = await get(`/v2/messages/${domain(sourceDomain)}?${new URLSearchParams({ transactionHash: txHash })}`, what);
      if (res.status === 404) return { state: 'not_found' };
      if (res.status !== 200) fail(what, res);
      const first = parse(what, res.text, messagesSchema).messages[0];
      if (!first) return { state: 'not_found' };

      const status: AttestationStatus = { state: 'pending' };
      if (first.eventNonce !== undefined && first.eventNonce !== null) status.eventNonce = String(first.eventNonce);
      if (first.delayReason) status.delayReason = first.delayReason;
      // "PENDING" (or null) attestation and "pending_confirmations" status both mean not signed yet.
      if (first.status === 'complete' && isFilledHex(first.attestation) && isFilledHex(first.message)) {
        status.state = 'complete';
        status.message = first.message;
        status.attestation = first.attestation;
      }
      return status;
    },

    async reattest(nonce) {
      if (!isHex(nonce, { strict: true }) || nonce.length !== 66) throw new Error(`not a CCTP v2 nonce: ${nonce}`);
      const what = `POST /v2/reattest/${nonce}`;
      const res = await get(`/v2/reattest/${nonce}`, what, 'POST');
      if (res.status !== 200) fail(what, res);
    },
  };
}

function domain(value: number): string {
  if (!Number.isInteger(value) || value < 0) throw new Error(`not a CCTP domain: ${value}`);
  return String(value);
}

function isFilledHex(value: string | null | undefined): value is Hex {
  return typeof value === 'string' && value.length > 2 && isHex(value, { strict: true });
}

/** Retry-After is either delay-seconds or an HTTP date (RFC 9110 §10.2.3). */
export function parseRetryAfter(header: string | null, now = Date.now()): number | null {
  if (!header) return null;
  const value = header.trim();
  if (/^\d+$/.test(value)) return Number(value) * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? null : Math.max(0, date - now);
}
