/**
 * The pool's kept leaves in a real Postgres (src/providers/privacy-pools/pool/leafStore.ts): saved in parts, loaded in
 * tree order with their cursor, a save repeated changes nothing, pools and chains apart, cleared on request.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { connectDatabase, type DatabaseHandle } from '../../src/db/client.ts';
import { createPostgresLeafStore } from '../../src/providers/privacy-pools/pool/leafStore.ts';
import { startTestPostgres, type TestPostgres } from '../support/database.ts';

const POOL = '0x3706e38af05bf0158bcdbb46239f8289980b093f';
const OTHER = '0x00000000000000000000000000000000000000aa';

let postgres: TestPostgres;
let database: DatabaseHandle;

before(async () => {
  postgres = await startTestPostgres('leaf-store');
  database = connectDatabase(postgres.url, { max: 2 });
});
after(async () => {
  await database?.close();
  await postgres?.stop();
});

describe('the kept leaves of a pool', { timeout: 60_000 }, () => {
  test('saved in parts, loaded whole with the cursor; a repeated save changes nothing; another pool or chain is apart', async () => {
    const store = createPostgresLeafStore(database.db, 42161);
    assert.equal(await store.load(POOL), null, 'nothing kept yet');
    const many = Array.from({ length: 2500 }, (_, i) => 10n ** 70n + BigInt(i));
    await store.save(POOL, 0, many.slice(0, 1200), 100n);
    await store.save(POOL, 1200, many.slice(1200), 200n);
    await store.save(POOL, 1200, many.slice(1200), 200n);
    assert.deepEqual(await store.load(POOL), { leaves: many, scannedTo: 200n });
    // A cursor may move with no new leaf.
    await store.save(POOL, 2500, [], 300n);
    assert.equal((await store.load(POOL))?.scannedTo, 300n);
    assert.equal(await store.load(OTHER), null);
    assert.equal(await createPostgresLeafStore(database.db, 10).load(POOL), null);
    // Address case does not make another pool.
    assert.equal((await store.load(POOL.toUpperCase().replace('0X', '0x') as `0x${string}`))?.leaves.length, 2500);
  });

  test('cleared, the pool is scanned again from its deployment', async () => {
    const store = createPostgresLeafStore(database.db, 1);
    await store.save(OTHER, 0, [1n, 2n], 50n);
    await store.clear(OTHER);
    assert.equal(await store.load(OTHER), null);
  });
});
