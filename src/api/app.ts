/**
 * The public REST API: small OpenAPIHono sub-apps (quote, transfers, events, discovery) whose zod schemas both
 * validate the requests and generate GET /openapi.json; GET /docs renders that document, GET /t/<routeId> is the
 * end user's tracking page (src/api/routes/trackingPage.ts). `Api` is the app's type, for a typed client:
 * `hc<Api>(baseUrl)` (src/client).
 */
import { redactUrls } from '../redact.ts';
import { bodyLimit } from './bodyLimit.ts';
import { cors } from './cors.ts';
import type { ApiDeps } from './deps.ts';
import { announceDeprecations } from './deprecation.ts';
import { fail } from './envelope.ts';
import { toApiError } from './errorMapping.ts';
import { observeRequests, requestIdOf, requestIds } from './requestObservability.ts';
import { newApp } from './routes/common.ts';
import { discoveryRoutes } from './routes/discovery.ts';
import { docsRoutes, openApiDocument } from './routes/docs.ts';
import { eventRoutes } from './routes/events.ts';
import { partnerTransferRoutes } from './routes/partnerTransfers.ts';
import { quoteRoutes } from './routes/quote.ts';
import { trackingPageRoutes } from './routes/trackingPage.ts';
import { transferRoutes } from './routes/transfers.ts';

export type { ApiDeps } from './deps.ts';

const MAX_BODY_BYTES = 64 * 1024;

export function createApi(deps: ApiDeps) {
  const root = newApp();
  // Before every route: each answer carries X-Request-Id, and is logged, counted and (tracing on) spanned.
  root.use('*', requestIds(), observeRequests({ logger: deps.logger, tracer: deps.tracer }));
  root.use('/api/*', announceDeprecations(deps.deprecations));
  // A web page's call: CORS headers for the origins its API key allows (src/api/cors.ts); preflights end here.
  root.use('/api/*', cors(deps.browserOrigins));
  root.use(
    '/api/*',
    bodyLimit({ maxBytes: MAX_BODY_BYTES, refuse: (c, status, error) => fail(c, status, status === 413 ? 'BODY_TOO_LARGE' : 'INVALID_REQUEST', error) }),
  );

  const app = root
    .route('/', quoteRoutes(deps))
    .route('/', transferRoutes(deps))
    .route('/', partnerTransferRoutes(deps))
    .route('/', eventRoutes(deps))
    .route('/', discoveryRoutes(deps));

  let document: object | undefined;
  app.route(
    '/',
    docsRoutes(() => (document ??= openApiDocument(app))),
  );
  app.route('/', trackingPageRoutes(deps.browserOrigins));

  app.notFound((c) => fail(c, 404, 'UNKNOWN_ENDPOINT', `no such endpoint: ${c.req.method} ${c.req.path}`));

  app.onError((error, c) => {
    const { failure, internal } = toApiError(error);
    if (internal)
      deps.logger.error('request failed', {
        requestId: requestIdOf(c),
        method: c.req.method,
        path: c.req.path,
        error: redactUrls(error.message),
        name: error.name,
      });
    for (const [name, value] of Object.entries(failure.headers)) c.header(name, value);
    return fail(c, failure.status, failure.code, failure.message);
  });

  return app;
}

/** The API's routes and their request and answer types: `hc<Api>(baseUrl)` from 'hono/client' gives a typed client. */
export type Api = ReturnType<typeof createApi>;
