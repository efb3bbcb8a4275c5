/**
 * CORS per API key over real Postgres (src/api/cors.ts, src/partners/allowedOrigins.ts): the headers of preflights
 * and requests, on failures too; the origins cache; what a browser key is refused; the tracking page's frame-ancestors.
 * test/e2e/browser-cors.test.ts runs the same in chromium against the whole stack.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createAbuseLimits } from '../../src/api/abuseLimits.ts';
import { createBrowserOrigins, setAllowedOrigins } from '../../src/partners/allowedOrigins.ts';
import { ApiKeyError, createApiKey, findPartner, listApiKeys, revokeApiKey } from '../../src/partners/apiKeys.ts';
import { call, CREATE_BODY, QUOTE_BODY, startHarness, type Harness } from './harness.ts';

const PAGE = 'https://app.example';
const OTHER = 'https://evil.example';

let h: Harness;
let app: ReturnType<Harness['api']>;
const clock = { ms: 0 };
let browserKey: string;
let serverKey: string;

before(
  async () => {
    h = await startHarness('api-cors');
    browserKey = (await createApiKey(h.database.db, 'dapp', {}, { allowedOrigins: [PAGE, 'http://localhost:5173'] })).key;
    serverKey = (await createApiKey(h.database.db, 'backend')).key;
    const abuse = await createAbuseLimits({
      db: h.database.db,
      settings: { requestsPerMinute: 0, createsPerMinute: 0, maxUnfundedPerClient: 0, publicReadsPerMinute: 0, trustProxyHops: 0 },
      logger: h.logger,
    });
    app = h.api({ abuse, browserOrigins: createBrowserOrigins(h.database.db, { now: () => clock.ms }) });
  },
  { timeout: 120_000 },
);
after(async () => h?.close(), { timeout: 60_000 });

const preflight = (origin: string, method = 'POST') =>
  app.request('/api/private-route', {
    method: 'OPTIONS',
    headers: { Origin: origin, 'Access-Control-Request-Method': method, 'Access-Control-Request-Headers': 'content-type, x-api-key' },
  });

describe('CORS on /api/*', { timeout: 60_000 }, () => {
  test('a preflight from an origin some key allows: 204 with the methods, headers and max age, and no credentials', async () => {
    const answer = await preflight(PAGE);
    assert.equal(answer.status, 204);
    assert.equal(answer.headers.get('access-control-allow-origin'), PAGE);
    assert.equal(answer.headers.get('access-control-allow-methods'), 'GET, POST');
    assert.match(answer.headers.get('access-control-allow-headers') ?? '', /X-Api-Key/);
    assert.equal(answer.headers.get('access-control-max-age'), '600');
    assert.equal(answer.headers.get('access-control-allow-credentials'), null);
    assert.match(answer.headers.get('vary') ?? '', /Origin/);
    assert.equal(await answer.text(), '');
  });

  test('a preflight from an origin no key allows: 204 without CORS headers (the browser stops there)', async () => {
    const answer = await preflight(OTHER);
    assert.equal(answer.status, 204);
    assert.equal(answer.headers.get('access-control-allow-origin'), null);
  });

  test("a request with its key from the key's origin gets the origin and the exposed headers; Vary keeps the route's own", async () => {
    const quote = await call(app, 'POST', '/api/private-route/quote', QUOTE_BODY, { Origin: PAGE, 'X-Api-Key': browserKey });
    assert.equal(quote.status, 200, JSON.stringify(quote.body));
    assert.equal(quote.headers.get('access-control-allow-origin'), PAGE);
    assert.match(quote.headers.get('access-control-expose-headers') ?? '', /X-Request-Id.*Retry-After.*Idempotent-Replayed/);
    assert.equal(quote.headers.get('access-control-allow-credentials'), null);

    const created = await call<{ routeId: string; statusToken: string }>(app, 'POST', '/api/private-route', CREATE_BODY, {
      Origin: PAGE,
      'X-Api-Key': browserKey,
    });
    assert.equal(created.status, 200, JSON.stringify(created.body));
    const read = await call(app, 'GET', `/api/private-route/${created.body.data!.routeId}`, undefined, {
      Origin: PAGE,
      'X-Api-Key': browserKey,
      'X-Status-Token': created.body.data!.statusToken,
    });
    assert.equal(read.headers.get('access-control-allow-origin'), PAGE);
    assert.equal(read.headers.get('vary'), 'Authorization, X-Status-Token, Origin');
  });

  test('a failure answered to an allowed page carries the headers too, so that the page can read why', async () => {
    const wrong = await call(app, 'GET', `/api/private-route/rt_${'0'.repeat(32)}`, undefined, { Origin: PAGE, 'X-Api-Key': browserKey });
    assert.equal(wrong.status, 404);
    assert.equal(wrong.headers.get('access-control-allow-origin'), PAGE);
    const bad = await call(app, 'POST', '/api/private-route/quote', '{', { Origin: PAGE, 'X-Api-Key': browserKey });
    assert.equal(bad.status, 400);
    assert.equal(bad.headers.get('access-control-allow-origin'), PAGE);
  });

  test('no key, a server key, another origin: answered (the API is no firewall) but without CORS headers', async () => {
    const cases: Array<Record<string, string>> = [{ Origin: PAGE }, { Origin: PAGE, 'X-Api-Key': serverKey }, { Origin: OTHER, 'X-Api-Key': browserKey }];
    for (const headers of cases) {
      const answer = await call(app, 'POST', '/api/private-route/quote', QUOTE_BODY, headers);
      assert.equal(answer.status, 200, JSON.stringify(headers));
      assert.equal(answer.headers.get('access-control-allow-origin'), null, JSON.stringify(headers));
      assert.match(answer.headers.get('vary') ?? '', /Origin/);
    }
  });

  test('a change of origins, and a revocation, reach CORS when the 30 s cache expires', async () => {
    const { key } = await createApiKey(h.database.db, 'late-dapp');
    const late = 'https://late.example';
    const allowed = async () =>
      (await call(app, 'POST', '/api/private-route/quote', QUOTE_BODY, { Origin: late, 'X-Api-Key': key })).headers.get('access-control-allow-origin');
    assert.equal(await allowed(), null);
    assert.deepEqual(await setAllowedOrigins(h.database.db, 'late-dapp', [late]), { before: [], after: [late] });
    assert.equal(await allowed(), null, 'cached for 30 s');
    assert.equal((await preflight(late)).headers.get('access-control-allow-origin'), null);
    clock.ms += 30_000;
    assert.equal(await allowed(), late);
    assert.equal((await preflight(late)).headers.get('access-control-allow-origin'), late);
    assert.equal(await revokeApiKey(h.database.db, 'late-dapp'), true);
    clock.ms += 30_000;
    assert.equal((await preflight(late)).headers.get('access-control-allow-origin'), null);
  });
});

describe('a browser key is public', { timeout: 60_000 }, () => {
  test('it may not name a webhookUrl nor send a userReference: 403 BROWSER_KEY_NOT_ALLOWED; a server key may', async () => {
    const withWebhook = { ...CREATE_BODY, webhookUrl: 'https://hooks.example/private-route' };
    const refused = await call(app, 'POST', '/api/private-route', withWebhook, { 'X-Api-Key': browserKey, Origin: PAGE });
    assert.equal(refused.status, 403);
    assert.equal(refused.body.code, 'BROWSER_KEY_NOT_ALLOWED');
    assert.match(refused.body.error ?? '', /dapp.*public.*webhookUrl.*key without origins/);
    assert.equal(refused.headers.get('access-control-allow-origin'), PAGE);
    const vouched = await call(app, 'POST', '/api/private-route', { ...CREATE_BODY, userReference: 'user-1' }, { 'X-Api-Key': browserKey });
    assert.equal(vouched.status, 403);
    assert.equal(vouched.body.code, 'BROWSER_KEY_NOT_ALLOWED');
    // Calling from a server with the public key changes nothing: the key is what is public.
    assert.equal((await call(app, 'POST', '/api/private-route', withWebhook, { 'X-Api-Key': browserKey })).status, 403);
    assert.equal((await call(app, 'POST', '/api/private-route', withWebhook, { 'X-Api-Key': serverKey })).status, 200);
    // Keyless, a webhookUrl is refused anyway (webhooks need a key).
    assert.equal((await call(app, 'POST', '/api/private-route', withWebhook)).body.code, 'WEBHOOK_NEEDS_API_KEY');
  });

  test("it may not read the key's transfers: listing and statusToken reissue are 403 BROWSER_KEY_NOT_ALLOWED", async () => {
    const listed = await call(app, 'GET', '/api/private-route', undefined, { 'X-Api-Key': browserKey, Origin: PAGE });
    assert.equal(listed.status, 403);
    assert.equal(listed.body.code, 'BROWSER_KEY_NOT_ALLOWED');
    const created = await call(app, 'POST', '/api/private-route', CREATE_BODY, { 'X-Api-Key': browserKey });
    assert.equal(created.status, 200, JSON.stringify(created.body));
    const reissue = await call(app, 'POST', `/api/private-route/${created.body.data!.routeId}/status-token`, undefined, { 'X-Api-Key': browserKey });
    assert.equal(reissue.status, 403);
    assert.equal((await call(app, 'GET', '/api/private-route', undefined, { 'X-Api-Key': serverKey })).status, 200);
  });

  test('origins are stored only valid, shown by the listing, and named on the partner', async () => {
    await assert.rejects(createApiKey(h.database.db, 'bad-origin', {}, { allowedOrigins: ['http://app.example'] }), ApiKeyError);
    await assert.rejects(setAllowedOrigins(h.database.db, 'dapp', ['https://app.example/']), /write "https:\/\/app\.example"/);
    assert.equal(await setAllowedOrigins(h.database.db, 'no-such-key', [PAGE]), null);
    // A browser key stays one: emptying its origins would open its transfers to whoever copied it from a page.
    await assert.rejects(setAllowedOrigins(h.database.db, 'dapp', []), /it stays a browser key/);
    const listed = (await listApiKeys(h.database.db)).find((k) => k.name === 'dapp');
    assert.deepEqual(listed?.allowedOrigins, [PAGE, 'http://localhost:5173']);
    assert.deepEqual((await findPartner(h.database.db, browserKey))?.allowedOrigins, [PAGE, 'http://localhost:5173']);
    assert.deepEqual((await findPartner(h.database.db, serverKey))?.allowedOrigins, []);
  });
});

describe("the tracking page's frame-ancestors", { timeout: 60_000 }, () => {
  const csp = async (routeId: string) => (await app.request(`/t/${routeId}`)).headers.get('content-security-policy') ?? '';
  const createWith = async (headers: Record<string, string>) => {
    const created = await call<{ routeId: string }>(app, 'POST', '/api/private-route', CREATE_BODY, headers);
    assert.equal(created.status, 200, JSON.stringify(created.body));
    return created.body.data!.routeId;
  };

  test("the origins of the transfer's key; 'none' for a keyless transfer, a server key's, a revoked key's or an unknown route", async () => {
    const framed = await createWith({ 'X-Api-Key': browserKey });
    assert.match(await csp(framed), /; frame-ancestors https:\/\/app\.example http:\/\/localhost:5173$/);
    assert.match(await csp(framed), /^default-src 'none'; script-src 'self'; /);
    assert.match(await csp(await createWith({})), /frame-ancestors 'none'$/);
    assert.match(await csp(await createWith({ 'X-Api-Key': serverKey })), /frame-ancestors 'none'$/);
    assert.match(await csp(`rt_${'0'.repeat(32)}`), /frame-ancestors 'none'$/);
    // The script and stylesheet are no documents to frame: their policy stays 'none'.
    assert.match((await app.request('/t/app.js')).headers.get('content-security-policy') ?? '', /frame-ancestors 'none'$/);

    const { key } = await createApiKey(h.database.db, 'short-lived', {}, { allowedOrigins: [OTHER] });
    const revoked = await createWith({ 'X-Api-Key': key });
    assert.match(await csp(revoked), /frame-ancestors https:\/\/evil\.example$/);
    await revokeApiKey(h.database.db, 'short-lived');
    assert.match(await csp(revoked), /frame-ancestors 'none'$/);
  });
});
