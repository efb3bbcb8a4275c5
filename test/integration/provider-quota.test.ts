/**
 * The providers' request quotas shared by replicas (src/providers/providerQuota.ts) against a real Postgres: two
 * "replicas" with their own connection pools draw from one bucket and together never exceed it; an empty bucket makes
 * a call wait for its refill, or fail as unavailable when it may not wait; Relay's client takes every request from its
 * endpoint's bucket.
 */
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { connectDatabase, type DatabaseHandle } from '../../src/db/client.ts';
import { BridgeUnavailableError } from '../../src/providers/bridge.ts';
import { createSharedQuota, QuotaExhaustedError, relayQuotaLimits } from '../../src/providers/providerQuota.ts';
import { createRelayClient } from '../../src/providers/relay/client.ts';
import { startTestPostgres, type TestPostgres } from '../support/database.ts';

let postgres: TestPostgres;
let replicaA: DatabaseHandle;
let replicaB: DatabaseHandle;

before(async () => {
  postgres = await startTestPostgres('provider-quota');
  replicaA = connectDatabase(postgres.url, { max: 2 });
  replicaB = connectDatabase(postgres.url, { max: 2 });
});

after(async () => {
  await replicaA?.close();
  await replicaB?.close();
  await postgres?.stop();
});

describe('provider quotas shared through Postgres', { timeout: 60_000 }, () => {
  test('two replicas share one bucket: a burst of ten seconds of quota, then the refill rate, never more', async () => {
    // 60 a minute: a burst of 10, then one a second.
    const limits = { 'test:shared': { perMinute: 60 } };
    const takeA = createSharedQuota({ db: replicaA.db, limits, maxWaitMs: 0 });
    const takeB = createSharedQuota({ db: replicaB.db, limits, maxWaitMs: 0 });
    const outcomes = await Promise.allSettled(Array.from({ length: 30 }, (_, i) => (i % 2 === 0 ? takeA : takeB)('test:shared')));
    const granted = outcomes.filter((o) => o.status === 'fulfilled').length;
    assert.ok(granted >= 10 && granted <= 11, `the burst is the bucket's 10 (and at most one refilled meanwhile), got ${granted}`);
    for (const refused of outcomes.filter((o) => o.status === 'rejected')) {
      assert.ok(refused.reason instanceof QuotaExhaustedError && refused.reason instanceof BridgeUnavailableError, String(refused.reason));
      assert.match(refused.reason.message, /the test:shared quota \(60 requests a minute, shared by every replica\) is spent for now; retry in 1 s/);
      assert.equal(refused.reason.transient, true);
    }
    // A caller that may wait gets the next token as it refills (one a second).
    const waiting = createSharedQuota({ db: replicaB.db, limits, maxWaitMs: 5000 });
    const started = Date.now();
    await waiting('test:shared');
    await waiting('test:shared');
    const waited = Date.now() - started;
    assert.ok(waited >= 900 && waited < 4500, `two more tokens took ${waited} ms at one a second`);
  });

  test('a bucket without a limit, or with 0, is not metered', async () => {
    const take = createSharedQuota({ db: replicaA.db, limits: { 'test:off': { perMinute: 0 } }, maxWaitMs: 0 });
    for (let i = 0; i < 50; i++) await take(i % 2 === 0 ? 'test:off' : 'test:unnamed');
    const rows = await replicaA.db.execute(`select bucket from provider_quotas where bucket in ('test:off', 'test:unnamed')`);
    assert.equal(rows.length, 0, 'nothing is written for an unmetered bucket');
  });

  test("Relay's client takes each request from its endpoint's bucket: quotes from relay:quote, status from relay:status", async () => {
    const seen: string[] = [];
    const relay = createServer((request, response) => {
      seen.push(request.url ?? '');
      response.setHeader('content-type', 'application/json');
      response.end(request.url?.startsWith('/chains') ? JSON.stringify({ chains: [] }) : JSON.stringify({ status: 'pending' }));
    });
    await new Promise<void>((resolve) => relay.listen(0, '127.0.0.1', resolve));
    try {
      const taken: string[] = [];
      const quota = createSharedQuota({ db: replicaA.db, limits: { 'relay:status': { perMinute: 6 } }, maxWaitMs: 0 });
      const client = createRelayClient({
        baseUrl: `http://127.0.0.1:${(relay.address() as AddressInfo).port}`,
        quota: async (bucket) => {
          taken.push(bucket);
          await quota(bucket);
        },
      });
      await client.getChains();
      await client.getStatus('0x01');
      assert.deepEqual(taken, ['relay:other', 'relay:status']);
      // relay:status holds one second of 6 a minute: one token, the first status call took it; the next is refused
      // before it reaches Relay.
      const before = seen.length;
      await assert.rejects(client.getStatus('0x02'), QuotaExhaustedError);
      assert.equal(seen.length, before, 'a refused call never reaches the provider');
    } finally {
      await new Promise<void>((resolve) => relay.close(() => resolve()));
    }
  });

  test("Relay's published limits: 50 quotes a minute without a key, ten a second with one", () => {
    assert.equal(relayQuotaLimits(false)['relay:quote']?.perMinute, 50);
    assert.equal(relayQuotaLimits(true)['relay:quote']?.perMinute, 600);
    assert.equal(relayQuotaLimits(false)['relay:status']?.perMinute, 200);
  });
});
