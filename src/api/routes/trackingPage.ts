/**
 * The tracking page, for the end user of a transfer: GET /t/<routeId>, opened as `/t/rt_…#<statusToken>`.
 *
 * The page is the same four static files for every transfer (src/api/trackingPage/: page.html, app.js, amounts.js, app.css);
 * nothing of a transfer is in them. Its script reads the statusToken from the URL's fragment, which a browser never
 * sends to a server (not in the request, not in a Referer), and calls GET /api/private-route/<routeId> with it in
 * the Authorization header. So no request line this server receives, and nothing it could log, holds the token.
 * Without the token the page shows the public view only (docs/privacy.md, "Quiet public channels").
 *
 * The script and the stylesheet are separate files from this server, so the Content-Security-Policy allows nothing
 * inline and nothing from any other origin: the reader's browser calls no third party. Only the pages of the origins
 * the transfer's API key allows (routectl apikey origins) may frame the page; no page may frame a keyless transfer's.
 */
import { readFile } from 'node:fs/promises';
import { Hono, type Context } from 'hono';
import type { BrowserOrigins } from '../../partners/allowedOrigins.ts';
import { ROUTE_ID_PATTERN } from '../../transfers/transferService.ts';

export const TRACKING_PAGE_PREFIX = '/t';

/**
 * Nothing but this server, and nothing inline; framed by the `frameAncestors` origins only (none: by no page).
 * The origins are stored ones (src/partners/origins.ts): scheme://host[:port], nothing that could end the directive.
 */
export function trackingPageCsp(frameAncestors: readonly string[]): string {
  return [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    "connect-src 'self'",
    "img-src 'self' data:",
    "base-uri 'none'",
    "form-action 'none'",
    `frame-ancestors ${frameAncestors.length === 0 ? "'none'" : frameAncestors.join(' ')}`,
  ].join('; ');
}

/** The policy of every answer under /t but a transfer's page: framed by no page. */
export const TRACKING_PAGE_CSP = trackingPageCsp([]);

// Beside this module's folder in the sources and in the build alike (scripts/build.ts copies the folder to dist/).
const FILES = new URL('../trackingPage/', import.meta.url);

const NOT_A_TRANSFER = `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <title>Not a transfer link · private-route</title>
    <link rel="icon" href="data:," />
    <link rel="stylesheet" href="${TRACKING_PAGE_PREFIX}/app.css" />
  </head>
  <body>
    <main>
      <h1>Not a transfer link</h1>
      <p>This address names no transfer: a transfer's link looks like <code>${TRACKING_PAGE_PREFIX}/rt_…#st_…</code>. Check that it was copied whole.</p>
    </main>
  </body>
</html>
`;

/** The headers of every answer under /t. */
function secure(c: Context, cacheControl: string, csp = TRACKING_PAGE_CSP) {
  c.header('Content-Security-Policy', csp);
  c.header('Referrer-Policy', 'no-referrer');
  c.header('X-Content-Type-Options', 'nosniff');
  c.header('Cache-Control', cacheControl);
}

export function trackingPageRoutes(origins?: Pick<BrowserOrigins, 'ofRoute'>) {
  // Each file is read once, when first asked for.
  const cache = new Map<string, Promise<string>>();
  const file = (name: string) => {
    let text = cache.get(name);
    if (!text) cache.set(name, (text = readFile(new URL(name, FILES), 'utf8')));
    return text;
  };
  // Script and stylesheet change only with a deployment: five minutes of caching, revalidated after that.
  const ASSET_CACHE = 'public, max-age=300';

  const app = new Hono();
  app.get(`${TRACKING_PAGE_PREFIX}/app.js`, async (c) => {
    secure(c, ASSET_CACHE);
    c.header('Content-Type', 'text/javascript; charset=utf-8');
    return c.body(await file('app.js'));
  });
  // The page's amounts, a module app.js imports.
  app.get(`${TRACKING_PAGE_PREFIX}/amounts.js`, async (c) => {
    secure(c, ASSET_CACHE);
    c.header('Content-Type', 'text/javascript; charset=utf-8');
    return c.body(await file('amounts.js'));
  });
  app.get(`${TRACKING_PAGE_PREFIX}/app.css`, async (c) => {
    secure(c, ASSET_CACHE);
    c.header('Content-Type', 'text/css; charset=utf-8');
    return c.body(await file('app.css'));
  });
  app.get(`${TRACKING_PAGE_PREFIX}/:routeId`, async (c) => {
    // The page holds nothing of the transfer, but a browser should pick up a new deployment's page at once.
    secure(c, 'no-cache');
    const routeId = c.req.param('routeId');
    if (!ROUTE_ID_PATTERN.test(routeId)) return c.html(NOT_A_TRANSFER, 404);
    const frameAncestors = (await origins?.ofRoute(routeId)) ?? [];
    secure(c, 'no-cache', trackingPageCsp(frameAncestors));
    return c.html(await file('page.html'));
  });
  return app;
}
