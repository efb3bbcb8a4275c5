import type { Client } from '@temporalio/client';
import { Registry } from 'prom-client';
import { checkSignerFingerprint } from '../accounts/signerFingerprint.ts';
import type { Logger } from '../logger.ts';
import { metricsRoute, observabilityRoutes, postgresCheck, serveHttp, temporalCheck, type HttpServer } from '../observability/http.ts';
import { apiHttpRegistry } from '../observability/httpMetrics.ts';
import { metricsRegistry } from '../observability/metrics.ts';
import { startTracing, stopTracing, temporalClientInterceptors } from '../observability/tracing.ts';
import { urlOrigin } from '../redact.ts';
import { privacySettings, transferSettings, type ApiContext } from '../runtime.ts';
import { assertClusterReady } from '../temporal/clusterSetup.ts';
import { connectTemporalClient } from '../temporal/connection.ts';
import { createIdempotencyStore } from '../transfers/idempotency.ts';
import { createStatusFeed } from '../transfers/statusFeed.ts';
import { createTransferService } from '../transfers/transferService.ts';
import { createQuoteRecords, withQuoteRecords } from '../quote/quoteRecords.ts';
import { abuseLimitSettings, createAbuseLimits } from './abuseLimits.ts';
import { createApi } from './app.ts';
import { createBrowserOrigins } from '../partners/allowedOrigins.ts';

export interface RunningApi {
  url: string;
  /** The internal listener serving /metrics (API_METRICS_PORT on METRICS_HOST). */
  metricsUrl: string;
  temporal: Client;
  stop(): Promise<void>;
}

/** Connects to Temporal and serves the REST API on the configured port. */
export async function startApi(service: ApiContext, logger: Logger): Promise<RunningApi> {
  const { config } = service;
  // Refuses to hand out deposit addresses of another signer than the worker's (its xpubs against the recorded addresses).
  await checkSignerFingerprint(service.db, service.addresses, 'api');
  // Traces when an OTLP endpoint is configured: a span per request, and starting a transfer's workflow carries it.
  const tracing = startTracing(config, 'api');
  if (tracing) logger.info('tracing on', { serviceName: tracing.serviceName, endpoint: urlOrigin(tracing.endpoint) });
  const { connection, client: temporal } = await connectTemporalClient(config, temporalClientInterceptors(tracing)).catch(async (error: unknown) => {
    await stopTracing(tracing, logger);
    throw error;
  });
  // Every create starts a workflow with the service's search attributes: without them, refuse to serve at all.
  try {
    await assertClusterReady(connection, config.TEMPORAL_NAMESPACE);
  } catch (error) {
    await connection.close();
    await stopTracing(tracing, logger);
    throw error;
  }
  const quoteRecords = createQuoteRecords(service.db, { ttlSeconds: config.QUOTE_TTL_SECONDS });
  const quotes = withQuoteRecords(service.quotes, quoteRecords);
  const transfers = createTransferService({
    db: service.db,
    temporal,
    taskQueue: config.TEMPORAL_TASK_QUEUE,
    quotes,
    quoteRecords,
    addresses: service.addresses,
    settings: transferSettings(config),
    privacy: privacySettings(config),
  });
  let metricsServer: HttpServer | undefined;
  // One poll loop for every open event stream of this instance (GET /api/private-route/{routeId}/events).
  const statusFeed = createStatusFeed(service.db);
  try {
    const servedChainIds = new Set(Object.keys(config.CHAIN_RPC_URLS).map(Number));
    const abuse = await createAbuseLimits({ db: service.db, settings: abuseLimitSettings(config), hashKey: config.CLIENT_HASH_KEY, logger });
    const app = createApi({
      quotes,
      transfers,
      logger,
      servedChainIds,
      abuse,
      idempotency: createIdempotencyStore(service.db),
      statusFeed,
      webhookAllowHttp: config.WEBHOOK_ALLOW_HTTP,
      events: { trustProxyHops: config.TRUST_PROXY_HOPS, publicEpochSeconds: config.PRIVACY_EXIT_EPOCH_SECONDS },
      tracer: tracing?.tracer,
      browserOrigins: createBrowserOrigins(service.db),
    });
    // Beside the spec routes: /healthz and /readyz (Postgres and Temporal answer). /metrics (transfers by
    // status: the live anonymity set) has a listener of its own that only the scraper's network reaches.
    app.route(
      '/',
      observabilityRoutes({ checks: { postgres: postgresCheck(service.db), temporal: temporalCheck(connection) }, publicReadiness: true, logger }),
    );
    // The HTTP request metrics (src/observability/httpMetrics.ts) are the API's alone.
    const internal = metricsRoute(Registry.merge([metricsRegistry(service.db, logger), apiHttpRegistry]), logger);
    internal.notFound((c) => c.json({ success: false, error: `no such endpoint: ${c.req.method} ${c.req.path} (this listener serves GET /metrics)` }, 404));
    metricsServer = await serveHttp(internal, config.API_METRICS_PORT, config.METRICS_HOST);
    const server = await serveHttp(app, config.PORT, config.HOST);
    const metrics = metricsServer;
    return {
      url: server.url,
      metricsUrl: metrics.url,
      temporal,
      async stop() {
        // Open event streams end first, or the server would wait for them to close.
        await statusFeed.close();
        await server.stop();
        await metrics.stop();
        await connection.close();
        // Last: the spans of the requests just answered are sent.
        await stopTracing(tracing, logger);
      },
    };
  } catch (error) {
    await statusFeed.close();
    await metricsServer?.stop();
    await connection.close();
    await stopTracing(tracing, logger);
    throw error;
  }
}
