/**
 * A small async cache: each key's value is loaded once and reused for `ttlMs` after it resolves;
 * concurrent callers of a key that is loading share the one load (single flight). A failed load is
 * not kept: the next caller loads again. Used for provider catalogues, fees, prices and quotes.
 */
export interface TtlCacheOptions {
  /** How long a loaded value is reused, from the moment it resolved. 0 = only concurrent callers share. */
  ttlMs: number;
  /** Keys kept at most; beyond that, expired entries and then the oldest are dropped. Default 1000. */
  maxEntries?: number;
  /** Clock, for tests. */
  now?: () => number;
}

export interface TtlCache<V> {
  get(key: string, load: () => Promise<V>): Promise<V>;
  /** Keys held, loading ones included. */
  readonly size: number;
  clear(): void;
}

interface Entry<V> {
  promise: Promise<V>;
  /** Infinity while loading. */
  expiresAt: number;
}

export function createTtlCache<V>(opts: TtlCacheOptions): TtlCache<V> {
  if (!Number.isFinite(opts.ttlMs) || opts.ttlMs < 0) throw new Error(`cache ttl must be a non-negative number of ms, got ${opts.ttlMs}`);
  const now = opts.now ?? Date.now;
  const maxEntries = opts.maxEntries ?? 1000;
  const entries = new Map<string, Entry<V>>();

  function makeRoom() {
    if (entries.size < maxEntries) return;
    const t = now();
    for (const [key, entry] of entries) if (entry.expiresAt <= t) entries.delete(key);
    // Map iteration is insertion order: the first keys are the oldest.
    for (const key of entries.keys()) {
      if (entries.size < maxEntries) break;
      entries.delete(key);
    }
  }

  return {
    get(key, load) {
      const found = entries.get(key);
      if (found && found.expiresAt > now()) return found.promise;
      if (found) entries.delete(key);
      makeRoom();
      const entry: Entry<V> = { promise: Promise.resolve().then(load), expiresAt: Number.POSITIVE_INFINITY };
      entries.set(key, entry);
      entry.promise.then(
        () => {
          entry.expiresAt = now() + opts.ttlMs;
          if (opts.ttlMs === 0 && entries.get(key) === entry) entries.delete(key);
        },
        () => {
          if (entries.get(key) === entry) entries.delete(key);
        },
      );
      return entry.promise;
    },
    get size() {
      return entries.size;
    },
    clear: () => entries.clear(),
  };
}

/** One value behind a TTL and single flight: `memoize(60_000, () => provider.listChains())`. */
export function memoize<T>(ttlMs: number, load: () => Promise<T>, now?: () => number): () => Promise<T> {
  const cache = createTtlCache<T>({ ttlMs, now });
  return () => cache.get('', load);
}
