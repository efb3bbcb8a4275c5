import { z } from 'zod';
import { describeError, truncate } from '../errorText.ts';
import { PrivateRouteError } from '../../errors.ts';

/**
 * A client of the 0xbow ASP's public HTTP API (api.0xbow.io), the three read endpoints a withdrawal needs,
 * all per pool: `{base}/{chainId}/public/<endpoint>` with the pool's SCOPE, decimal, in `X-Pool-Scope`.
 *
 * - mt-roots → `{ mtRoot, createdAt, onchainMtRoot }`: mtRoot is the ASP's newest root, onchainMtRoot the one
 *   `Entrypoint.latestRoot()` holds (null before the first). A withdrawal proves against onchainMtRoot
 *   exactly; mt-leaves describes mtRoot, so wait until the two are equal.
 * - mt-leaves → `{ aspLeaves, stateTreeLeaves }`: the approved deposit labels and the pool's commitments,
 *   each in tree insertion order. A deposit is approved iff its label is in aspLeaves.
 * - deposits-by-label (labels in `X-Labels`, comma-joined) → `[{ label, reviewStatus, ... }]`, which tells a
 *   declined deposit from a pending one; aspLeaves cannot.
 *
 * Every big number travels as a decimal string. Errors: AspUnavailableError for what waiting cures (network
 * failure, timeout, 5xx, 429 and 403, the ASP's unpublished rate limits); AspResponseError for a request the
 * ASP rejects (other 4xx, e.g. 400 without a scope, 404 for an unknown chain or scope) or a body we cannot read.
 */

export const DEFAULT_ASP_URL = 'https://api.0xbow.io';

const DEFAULT_TIMEOUT_MS = 10_000;
/** The API documents no cap on labels per request; this keeps X-Labels near 4 KB, within any server's header limit. */
const LABELS_PER_REQUEST = 50;

export interface AspClientOptions {
  /** DEFAULT_ASP_URL for production chains, https://dw.0xbow.io for testnets, or a local emulator. */
  baseUrl: string;
  chainId: number;
  /** The pool's SCOPE(). */
  scope: bigint;
  /** Per request. Default 10 s. */
  timeoutMs?: number;
}

export type AspReviewStatus = 'pending' | 'approved' | 'declined' | 'exited' | 'spent' | 'poi_required';

export interface AspRoots {
  mtRoot: bigint;
  /** The root on chain (Entrypoint.latestRoot()); null while the pool has none. */
  onchainMtRoot: bigint | null;
  /** As the ASP sends it: the sources disagree between an ISO string and a number. */
  createdAt: string | number;
}

export interface AspLeaves {
  /** Approved deposit labels. */
  aspLeaves: bigint[];
  /** Every commitment of the pool's state tree. */
  stateTreeLeaves: bigint[];
}

export interface AspClient {
  roots(): Promise<AspRoots>;
  leaves(): Promise<AspLeaves>;
  /** label → reviewStatus (an AspReviewStatus; unknown values kept as sent); labels the ASP does not know are absent. */
  reviewStatuses(labels: bigint[]): Promise<Map<bigint, string>>;
}

export class AspError extends PrivateRouteError {
  override name = 'AspError';
  constructor(
    message: string,
    /** The HTTP status, when the ASP answered. */
    readonly status?: number,
  ) {
    super(message);
  }
}

/** The ASP could not be reached, timed out, failed (5xx) or throttled us (429, 403): back off and retry. */
export class AspUnavailableError extends AspError {
  override name = 'AspUnavailableError';
}

/** The ASP rejected the request (4xx other than 429 and 403) or answered with a body we cannot read. */
export class AspResponseError extends AspError {
  override name = 'AspResponseError';
}

const decimal = z
  .string()
  .regex(/^[0-9]+$/, 'expected a decimal integer string')
  .transform((text) => BigInt(text));

const rootsSchema = z.looseObject({
  mtRoot: decimal,
  onchainMtRoot: decimal.nullish().transform((root) => root ?? null),
  createdAt: z.union([z.string(), z.number()]),
});

const leavesSchema = z.looseObject({ aspLeaves: z.array(decimal), stateTreeLeaves: z.array(decimal) });

const depositsSchema = z.array(z.looseObject({ label: decimal, reviewStatus: z.string() }));

export function createAspClient(opts: AspClientOptions): AspClient {
  const baseUrl = opts.baseUrl.replace(/\/+$/, '');
  const origin = originOf(baseUrl);
  const timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  if (!Number.isInteger(opts.chainId) || opts.chainId <= 0) throw new Error(`not a chain id: ${opts.chainId}`);
  if (opts.scope < 0n) throw new Error(`not a pool scope: ${opts.scope}`);
  const scope = opts.scope.toString();
  const asp = `ASP ${origin}`;

  async function get<T>(endpoint: string, schema: z.ZodType<T>, headers: Record<string, string> = {}): Promise<T> {
    const what = `${endpoint} for chain ${opts.chainId}, pool scope ${scope}`;
    let res: Response;
    let text: string;
    try {
      res = await fetch(`${baseUrl}/${opts.chainId}/public/${endpoint}`, {
        headers: { accept: 'application/json', 'X-Pool-Scope': scope, ...headers },
        signal: AbortSignal.timeout(timeoutMs),
      });
      text = await res.text();
    } catch (err) {
      const reason = isTimeout(err) ? `no answer within ${timeoutMs} ms` : describeError(err).replaceAll(baseUrl, origin);
      throw new AspUnavailableError(`${asp} unreachable for ${what}: ${reason}; retry later`);
    }
    if (!res.ok) throw httpError(asp, what, res.status, text);
    return parse(asp, what, text, schema);
  }

  return {
    roots: () => get('mt-roots', rootsSchema),
    leaves: () => get('mt-leaves', leavesSchema),
    async reviewStatuses(labels) {
      const statuses = new Map<bigint, string>();
      const unique = [...new Set(labels)];
      for (let i = 0; i < unique.length; i += LABELS_PER_REQUEST) {
        const chunk = unique.slice(i, i + LABELS_PER_REQUEST);
        const deposits = await get('deposits-by-label', depositsSchema, { 'X-Labels': chunk.join(',') });
        for (const d of deposits) statuses.set(d.label, d.reviewStatus);
      }
      return statuses;
    },
  };
}

function httpError(asp: string, what: string, status: number, body: string): AspError {
  const said = errorDetail(body);
  const detail = said ? `HTTP ${status}: ${said}` : `HTTP ${status}`;
  if (status === 429 || status === 403) return new AspUnavailableError(`${asp} throttled ${what} (${detail}); back off and retry`, status);
  if (status >= 500) return new AspUnavailableError(`${asp} failed ${what} (${detail}); retry later`, status);
  const advice =
    status === 404
      ? 'check that this ASP serves the chain and that the scope is the pool’s SCOPE()'
      : 'the request needs fixing, retrying it unchanged will not help';
  return new AspResponseError(`${asp} rejected ${what} (${detail}); ${advice}`, status);
}

function parse<T>(asp: string, what: string, text: string, schema: z.ZodType<T>): T {
  const advice = 'check that the base URL points at a 0xbow ASP API';
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new AspResponseError(`${asp} answered ${what} with a body that is not JSON; ${advice}`);
  }
  const parsed = schema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue ? `${issue.path.join('.') || '(root)'}: ${issue.message}` : 'invalid shape';
    throw new AspResponseError(`${asp} answered ${what} in an unexpected shape (${where}); ${advice}`);
  }
  return parsed.data;
}

/** The `error` or `message` of a JSON error body, else the body itself, shortened. */
function errorDetail(body: string): string | undefined {
  try {
    const json = JSON.parse(body) as { error?: unknown; message?: unknown };
    const text = [json.message, json.error].find((v) => typeof v === 'string' && v.length > 0);
    if (typeof text === 'string') return truncate(text, 200);
  } catch {
    // not JSON: fall back to the raw text
  }
  return body.trim() ? truncate(body.trim(), 200) : undefined;
}

function originOf(baseUrl: string): string {
  try {
    return new URL(baseUrl).origin;
  } catch {
    // The URL itself stays out of the message: a base URL may carry a key in its path.
    throw new Error('the ASP base URL is not a valid absolute URL');
  }
}

function isTimeout(err: unknown): boolean {
  return err instanceof Error && (err.name === 'TimeoutError' || err.name === 'AbortError');
}
