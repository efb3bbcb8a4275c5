/**
 * GET /openapi.json (OpenAPI 3.1 from the routes' zod schemas) and GET /docs, the reference page (Scalar). The
 * page's script is served from this server (/docs/scalar.js, the bundle in node_modules) and its Content-Security-
 * Policy allows nothing else: a reader's browser calls no third party (no CDN, no fonts, no telemetry).
 */
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import type { OpenAPIHono } from '@hono/zod-openapi';
import { Scalar } from '@scalar/hono-api-reference';
import { Hono } from 'hono';
import { ERROR_CODES } from '../errorCodes.ts';

export const DOCS_PATH = '/docs';
export const OPENAPI_PATH = '/openapi.json';
const SCRIPT_PATH = '/docs/scalar.js';
// The package's exports do not list its browser bundle, so it is found beside its main entry (dist/index.js), from
// the sources and from the build (dist/) alike.
const SCALAR_BUNDLE = path.join(path.dirname(createRequire(import.meta.url).resolve('@scalar/api-reference')), 'browser', 'standalone.js');

const errorTable = Object.entries(ERROR_CODES)
  .map(([code, { status, meaning }]) => `| \`${code}\` | ${status} | ${meaning} |`)
  .join('\n');

const DESCRIPTION = `Moves value privately from a source chain to a destination chain: quote, create, fund the deposit address, then follow the transfer until COMPLETED or FAILED.

Every answer is JSON in an envelope: \`{ "success": true, "data": … }\` or \`{ "success": false, "error": "…", "code": "…" }\`. Amounts are integer strings in the token's smallest units, except the request's \`amount\` (decimal whole tokens).

## Error codes

| code | HTTP | meaning |
|---|---|---|
${errorTable}
`;

/** The OpenAPI 3.1 document of `app`'s routes (built once). */
export function openApiDocument(app: OpenAPIHono) {
  app.openAPIRegistry.registerComponent('securitySchemes', 'statusToken', {
    type: 'http',
    scheme: 'bearer',
    description: 'The statusToken the create answer returned (`st_…`): opens the full view of that one transfer.',
  });
  app.openAPIRegistry.registerComponent('securitySchemes', 'statusTokenHeader', {
    type: 'apiKey',
    in: 'header',
    name: 'X-Status-Token',
    description: 'The same statusToken, for clients whose Authorization header carries something else.',
  });
  app.openAPIRegistry.registerComponent('securitySchemes', 'apiKey', {
    type: 'apiKey',
    in: 'header',
    name: 'X-Api-Key',
    description: "A partner's API key (`prk_…`): opens the transfers that key created.",
  });
  return app.getOpenAPI31Document({
    openapi: '3.1.0',
    info: { title: 'private-route API', version: '1', description: DESCRIPTION },
    tags: [
      { name: 'Transfers', description: 'Quote, create and follow a transfer.' },
      { name: 'Discovery', description: 'Chains and tokens the service can move.' },
    ],
  });
}

/**
 * Scalar lays markdown tables out in equal fixed columns and breaks words anywhere, which splits the error table's
 * "HTTP" and "400" over three lines: columns as wide as their content, codes and statuses never broken.
 */
const READABLE_TABLES = `
.markdown table { table-layout: auto; }
.markdown table th, .markdown table td { word-break: normal; overflow-wrap: normal; }
.markdown table th:nth-child(-n + 2), .markdown table td:nth-child(-n + 2) { white-space: nowrap; }
.markdown table td:nth-child(n + 3) { overflow-wrap: anywhere; }
`;

/** Nothing but this server: the page's inline scripts by nonce, styles inline (Scalar sets style attributes). */
const contentSecurityPolicy = (nonce: string) =>
  [
    "default-src 'none'",
    `script-src 'self' 'nonce-${nonce}'`,
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data:",
    "font-src 'self' data:",
    "connect-src 'self'",
    "worker-src 'self' blob:",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; ');

export function docsRoutes(document: () => object) {
  let bundle: Promise<Buffer> | undefined;
  const app = new Hono();
  app.get(OPENAPI_PATH, (c) => c.json(document()));
  app.get(SCRIPT_PATH, async (c) => {
    bundle ??= readFile(SCALAR_BUNDLE);
    const body = await bundle;
    c.header('Content-Type', 'text/javascript; charset=utf-8');
    // The bundle only changes with a deployment; a day is long enough to matter and short enough to pick up a new one.
    c.header('Cache-Control', 'public, max-age=86400');
    c.header('X-Content-Type-Options', 'nosniff');
    return c.body(new Uint8Array(body));
  });
  app.get(DOCS_PATH, async (c, next) => {
    const nonce = randomBytes(16).toString('base64');
    c.header('Content-Security-Policy', contentSecurityPolicy(nonce));
    c.header('Referrer-Policy', 'no-referrer');
    c.header('X-Content-Type-Options', 'nosniff');
    return Scalar({
      url: OPENAPI_PATH,
      cdn: SCRIPT_PATH,
      nonce,
      pageTitle: 'private-route API reference',
      withDefaultFonts: false,
      telemetry: false,
      hideClientButton: true,
      hideTestRequestButton: true,
      showDeveloperTools: 'never',
      mcp: { disabled: true },
      // "Ask AI" would send the reader's questions and our document to Scalar's agent service.
      agent: { disabled: true },
      defaultOpenAllTags: true,
      customCss: READABLE_TABLES,
    })(c, next);
  });
  return app;
}
