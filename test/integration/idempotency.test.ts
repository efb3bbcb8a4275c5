/**
 * Idempotency-Key store (src/transfers/idempotency.ts) over a real Postgres: first, replay, mismatch, in-progress,
 * takeover of a crashed create, expiry, concurrent first requests, what the table holds, and scopes.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { sql } from 'drizzle-orm';
import { connectDatabase, type DatabaseHandle } from '../../src/db/client.ts';
import { idempotencyKeys } from '../../src/db/schema.ts';
import { canonicalJson, createIdempotencyStore, IDEMPOTENCY_KEY_PATTERN, type IdempotencyBegin } from '../../src/transfers/idempotency.ts';
import { startTestPostgres, type TestPostgres } from '../support/database.ts';

let postgres: TestPostgres;
let database: DatabaseHandle;

before(async () => {
  postgres = await startTestPostgres('idempotency-test');
  database = connectDatabase(postgres.url, { max: 12 });
});

after(async () => {
  await database?.close();
  await postgres?.stop();
});

interface Answer {
  routeId: string;
  statusToken: string;
  amount: string;
}

const REQUEST = { sourceChainId: 1, destChainId: 2, amount: '10', userDestinationAddress: '0x000000000000000000000000000000000000dEaD' };
const SCOPE = 'create:client-a';
const newKey = () => `key-${randomUUID()}`;
const answer = (): Answer => ({ routeId: `rt_${randomUUID().replaceAll('-', '')}`, statusToken: `st_${randomUUID()}`, amount: '10' });

function first<T>(begin: IdempotencyBegin<T>) {
  assert.equal(begin.kind, 'first');
  return begin as Extract<IdempotencyBegin<T>, { kind: 'first' }>;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('idempotency keys: one transfer per key, the answer sealed under the key', { timeout: 120_000 }, () => {
  test('the key pattern: 8-255 printable ASCII characters without spaces', { timeout: 5_000 }, () => {
    for (const good of ['abcdefgh', randomUUID(), '!'.repeat(255), '~0123456']) assert.ok(IDEMPOTENCY_KEY_PATTERN.test(good), good);
    for (const bad of ['short', 'a'.repeat(256), 'has space', 'tab\tinside', 'ünïcode-key', 'newline\nkey', '']) {
      assert.ok(!IDEMPOTENCY_KEY_PATTERN.test(bad), JSON.stringify(bad));
    }
  });

  test('canonical JSON: keys sorted at every depth, undefined fields left out, bigints kept apart from numbers', { timeout: 5_000 }, () => {
    assert.equal(canonicalJson({ b: { y: [1, { d: 2, c: 3 }], x: null }, a: 'z', u: undefined }), '{"a":"z","b":{"x":null,"y":[1,{"c":3,"d":2}]}}');
    assert.notEqual(canonicalJson({ amount: 10n }), canonicalJson({ amount: 10 }));
    assert.notEqual(canonicalJson({ amount: '10' }), canonicalJson({ amount: 10 }));
    assert.throws(() => canonicalJson({ amount: Number.NaN }), /non-finite/);
  });

  test('first, then replay of the same request (any field order), mismatch for another, in-progress before complete', { timeout: 30_000 }, async () => {
    const store = createIdempotencyStore(database.db);
    const key = newKey();
    const started = first(await store.begin<Answer>(key, SCOPE, REQUEST));

    assert.deepEqual(await store.begin<Answer>(key, SCOPE, REQUEST), { kind: 'in-progress' });
    assert.deepEqual(await store.begin<Answer>(key, SCOPE, { ...REQUEST, amount: '11' }), { kind: 'mismatch' });

    const created = answer();
    await started.complete(created.routeId, created);
    const reordered = Object.fromEntries(Object.entries(REQUEST).reverse());
    assert.deepEqual(await store.begin<Answer>(key, SCOPE, reordered), { kind: 'replay', response: created });
    assert.deepEqual(await store.begin<Answer>(key, SCOPE, { ...REQUEST, refundAddress: '0x1' }), { kind: 'mismatch' });
    // A field that is undefined is a field that is absent (as in JSON).
    assert.deepEqual(await store.begin<Answer>(key, SCOPE, { ...REQUEST, refundAddress: undefined }), { kind: 'replay', response: created });

    const [row] = await database.db.select().from(idempotencyKeys).where(sql`${idempotencyKeys.routeId} = ${created.routeId}`);
    assert.ok(row, 'the answered row records its routeId');
  });

  test('the table holds neither the key nor the statusToken nor the request, and the sealed answer is authenticated', { timeout: 30_000 }, async () => {
    const store = createIdempotencyStore(database.db);
    const key = newKey();
    const created = answer();
    await first(await store.begin<Answer>(key, SCOPE, REQUEST)).complete(created.routeId, created);

    const rows = await database.db.execute<Record<string, unknown>>(sql`select * from idempotency_keys`);
    const dump = JSON.stringify(rows);
    assert.ok(!dump.includes(created.statusToken), 'the statusToken is not readable from the table');
    assert.ok(!dump.includes(key), 'the Idempotency-Key is not stored');
    assert.ok(!dump.includes(REQUEST.userDestinationAddress), 'the request is not stored');
    const [row] = await database.db.select().from(idempotencyKeys).where(sql`${idempotencyKeys.routeId} = ${created.routeId}`);
    assert.match(row!.sealedResponse!, /^[\w-]+\.[\w-]+\.[\w-]+$/);

    // A flipped ciphertext byte: the key's holder gets an error, never a forged answer.
    const [iv, ciphertext, tag] = row!.sealedResponse!.split('.') as [string, string, string];
    const bytes = Buffer.from(ciphertext, 'base64url');
    bytes[0] = bytes[0]! ^ 1;
    await database.db
      .update(idempotencyKeys)
      .set({ sealedResponse: [iv, bytes.toString('base64url'), tag].join('.') })
      .where(sql`${idempotencyKeys.keyDigest} = ${row!.keyDigest}`);
    await assert.rejects(store.begin<Answer>(key, SCOPE, REQUEST), /cannot be opened/);
  });

  test('another scope, or another key, is another key', { timeout: 30_000 }, async () => {
    const store = createIdempotencyStore(database.db);
    const key = newKey();
    const created = answer();
    await first(await store.begin<Answer>(key, SCOPE, REQUEST)).complete(created.routeId, created);

    const otherScope = first(await store.begin<Answer>(key, 'create:client-b', REQUEST));
    await otherScope.abandon();
    first(await store.begin<Answer>(newKey(), SCOPE, REQUEST));
    // Scope and key are length-prefixed: ("ab", "cdefghij") is not ("a", "bcdefghij").
    const joined = first(await store.begin<Answer>('cdefghijk', 'ab', REQUEST));
    await joined.complete('rt_joined', answer());
    first(await store.begin<Answer>('bcdefghijk', 'a', REQUEST));
  });

  test('abandon forgets the key: a retry with it is a first request again', { timeout: 30_000 }, async () => {
    const store = createIdempotencyStore(database.db);
    const key = newKey();
    await first(await store.begin<Answer>(key, SCOPE, REQUEST)).abandon();
    const retried = first(await store.begin<Answer>(key, SCOPE, { ...REQUEST, amount: '12' }));
    const created = answer();
    await retried.complete(created.routeId, created);
    assert.deepEqual(await store.begin<Answer>(key, SCOPE, { ...REQUEST, amount: '12' }), { kind: 'replay', response: created });
  });

  test('a create that crashed (unanswered past the timeout) is taken over; its late complete does not overwrite the new answer', {
    timeout: 30_000,
  }, async () => {
    const store = createIdempotencyStore(database.db, { inProgressTimeoutMs: 300 });
    const key = newKey();
    const crashed = first(await store.begin<Answer>(key, SCOPE, REQUEST));
    assert.deepEqual(await store.begin<Answer>(key, SCOPE, REQUEST), { kind: 'in-progress' }, 'within the timeout it is still in progress');
    await sleep(500);

    const takeover = first(await store.begin<Answer>(key, SCOPE, REQUEST));
    assert.deepEqual(await store.begin<Answer>(key, SCOPE, REQUEST), { kind: 'in-progress' }, 'the takeover is in progress in its turn');
    const created = answer();
    await takeover.complete(created.routeId, created);
    await crashed.complete('rt_late', answer());
    await crashed.abandon();
    assert.deepEqual(await store.begin<Answer>(key, SCOPE, REQUEST), { kind: 'replay', response: created });

    await sleep(500);
    assert.deepEqual(await store.begin<Answer>(key, SCOPE, REQUEST), { kind: 'replay', response: created }, 'an answered key is never taken over');
  });

  test('an expired key behaves as new, and purgeExpired deletes expired keys only', { timeout: 30_000 }, async () => {
    const shortLived = createIdempotencyStore(database.db, { ttlMs: 300 });
    const key = newKey();
    await first(await shortLived.begin<Answer>(key, SCOPE, REQUEST)).complete('rt_old', answer());
    const kept = newKey();
    await first(await createIdempotencyStore(database.db).begin<Answer>(kept, SCOPE, REQUEST)).complete('rt_kept', answer());
    await sleep(500);

    const renewed = first(await shortLived.begin<Answer>(key, SCOPE, { ...REQUEST, amount: '99' }));
    const created = answer();
    await renewed.complete(created.routeId, created);
    assert.deepEqual(await shortLived.begin<Answer>(key, SCOPE, { ...REQUEST, amount: '99' }), { kind: 'replay', response: created });

    const expiring = newKey();
    await first(await shortLived.begin<Answer>(expiring, SCOPE, REQUEST)).complete('rt_expiring', answer());
    await sleep(500);
    const countOf = async (routeId: string) => (await database.db.select().from(idempotencyKeys).where(sql`${idempotencyKeys.routeId} = ${routeId}`)).length;
    assert.equal(await countOf('rt_expiring'), 1);
    assert.ok((await shortLived.purgeExpired()) >= 1);
    assert.equal(await countOf('rt_expiring'), 0, 'the expired key is gone');
    assert.equal(await countOf('rt_kept'), 1, 'a live key stays');
    assert.equal(await shortLived.purgeExpired(), 0);
  });

  test('ten concurrent first requests with one key: exactly one is first, the others wait (in-progress)', { timeout: 30_000 }, async () => {
    for (let round = 0; round < 3; round++) {
      // Separate stores, as if ten API instances received the retries.
      const key = newKey();
      const results = await Promise.all(Array.from({ length: 10 }, () => createIdempotencyStore(database.db).begin<Answer>(key, SCOPE, REQUEST)));
      const kinds = results.map((result) => result.kind).sort();
      assert.deepEqual(kinds, ['first', ...Array(9).fill('in-progress')], `round ${round}`);
    }
  });

  test('ten concurrent takeovers of a crashed create: exactly one takes over', { timeout: 30_000 }, async () => {
    const key = newKey();
    first(await createIdempotencyStore(database.db).begin<Answer>(key, SCOPE, REQUEST));
    await sleep(400);
    const results = await Promise.all(
      Array.from({ length: 10 }, () => createIdempotencyStore(database.db, { inProgressTimeoutMs: 300 }).begin<Answer>(key, SCOPE, REQUEST)),
    );
    assert.deepEqual(results.map((result) => result.kind).sort(), ['first', ...Array(9).fill('in-progress')]);
  });

  test('a malformed key is refused before anything is stored', { timeout: 10_000 }, async () => {
    const store = createIdempotencyStore(database.db);
    await assert.rejects(store.begin('short', SCOPE, REQUEST), /invalid Idempotency-Key/);
  });
});
