/** Allowed browser origins (src/partners/origins.ts) and the CORS decision (src/api/cors.ts), as tables. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { corsDecision, corsHeaders, type CorsRequest } from '../../src/api/cors.ts';
import { isBrowserKey, MAX_ALLOWED_ORIGINS, originProblem, originsProblem } from '../../src/partners/origins.ts';
import { trackingPageCsp } from '../../src/api/routes/trackingPage.ts';

describe('allowed origins', { timeout: 10_000 }, () => {
  const good = [
    'https://app.example',
    'https://app.example:8443',
    'https://xn--bcher-kva.example',
    'http://localhost:5173',
    'http://127.0.0.1:8080',
    'http://[::1]:3000',
    'http://localhost',
  ];
  for (const origin of good) test(`${origin} is an origin`, () => assert.equal(originProblem(origin), null));

  const bad: Array<[string, RegExp]> = [
    ['https://app.example/', /write "https:\/\/app\.example"/],
    ['https://app.example/path', /write "https:\/\/app\.example"/],
    ['https://app.example?x=1', /write "https:\/\/app\.example"/],
    ['https://app.example#top', /write "https:\/\/app\.example"/],
    ['https://App.Example', /write "https:\/\/app\.example"/],
    ['https://app.example:443', /write "https:\/\/app\.example"/],
    ['https://bücher.example', /write "https:\/\/xn--bcher-kva\.example"/],
    ['https://*.app.example', /no wildcards/],
    ['*', /no wildcards/],
    ['http://app.example', /http only for localhost/],
    ['http://10.0.0.5:8080', /http only for localhost/],
    ['http://localhost.evil.example', /http only for localhost/],
    ['ftp://app.example', /scheme must be https/],
    ['chrome-extension://abcdef', /scheme must be https/],
    ['null', /is no origin/],
    ['app.example', /is no origin/],
    ['', /is no origin/],
    ['https://user:pw@app.example', /no user or password/],
    [' https://app.example', /write "https:\/\/app\.example"/],
  ];
  for (const [origin, problem] of bad) test(`${JSON.stringify(origin)} is refused`, () => assert.match(originProblem(origin) ?? 'accepted', problem));

  test('a list: each origin checked, duplicates counted once, at most MAX_ALLOWED_ORIGINS', () => {
    assert.equal(originsProblem([]), null);
    assert.equal(originsProblem(['https://a.example', 'https://a.example']), null);
    assert.match(originsProblem(['https://a.example', 'http://b.example']) ?? '', /http only/);
    const many = Array.from({ length: MAX_ALLOWED_ORIGINS + 1 }, (_, i) => `https://a${i}.example`);
    assert.equal(originsProblem(many.slice(1)), null);
    assert.match(originsProblem(many) ?? '', /at most 20 origins/);
  });

  test('a key with origins is a browser key', () => {
    assert.equal(isBrowserKey({ allowedOrigins: [] }), false);
    assert.equal(isBrowserKey({ allowedOrigins: ['https://a.example'] }), true);
  });
});

describe('the CORS decision', { timeout: 10_000 }, () => {
  const PAGE = 'https://app.example';
  const base: CorsRequest = { method: 'POST', origin: PAGE, requestMethod: undefined, keyOrigins: undefined, someKeyAllows: false };
  const cases: Array<[string, Partial<CorsRequest>, ReturnType<typeof corsDecision>]> = [
    ['no Origin: not a CORS request', { origin: undefined, keyOrigins: [PAGE] }, { kind: 'none' }],
    ['a key that lists the origin', { keyOrigins: [PAGE, 'https://b.example'] }, { kind: 'request', allowOrigin: PAGE }],
    ['a GET with a key that lists it', { method: 'GET', keyOrigins: [PAGE] }, { kind: 'request', allowOrigin: PAGE }],
    [
      'no key (keyless CORS is off), even when some key allows the origin',
      { keyOrigins: undefined, someKeyAllows: true },
      { kind: 'request', allowOrigin: null },
    ],
    ['a key that lists other origins', { keyOrigins: ['https://b.example'] }, { kind: 'request', allowOrigin: null }],
    ['a server key (no origins)', { keyOrigins: [] }, { kind: 'request', allowOrigin: null }],
    ['an origin that differs in its port', { origin: 'https://app.example:8443', keyOrigins: [PAGE] }, { kind: 'request', allowOrigin: null }],
    ['the origin "null" (a sandboxed frame, a file)', { origin: 'null', keyOrigins: [PAGE] }, { kind: 'request', allowOrigin: null }],
    ['a preflight for an origin some key allows', { method: 'OPTIONS', requestMethod: 'POST', someKeyAllows: true }, { kind: 'preflight', allowOrigin: PAGE }],
    ['a preflight for a GET', { method: 'OPTIONS', requestMethod: 'GET', someKeyAllows: true }, { kind: 'preflight', allowOrigin: PAGE }],
    ['a preflight for an origin no key allows', { method: 'OPTIONS', requestMethod: 'POST', someKeyAllows: false }, { kind: 'preflight', allowOrigin: null }],
    ['a preflight for a method the API has not', { method: 'OPTIONS', requestMethod: 'DELETE', someKeyAllows: true }, { kind: 'preflight', allowOrigin: null }],
    ['an OPTIONS that is no preflight', { method: 'OPTIONS', keyOrigins: [PAGE] }, { kind: 'request', allowOrigin: PAGE }],
  ];
  for (const [name, request, expected] of cases) test(name, () => assert.deepEqual(corsDecision({ ...base, ...request }), expected));

  test('an allowed request exposes the headers a client reads; a preflight names the methods, headers and max age; no credentials', () => {
    const request = corsHeaders({ kind: 'request', allowOrigin: PAGE });
    assert.equal(request['Access-Control-Allow-Origin'], PAGE);
    for (const header of ['X-Request-Id', 'RateLimit-Remaining', 'Retry-After', 'Idempotent-Replayed', 'Deprecation', 'Sunset'])
      assert.ok(request['Access-Control-Expose-Headers']!.split(', ').includes(header), header);
    const preflight = corsHeaders({ kind: 'preflight', allowOrigin: PAGE });
    assert.equal(preflight['Access-Control-Allow-Origin'], PAGE);
    assert.equal(preflight['Access-Control-Allow-Methods'], 'GET, POST');
    for (const header of ['Content-Type', 'X-Api-Key', 'Idempotency-Key', 'Authorization', 'X-Status-Token', 'Last-Event-ID'])
      assert.ok(preflight['Access-Control-Allow-Headers']!.split(', ').includes(header), header);
    assert.equal(preflight['Access-Control-Max-Age'], '600');
    for (const headers of [request, preflight]) assert.equal(headers['Access-Control-Allow-Credentials'], undefined);
    assert.deepEqual(corsHeaders({ kind: 'request', allowOrigin: null }), {});
    assert.deepEqual(corsHeaders({ kind: 'preflight', allowOrigin: null }), {});
    assert.deepEqual(corsHeaders({ kind: 'none' }), {});
  });

  test("the tracking page's frame-ancestors: the key's origins, else 'none'; the other directives unchanged", () => {
    const none = trackingPageCsp([]);
    const framed = trackingPageCsp(['https://app.example', 'http://localhost:5173']);
    assert.match(none, /frame-ancestors 'none'$/);
    assert.match(framed, /frame-ancestors https:\/\/app\.example http:\/\/localhost:5173$/);
    assert.equal(framed.replace(/frame-ancestors .*$/, ''), none.replace(/frame-ancestors .*$/, ''));
    assert.match(
      none,
      /^default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; /,
    );
  });
});
