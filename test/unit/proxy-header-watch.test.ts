import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { createProxyHeaderWatch } from '../../src/api/proxyHeaderWatch.ts';

describe('requests through a proxy the API does not trust (TRUST_PROXY_HOPS=0)', () => {
  test('the first X-Forwarded-For warns with the count of forwarded clients, then once an hour; none without the header', () => {
    const warnings: Array<{ message: string; fields?: Record<string, unknown> }> = [];
    let now = 0;
    const watch = createProxyHeaderWatch({ warn: (message, fields) => warnings.push({ message, fields }) }, () => now);
    watch.observe(undefined);
    watch.observe('');
    assert.equal(warnings.length, 0);
    watch.observe('203.0.113.7, 10.0.0.2');
    assert.equal(warnings.length, 1);
    assert.match(warnings[0]!.message, /TRUST_PROXY_HOPS is 0: every user behind the proxy counts as one client/);
    assert.deepEqual(warnings[0]!.fields, { distinctForwardedClients: 1 });
    for (const client of ['203.0.113.8', '203.0.113.9', '203.0.113.7']) watch.observe(client);
    assert.equal(warnings.length, 1, 'not again within the hour');
    now += 60 * 60 * 1000;
    watch.observe('198.51.100.1');
    assert.deepEqual(warnings[1]!.fields, { distinctForwardedClients: 4 });
    // The log line names no address.
    assert.doesNotMatch(JSON.stringify(warnings), /203\.0\.113|198\.51/);
  });
});
