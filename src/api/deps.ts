import type { Tracer } from '@opentelemetry/api';
import type { Logger } from '../logger.ts';
import type { BrowserOrigins } from '../partners/allowedOrigins.ts';
import type { QuoteService } from '../quote/quoteService.ts';
import type { IdempotencyStore } from '../transfers/idempotency.ts';
import type { StatusFeed } from '../transfers/statusFeed.ts';
import type { TransferService } from '../transfers/transferService.ts';
import type { AbuseLimits } from './abuseLimits.ts';
import type { Deprecation } from './deprecation.ts';

export interface ApiDeps {
  quotes: QuoteService;
  transfers: TransferService;
  logger: Logger;
  /**
   * Chains this deployment can watch and pay on (those with an RPC URL in CHAIN_RPC_URLS). A chain the bridge
   * lists but the service cannot reach is not offered: quote and create answer 400. Omitted: every bridge chain.
   */
  servedChainIds?: ReadonlySet<number>;
  /**
   * Per-client limits on quote and create (src/api/abuseLimits.ts); omitted: none, and no X-Api-Key is read either
   * (its middleware names the partner), so a key's own transfers (src/api/routes/partnerTransfers.ts) answer 401.
   */
  abuse?: AbuseLimits;
  /** Idempotency-Key on create (src/transfers/idempotency.ts); omitted: the header is validated but not remembered. */
  idempotency?: Pick<IdempotencyStore, 'begin'>;
  /** Status changes for GET …/events (src/transfers/statusFeed.ts); omitted: the endpoint answers 404 UNKNOWN_ENDPOINT. */
  statusFeed?: Pick<StatusFeed, 'changes'>;
  /** WEBHOOK_ALLOW_HTTP: accept http webhookUrls to any host (default: https only, http to localhost). */
  webhookAllowHttp?: boolean;
  /**
   * Event streams: open streams per client address and instance (default 10), the heartbeat interval (default
   * 15 s), the reconnection delay the first event tells clients (`retry:`; default 3 s), the proxies in front of
   * the API (TRUST_PROXY_HOPS, to find the client's address), and the exit epoch (PRIVACY_EXIT_EPOCH_SECONDS; default
   * 1800) on whose clock a stream without a statusToken looks again.
   */
  events?: {
    maxStreamsPerClient?: number;
    maxStreamsPerKey?: number;
    heartbeatMs?: number;
    retryMs?: number;
    trustProxyHops?: number;
    publicEpochSeconds?: number;
  };
  /**
   * The browser origins of the API keys (src/partners/allowedOrigins.ts): CORS on /api/* (src/api/cors.ts) and the
   * tracking page's frame-ancestors. Omitted: no origin is allowed, and no page may frame the tracking page.
   */
  browserOrigins?: BrowserOrigins;
  /** With tracing on (src/observability/tracing.ts): a server span per request; omitted: none. */
  tracer?: Tracer;
  /** Endpoints going away, announced on their answers (src/api/deprecation.ts); omitted: DEPRECATIONS. */
  deprecations?: readonly Deprecation[];
}
