import { createCipheriv, createDecipheriv, createHash, createHmac, hkdfSync, randomBytes, timingSafeEqual } from 'node:crypto';
import { and, eq, lte, sql } from 'drizzle-orm';
import type { Database } from '../db/client.ts';
import { idempotencyKeys } from '../db/schema.ts';
import { PrivateRouteError } from '../errors.ts';

/**
 * Idempotency-Key of POST /api/private-route (docs/api.md): a retried create with the same key and the same body
 * gets the first answer back instead of a second transfer.
 *
 * What the database holds, and why a reader of it learns nothing it could use:
 * - `key_digest`: SHA-256 over (scope, key). The key itself is never stored.
 * - `request_digest`: HMAC-SHA256 of the request's canonical JSON (sorted keys, so field order does not matter),
 *   keyed by a key derived from the Idempotency-Key. A plain SHA-256 would let a reader confirm a guessed body
 *   (a guessed recipient address); the keyed digest only compares for a client presenting the key.
 * - `sealed_response`: the create answer (it holds the statusToken) under AES-256-GCM with a key derived
 *   from the Idempotency-Key (HKDF-SHA256), bound to its row (the key digest is the additional data).
 * All of this is only as strong as the key is unguessable: clients should use a random key (a UUIDv4).
 */

/** Printable ASCII without space (0x21-0x7e), 8 to 255 characters. */
export const IDEMPOTENCY_KEY_PATTERN = /^[\x21-\x7e]{8,255}$/;

export type IdempotencyBegin<T> =
  /** No live answer for this key: answer the request, then `complete` (or `abandon` if it failed, so a retry may run). */
  | { kind: 'first'; complete(routeId: string, response: T): Promise<void>; abandon(): Promise<void> }
  /** Same key and scope, same request: the stored answer. */
  | { kind: 'replay'; response: T }
  /** Same key and scope, another request (also while the first is in progress: a different body is never right). */
  | { kind: 'mismatch' }
  /** The first request with this key is still being answered. */
  | { kind: 'in-progress' };

export interface IdempotencyStore {
  /** `request`: the parsed request, JSON-like (bigints allowed). `T`: the answer, JSON-serializable. */
  begin<T>(key: string, scope: string, request: unknown): Promise<IdempotencyBegin<T>>;
  /** Deletes expired keys; returns how many. `begin` calls it itself at most once a minute. */
  purgeExpired(): Promise<number>;
}

export interface IdempotencyOptions {
  /** How long a key is remembered (default 24 h); after that it behaves as new. */
  ttlMs?: number;
  /** An unanswered key older than this (default 60 s) belongs to a create that crashed: the next request takes it over. */
  inProgressTimeoutMs?: number;
}

const DEFAULT_TTL_MS = 24 * 60 * 60 * 1000;
const DEFAULT_IN_PROGRESS_TIMEOUT_MS = 60_000;
const PURGE_EVERY_MS = 60_000;

export function createIdempotencyStore(db: Database, options: IdempotencyOptions = {}): IdempotencyStore {
  const ttlMs = options.ttlMs ?? DEFAULT_TTL_MS;
  const inProgressTimeoutMs = options.inProgressTimeoutMs ?? DEFAULT_IN_PROGRESS_TIMEOUT_MS;
  let lastPurge = 0;

  async function purgeExpired(): Promise<number> {
    const deleted = await db.delete(idempotencyKeys).where(lte(idempotencyKeys.expiresAt, sql`now()`)).returning({ keyDigest: idempotencyKeys.keyDigest });
    return deleted.length;
  }

  async function begin<T>(key: string, scope: string, request: unknown): Promise<IdempotencyBegin<T>> {
    if (!IDEMPOTENCY_KEY_PATTERN.test(key)) {
      throw new PrivateRouteError('invalid Idempotency-Key', { fix: 'send 8 to 255 printable ASCII characters without spaces, e.g. a UUID' });
    }
    if (Date.now() - lastPurge >= PURGE_EVERY_MS) {
      lastPurge = Date.now();
      await purgeExpired();
    }
    const keys = deriveKeys(key, scope);
    const requestDigest = createHmac('sha256', keys.request).update(canonicalJson(request)).digest('hex');

    // A row that vanishes between the two statements (abandoned, or purged) is looked at again; twice is plenty.
    for (let attempt = 0; attempt < 3; attempt++) {
      // One statement claims the key: a new key is inserted; an expired key, or one left unanswered past the
      // timeout (its create crashed), is taken over. Concurrent claims serialize on the row, and the WHERE is
      // re-checked against the winner's version, so exactly one of them gets a row back.
      const [claimed] = await db
        .insert(idempotencyKeys)
        .values({ keyDigest: keys.digest, requestDigest, expiresAt: sql`now() + ${ttlMs} * interval '1 millisecond'`, createdAt: sql`clock_timestamp()` })
        .onConflictDoUpdate({
          target: idempotencyKeys.keyDigest,
          set: {
            requestDigest,
            routeId: null,
            sealedResponse: null,
            createdAt: sql`clock_timestamp()`,
            expiresAt: sql`now() + ${ttlMs} * interval '1 millisecond'`,
          },
          setWhere: sql`${idempotencyKeys.expiresAt} <= now() or (${idempotencyKeys.sealedResponse} is null and ${idempotencyKeys.createdAt} <= now() - ${inProgressTimeoutMs} * interval '1 millisecond')`,
        })
        // The claim's identity, to the microsecond (a Date would lose them): complete and abandon touch only their own claim.
        .returning({ claim: sql<string>`${idempotencyKeys.createdAt}::text` });
      if (claimed) return firstRequest<T>(db, keys, claimed.claim);

      const [row] = await db
        .select({ requestDigest: idempotencyKeys.requestDigest, sealedResponse: idempotencyKeys.sealedResponse })
        .from(idempotencyKeys)
        .where(eq(idempotencyKeys.keyDigest, keys.digest));
      if (!row) continue;
      if (!sameDigest(row.requestDigest, requestDigest)) return { kind: 'mismatch' };
      if (row.sealedResponse === null) return { kind: 'in-progress' };
      return { kind: 'replay', response: JSON.parse(open(row.sealedResponse, keys)) as T };
    }
    throw new PrivateRouteError('the Idempotency-Key could not be claimed', { fix: 'retry the request' });
  }

  return { begin, purgeExpired };
}

function firstRequest<T>(db: Database, keys: DerivedKeys, claim: string): IdempotencyBegin<T> {
  const ours = and(
    eq(idempotencyKeys.keyDigest, keys.digest),
    sql`${idempotencyKeys.createdAt} = ${claim}::timestamptz`,
    sql`${idempotencyKeys.sealedResponse} is null`,
  );
  return {
    kind: 'first',
    // If the claim was taken over meanwhile (this create outlived the in-progress timeout), the row is the
    // newer request's: nothing is written, and this request's answer still goes to its own client.
    async complete(routeId: string, response: T): Promise<void> {
      const sealedResponse = seal(JSON.stringify(response), keys);
      await db.update(idempotencyKeys).set({ routeId, sealedResponse }).where(ours);
    },
    /** The request failed without a transfer: forget the key so the client may retry with it. */
    async abandon(): Promise<void> {
      await db.delete(idempotencyKeys).where(ours);
    },
  };
}

interface DerivedKeys {
  /** hex SHA-256 over (scope, key): the row's primary key. */
  digest: string;
  /** AES-256-GCM key of the sealed answer. */
  seal: Buffer;
  /** HMAC key of the request digest. */
  request: Buffer;
}

const HKDF_SALT = 'private-route/idempotency/v1';

function deriveKeys(key: string, scope: string): DerivedKeys {
  // Length-prefixed, so no (scope, key) pair reads as another.
  const scoped = Buffer.concat([lengthPrefixed(scope), lengthPrefixed(key)]);
  const derive = (purpose: string) => Buffer.from(hkdfSync('sha256', scoped, HKDF_SALT, purpose, 32));
  return { digest: createHash('sha256').update(scoped).digest('hex'), seal: derive('seal'), request: derive('request') };
}

function lengthPrefixed(value: string): Buffer {
  const bytes = Buffer.from(value, 'utf8');
  const length = Buffer.alloc(4);
  length.writeUInt32BE(bytes.length);
  return Buffer.concat([length, bytes]);
}

/** base64url(iv).base64url(ciphertext).base64url(tag); the key digest is the additional data. */
function seal(plaintext: string, keys: DerivedKeys): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', keys.seal, iv);
  cipher.setAAD(Buffer.from(keys.digest, 'utf8'));
  const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return [iv, ciphertext, cipher.getAuthTag()].map((part) => part.toString('base64url')).join('.');
}

function open(sealed: string, keys: DerivedKeys): string {
  const [iv, ciphertext, tag] = sealed.split('.').map((part) => Buffer.from(part, 'base64url'));
  try {
    const decipher = createDecipheriv('aes-256-gcm', keys.seal, iv!);
    decipher.setAAD(Buffer.from(keys.digest, 'utf8'));
    decipher.setAuthTag(tag!);
    return Buffer.concat([decipher.update(ciphertext!), decipher.final()]).toString('utf8');
  } catch (error) {
    throw new PrivateRouteError('the stored answer of this Idempotency-Key cannot be opened', {
      details: 'AES-256-GCM authentication failed: the sealed_response was altered',
      fix: 'retry with a new Idempotency-Key',
      cause: error,
    });
  }
}

function sameDigest(a: string, b: string): boolean {
  const [left, right] = [Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8')];
  return left.length === right.length && timingSafeEqual(left, right);
}

/** JSON with object keys sorted at every depth; bigints as decimal strings tagged `n`, undefined fields left out (as JSON does). */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value === 'boolean' || typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new TypeError('canonicalJson: non-finite number');
    return JSON.stringify(value);
  }
  if (typeof value === 'bigint') return JSON.stringify(`${value}n`);
  if (Array.isArray(value)) return `[${value.map((item) => (item === undefined ? 'null' : canonicalJson(item))).join(',')}]`;
  if (typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, item]) => item !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([name, item]) => `${JSON.stringify(name)}:${canonicalJson(item)}`).join(',')}}`;
  }
  throw new TypeError(`canonicalJson: cannot serialize a ${typeof value}`);
}
