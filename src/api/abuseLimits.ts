/**
 * Abuse limits on the two routes that cost the service: quote (bridge-provider calls on the service's API key) and
 * create (a workflow and an account index each). Per client, where a client is the partner behind a valid
 * `X-Api-Key`, else the caller's IP (an IPv6 caller's /64, which one host usually holds whole):
 *
 * - quotes and creates together per minute (RATE_LIMIT_PER_MINUTE, or the partner's own), and with them a key's reads
 *   of its own transfers (the listing, a statusToken's reissue),
 * - creates per minute (RATE_LIMIT_CREATES_PER_MINUTE, or the partner's own),
 * - transfers awaiting their deposit (MAX_UNFUNDED_TRANSFERS_PER_CLIENT, or the partner's own),
 * - reads by routeId without a statusToken, GET and the event stream (RATE_LIMIT_PUBLIC_READS_PER_MINUTE): whoever
 *   holds only a routeId learns nothing faster by asking more often (the public view changes once an exit epoch), and
 *   guessing routeIds costs a client a minute per few dozen tries.
 *
 * Counters live in Postgres in fixed one-minute windows, so every API instance counts against the same numbers.
 * Neither an IP nor a key is stored: buckets and transfers.client_hash hold an HMAC of the client.
 * The middleware is hono-rate-limiter's; this file gives it a Postgres store and the service's 429 envelope.
 */
import { createHmac, randomBytes } from 'node:crypto';
import { getConnInfo } from '@hono/node-server/conninfo';
import { and, count, eq, min, sql } from 'drizzle-orm';
import type { Context, MiddlewareHandler } from 'hono';
import { every } from 'hono/combine';
import { rateLimiter, type ClientRateLimitInfo, type RateLimitInfo, type Store } from 'hono-rate-limiter';
import type { Config } from '../config.ts';
import type { Database } from '../db/client.ts';
import { serviceSecrets, transfers } from '../db/schema.ts';
import { createProxyHeaderWatch } from './proxyHeaderWatch.ts';
import type { Logger } from '../logger.ts';
import { findPartner, type Partner } from '../partners/apiKeys.ts';
import type { ErrorCode } from './errorCodes.ts';

export interface AbuseLimitSettings {
  /** 0 turns every limit off. */
  requestsPerMinute: number;
  /** 0: no separate create limit. */
  createsPerMinute: number;
  /** 0: no cap. */
  maxUnfundedPerClient: number;
  /** 0: no limit on reads without a statusToken. */
  publicReadsPerMinute: number;
  /** Proxies in front of the API that append the address they saw to X-Forwarded-For. */
  trustProxyHops: number;
}

export function abuseLimitSettings(config: Config): AbuseLimitSettings {
  return {
    requestsPerMinute: config.RATE_LIMIT_PER_MINUTE,
    createsPerMinute: config.RATE_LIMIT_CREATES_PER_MINUTE,
    maxUnfundedPerClient: config.MAX_UNFUNDED_TRANSFERS_PER_CLIENT,
    publicReadsPerMinute: config.RATE_LIMIT_PUBLIC_READS_PER_MINUTE,
    trustProxyHops: config.TRUST_PROXY_HOPS,
  };
}

/** Who a request counts against. */
export interface AbuseClient {
  /** HMAC of the client: the rate-limit buckets' suffix and transfers.client_hash. */
  hash: string;
  partner: Partner | null;
  /** HMAC of one of the partner's own users (its userReference), with the same key: that user's client in an anonymity set. */
  userHash: (reference: string) => string;
}

declare module 'hono' {
  interface ContextVariableMap {
    abuseClient?: AbuseClient;
    /** The partner behind a valid X-Api-Key (set whether or not the limits are on); the Idempotency-Key's scope. */
    partner?: Partner;
    /** Set by hono-rate-limiter (its requestPropertyName). */
    rateLimit?: RateLimitInfo;
    createRateLimit?: RateLimitInfo;
    publicReadRateLimit?: RateLimitInfo;
  }
}

export interface AbuseLimits {
  /** Runs before POST /api/private-route/quote. */
  quote: MiddlewareHandler;
  /** Runs before POST /api/private-route; the handler passes `clientHashOf(c)` to the transfer it creates. */
  create: MiddlewareHandler;
  /** Runs before GET /api/private-route/{routeId} and its event stream; counts only reads without a statusToken. */
  publicRead: MiddlewareHandler;
  /** Runs before the endpoints of a key's own transfers (src/api/routes/partnerTransfers.ts): names the partner, counts as a request. */
  partnerRead: MiddlewareHandler;
}

/** The client hash of this request (computed whether or not the limits are on). */
export const clientHashOf = (c: Context): string | undefined => c.get('abuseClient')?.hash;

const WINDOW_MS = 60_000;
const CLIENT_HASH_SECRET = 'client_hash_key';

/**
 * The HMAC key of client hashes: CLIENT_HASH_KEY when configured, else a random one the first API instance
 * writes into service_secrets (every later instance reads the same).
 */
export async function clientHashKey(db: Database, configured: string | undefined): Promise<Buffer> {
  if (configured) return Buffer.from(configured);
  await db
    .insert(serviceSecrets)
    .values({ name: CLIENT_HASH_SECRET, value: randomBytes(32).toString('base64') })
    .onConflictDoNothing();
  const [row] = await db.select({ value: serviceSecrets.value }).from(serviceSecrets).where(eq(serviceSecrets.name, CLIENT_HASH_SECRET));
  if (!row) throw new Error('service_secrets holds no client_hash_key after inserting it');
  return Buffer.from(row.value, 'base64');
}

/**
 * The client's address: the socket's, or with `hops` trusted proxies the entry they appended to X-Forwarded-For
 * (counted from the right; entries further left are whatever the client claimed).
 */
export function clientAddress(c: Context, hops: number): string | undefined {
  let socket: string | undefined;
  try {
    socket = getConnInfo(c).remote.address;
  } catch {
    socket = undefined; // no Node socket (in-process app.request() without bindings)
  }
  if (hops === 0) return socket;
  const forwarded = (c.req.header('x-forwarded-for') ?? '')
    .split(',')
    .map((a) => a.trim())
    .filter(Boolean);
  const chain = socket === undefined ? forwarded : [...forwarded, socket];
  return chain[Math.max(0, chain.length - 1 - hops)];
}

/** IPv4 as is (IPv4-mapped IPv6 included); IPv6 cut to its /64, the block one subscriber usually holds. */
export function addressBucket(address: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return mapped[1]!;
  if (!address.includes(':')) return address;
  const [head = '', tail] = address.split('%')[0]!.toLowerCase().split('::') as [string, string | undefined];
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const groups = tail === undefined ? left : [...left, ...Array(Math.max(0, 8 - left.length - right.length)).fill('0'), ...right];
  return `${groups
    .slice(0, 4)
    .map((g) => g.replace(/^0+(?=.)/, ''))
    .join(':')}::/64`;
}

/**
 * hono-rate-limiter's store over rate_limit_counters: one row per bucket and window, counted with an upsert so
 * concurrent instances never lose a hit. Windows start on the database's clock, the same for every instance.
 * Windows older than two minutes are deleted, by each instance at most once a minute.
 */
export class PostgresRateLimitStore implements Store {
  readonly localKeys = false;
  #windowSeconds = WINDOW_MS / 1000;
  #lastPrune = 0;

  constructor(
    private readonly db: Database,
    private readonly logger: Logger,
  ) {}

  init(options: { windowMs: number }): void {
    this.#windowSeconds = Math.ceil(options.windowMs / 1000);
  }

  #windowStart() {
    return sql`to_timestamp(floor(extract(epoch from now()) / ${this.#windowSeconds}) * ${this.#windowSeconds})`;
  }

  async increment(key: string): Promise<ClientRateLimitInfo> {
    const [row] = await this.db.execute<{ hits: number; window_epoch: number }>(sql`
      insert into rate_limit_counters (bucket, window_start, hits) values (${key}, ${this.#windowStart()}, 1)
      on conflict (bucket, window_start) do update set hits = rate_limit_counters.hits + 1
      returning hits, extract(epoch from window_start)::float8 as window_epoch`);
    if (!row) throw new Error('rate_limit_counters upsert returned no row');
    this.#pruneNowAndThen();
    return { totalHits: Number(row.hits), resetTime: new Date((Number(row.window_epoch) + this.#windowSeconds) * 1000) };
  }

  async decrement(key: string): Promise<void> {
    await this.db.execute(sql`update rate_limit_counters set hits = greatest(hits - 1, 0) where bucket = ${key} and window_start = ${this.#windowStart()}`);
  }

  async resetKey(key: string): Promise<void> {
    await this.db.execute(sql`delete from rate_limit_counters where bucket = ${key}`);
  }

  #pruneNowAndThen(): void {
    if (Date.now() - this.#lastPrune < WINDOW_MS) return;
    this.#lastPrune = Date.now();
    this.db
      .execute(sql`delete from rate_limit_counters where window_start < now() - make_interval(secs => ${2 * this.#windowSeconds})`)
      .catch((error: unknown) =>
        this.logger.warn('could not delete old rate-limit windows', { error: error instanceof Error ? error.message : String(error) }),
      );
  }
}

const retryAfterSeconds = (until: Date | undefined) => Math.max(1, Math.ceil(((until?.getTime() ?? Date.now() + WINDOW_MS) - Date.now()) / 1000));

function tooManyRequests(c: Context, retryAfter: number, what: string, code: ErrorCode = 'RATE_LIMITED') {
  c.header('Retry-After', String(retryAfter));
  return c.json({ success: false, error: `${what}; retry in ${retryAfter} s (Retry-After)`, code }, 429);
}

const whose = (client: AbuseClient) => (client.partner ? `this API key (${client.partner.name})` : 'this client address');

export interface AbuseLimitDeps {
  db: Database;
  settings: AbuseLimitSettings;
  /** CLIENT_HASH_KEY; unset: generated into the database once. */
  hashKey?: string;
  logger: Logger;
}

export async function createAbuseLimits(deps: AbuseLimitDeps): Promise<AbuseLimits> {
  const { db, settings } = deps;
  const enabled = settings.requestsPerMinute > 0;
  // The client hash is also what keeps one client from filling another's anonymity set (src/privacy/anonymitySet.ts),
  // so it is computed with the limits off too.
  const key = await clientHashKey(db, deps.hashKey);
  const hmac = (text: string) => createHmac('sha256', key).update(text).digest('base64url').slice(0, 32);
  const proxyHeaders = createProxyHeaderWatch(deps.logger);

  // A key that is sent must be valid even with the limits off: a partner learns of a revoked key at once.
  const identify: MiddlewareHandler = async (c, next) => {
    const apiKey = c.req.header('x-api-key');
    let partner: Partner | null = null;
    if (apiKey !== undefined) {
      partner = await findPartner(db, apiKey.trim());
      if (!partner) {
        return c.json(
          {
            success: false,
            error: 'unknown or revoked API key (X-Api-Key): ask the operator for a valid key, or send none to be limited by address',
            code: 'INVALID_API_KEY' satisfies ErrorCode,
          },
          401,
        );
      }
      c.set('partner', partner);
    }
    const address = clientAddress(c, settings.trustProxyHops);
    if (settings.trustProxyHops === 0) proxyHeaders.observe(c.req.header('x-forwarded-for'));
    c.set('abuseClient', {
      partner,
      hash: hmac(partner ? `partner:${partner.id}` : `ip:${address === undefined ? 'unknown' : addressBucket(address)}`),
      userHash: (reference) => hmac(`partner:${partner?.id ?? 'none'}|user:${reference}`),
    });
    await next();
  };
  if (!enabled) return { quote: identify, create: identify, publicRead: identify, partnerRead: identify };

  const client = (c: Context) => c.get('abuseClient')!;
  const store = new PostgresRateLimitStore(db, deps.logger);

  const requests = rateLimiter({
    windowMs: WINDOW_MS,
    store,
    standardHeaders: 'draft-6',
    keyGenerator: (c) => `request:${client(c).hash}`,
    limit: (c) => client(c).partner?.limits.requestsPerMinute ?? settings.requestsPerMinute,
    handler: (c) => {
      const info = c.get('rateLimit')!;
      return tooManyRequests(
        c,
        retryAfterSeconds(info.resetTime),
        `rate limit reached: at most ${info.limit} quotes and creates per minute for ${whose(client(c))}`,
      );
    },
  });

  const createsLimit = (c: Context) => client(c).partner?.limits.createsPerMinute ?? settings.createsPerMinute;
  const creates = rateLimiter({
    windowMs: WINDOW_MS,
    store,
    // The request limiter's RateLimit-* headers stay; this one only answers when it refuses.
    standardHeaders: false,
    requestPropertyName: 'createRateLimit',
    requestStorePropertyName: 'createRateLimitStore',
    keyGenerator: (c) => `create:${client(c).hash}`,
    limit: createsLimit,
    skip: (c) => createsLimit(c) === 0,
    handler: (c) => {
      const info = c.get('createRateLimit')!;
      return tooManyRequests(
        c,
        retryAfterSeconds(info.resetTime),
        `create limit reached: at most ${info.limit} transfers created per minute for ${whose(client(c))}`,
      );
    },
  });

  // Counts before creating, so creates racing each other may pass the cap by the few in flight.
  const unfundedCap: MiddlewareHandler = async (c, next) => {
    const { hash, partner } = client(c);
    const cap = partner?.limits.maxUnfunded ?? settings.maxUnfundedPerClient;
    if (cap > 0) {
      const [row] = await db
        .select({ unfunded: count(), firstDeadline: min(transfers.depositDeadline) })
        .from(transfers)
        .where(and(eq(transfers.clientHash, hash), eq(transfers.status, 'AWAITING_DEPOSIT')));
      if (row && row.unfunded >= cap) {
        return tooManyRequests(
          c,
          retryAfterSeconds(row.firstDeadline ?? undefined),
          `too many unfunded transfers: ${whose(client(c))} has ${row.unfunded} awaiting their deposit (at most ${cap}); fund them or wait until one expires`,
          'TOO_MANY_UNFUNDED_TRANSFERS',
        );
      }
    }
    await next();
  };

  // A read that presents a statusToken (right or wrong: a wrong one is a 401 anyway) is the holder's, and not counted.
  const presentsToken = (c: Context) => c.req.header('x-status-token') !== undefined || c.req.header('authorization') !== undefined;
  const publicReads = rateLimiter({
    windowMs: WINDOW_MS,
    store,
    standardHeaders: false,
    requestPropertyName: 'publicReadRateLimit',
    requestStorePropertyName: 'publicReadRateLimitStore',
    keyGenerator: (c) => `public-read:${client(c).hash}`,
    limit: settings.publicReadsPerMinute,
    skip: (c) => settings.publicReadsPerMinute === 0 || presentsToken(c),
    handler: (c) =>
      tooManyRequests(
        c,
        retryAfterSeconds(c.get('publicReadRateLimit')?.resetTime),
        `rate limit reached: at most ${settings.publicReadsPerMinute} reads without a statusToken per minute for ${whose(client(c))}; send the statusToken to read without this limit`,
      ),
  });

  return {
    quote: every(identify, requests),
    create: every(identify, requests, creates, unfundedCap),
    publicRead: every(identify, publicReads),
    // A key's listing and reissues count with its quotes and creates: one budget of requests per key.
    partnerRead: every(identify, requests),
  };
}
