import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Hono } from 'hono';
import { announceDeprecations, checkDeprecations, type Deprecation, DEPRECATIONS, deprecationHeaders, pathMatches } from '../../src/api/deprecation.ts';

const entry: Deprecation = {
  method: 'GET',
  path: '/api/private-route/{routeId}',
  deprecatedAt: new Date('2027-01-01T00:00:00Z'),
  sunsetAt: new Date('2027-04-01T00:00:00Z'),
  link: 'https://route.example/docs#versioning',
};

describe('deprecation notices', { timeout: 10_000 }, () => {
  test('path patterns match one segment per {name}', () => {
    const cases: Array<[string, string, boolean]> = [
      ['/api/private-route/{routeId}', '/api/private-route/rt_1', true],
      ['/api/private-route/{routeId}', '/api/private-route/rt_1/events', false],
      ['/api/private-route/{routeId}', '/api/private-route/', false],
      ['/api/private-route/quote', '/api/private-route/quote', true],
      ['/api/private-route/quote', '/api/private-route/quotes', false],
    ];
    for (const [pattern, path, expected] of cases) assert.equal(pathMatches(pattern, path), expected, `${pattern} vs ${path}`);
  });

  test('the headers are RFC 9745 Deprecation, RFC 8594 Sunset and a deprecation link', () => {
    assert.deepEqual(deprecationHeaders(entry), {
      Deprecation: '@1798761600',
      Sunset: 'Thu, 01 Apr 2027 00:00:00 GMT',
      Link: '<https://route.example/docs#versioning>; rel="deprecation"',
    });
  });

  test('a sunset sooner than 90 days after the deprecation is refused; the shipped list keeps the policy', () => {
    assert.throws(() => checkDeprecations([{ ...entry, sunsetAt: new Date('2027-02-01T00:00:00Z') }]), /at least 90 days/);
    assert.doesNotThrow(() => checkDeprecations(DEPRECATIONS));
  });

  test('only the deprecated endpoint and method carry the notice', async () => {
    const app = new Hono();
    app.use('*', announceDeprecations([entry]));
    app.get('/api/private-route/:routeId', (c) => c.json({ ok: true }));
    app.post('/api/private-route/:routeId', (c) => c.json({ ok: true }));
    app.get('/api/bridge/chains', (c) => c.json({ ok: true }));
    const deprecated = await app.request('/api/private-route/rt_1');
    assert.equal(deprecated.headers.get('deprecation'), '@1798761600');
    assert.equal(deprecated.headers.get('sunset'), 'Thu, 01 Apr 2027 00:00:00 GMT');
    for (const [method, path] of [
      ['POST', '/api/private-route/rt_1'],
      ['GET', '/api/bridge/chains'],
    ] as const) {
      const other = await app.request(path, { method });
      assert.equal(other.headers.get('deprecation'), null, `${method} ${path}`);
    }
  });
});
