/**
 * A provider's request quota shared by every replica: a token bucket per endpoint class in Postgres
 * (provider_quotas), taken with one atomic upsert, so two APIs and three workers together stay inside what the
 * provider allows one key (or one address) instead of each spending it whole. A call that finds the bucket empty waits
 * for its refill, up to `maxWaitMs`, then fails as the provider being unavailable (transient: a step retries it, a
 * quote answers BRIDGE_UNAVAILABLE, "try again shortly").
 */
import { sql } from 'drizzle-orm';
import type { Database } from '../db/client.ts';
import { BridgeUnavailableError } from './bridge.ts';

/** Takes one request from a bucket, waiting for it if need be. */
export type TakeQuota = (bucket: string) => Promise<void>;

export interface QuotaLimit {
  /** Requests a minute the provider allows this bucket (shared by all replicas). */
  perMinute: number;
}

export interface SharedQuotaOptions {
  db: Database;
  /** Limits by bucket name; a bucket not named here is not limited. */
  limits: Record<string, QuotaLimit>;
  /** The longest a call waits for a token before it fails as unavailable (default 2 s: a quote must stay quick). */
  maxWaitMs?: number;
  sleep?: (ms: number) => Promise<void>;
}

const MILLI = 1000n;
/** A bucket holds ten seconds of its quota: a burst never spends the whole minute at once. */
const BURST_SECONDS = 10;

/** Quota exhausted for longer than the caller may wait. */
export class QuotaExhaustedError extends BridgeUnavailableError {
  override name = 'QuotaExhaustedError';
  constructor(
    message: string,
    readonly retryAfterMs: number,
  ) {
    super(message, true);
  }
}

export function createSharedQuota(opts: SharedQuotaOptions): TakeQuota {
  const maxWaitMs = opts.maxWaitMs ?? 2000;
  const sleep = opts.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));

  /** One token if the bucket has one (true), or none taken (false). */
  async function tryTake(bucket: string, limit: QuotaLimit): Promise<boolean> {
    const capacity = BigInt(Math.max(1, Math.round((limit.perMinute * BURST_SECONDS) / 60))) * MILLI;
    const milliPerSecond = Math.round((limit.perMinute * 1000) / 60);
    // Refill by the time since the last take, capped at the capacity; take one only when a whole one is there.
    const refilled = sql`least(${capacity}::bigint, provider_quotas.milli_tokens + floor(extract(epoch from (now() - provider_quotas.refilled_at)) * ${milliPerSecond})::bigint)`;
    const rows = await opts.db.execute<{ milli_tokens: string }>(sql`
      insert into provider_quotas (bucket, milli_tokens, refilled_at) values (${bucket}, ${capacity - MILLI}, now())
      on conflict (bucket) do update set milli_tokens = ${refilled} - ${MILLI}, refilled_at = now()
      where ${refilled} >= ${MILLI}
      returning milli_tokens`);
    return rows.length > 0;
  }

  return async (bucket) => {
    const limit = opts.limits[bucket];
    if (!limit || limit.perMinute <= 0) return;
    const oneTokenMs = Math.ceil(60_000 / limit.perMinute);
    const deadline = Date.now() + maxWaitMs;
    for (;;) {
      if (await tryTake(bucket, limit)) return;
      const left = deadline - Date.now();
      if (left <= 0)
        throw new QuotaExhaustedError(
          `the ${bucket} quota (${limit.perMinute} requests a minute, shared by every replica) is spent for now; retry in ${Math.ceil(oneTokenMs / 1000)} s`,
          oneTokenMs,
        );
      // Replicas waiting on one bucket spread out rather than all asking again at the same instant.
      await sleep(Math.min(left, Math.ceil(oneTokenMs * (0.5 + Math.random()))));
    }
  };
}

/**
 * Relay's published limits (docs.relay.link, "Rate Limits and API keys"): without a key /quote 50 a minute and the
 * other endpoints 200; with a key /quote, /requests and the status endpoints 10 a second, the others 200 a minute.
 */
export function relayQuotaLimits(hasApiKey: boolean): Record<string, QuotaLimit> {
  return hasApiKey
    ? { 'relay:quote': { perMinute: 600 }, 'relay:status': { perMinute: 600 }, 'relay:other': { perMinute: 200 } }
    : { 'relay:quote': { perMinute: 50 }, 'relay:status': { perMinute: 200 }, 'relay:other': { perMinute: 200 } };
}
