/**
 * The service's Prometheus metrics (prom-client). The SDK's own metrics (`temporal_*`) are served
 * separately by the Temporal Runtime's exporter (src/observability/temporalRuntime.ts).
 *
 * - What this process did (activity step durations, bridge provider errors, Node process metrics) lives
 *   in `processRegistry`.
 * - What the system holds (transfers by status, parked transfers) is read from Postgres at scrape time,
 *   by the registry `metricsRegistry(db)` returns.
 */
import { count, sql } from 'drizzle-orm';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { TRANSFER_STATUSES } from '../domain/status.ts';
import type { Database } from '../db/client.ts';
import { transfers } from '../db/schema.ts';
import type { Logger } from '../logger.ts';
import { BridgeRouteError, BridgeUnavailableError, type DepositAddressBridge } from '../providers/bridge.ts';
import { QuotaExhaustedError } from '../providers/providerQuota.ts';

export const processRegistry = new Registry();
let defaultMetricsOn = false;

/** Wall time of each activity execution (one attempt), by activity type and outcome. */
export const stepDuration = new Histogram({
  name: 'private_route_step_duration_seconds',
  help: 'Duration of one execution (attempt) of a transfer step (Temporal activity), by step and outcome (success|failure)',
  labelNames: ['step', 'outcome'] as const,
  // Steps range from a database write to waiting hours for a deposit or a bridge fill.
  buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 900, 1800, 3600, 10800],
  registers: [processRegistry],
});

export const providerErrors = new Counter({
  name: 'private_route_provider_errors_total',
  help: 'Errors thrown by a provider adapter, by provider, operation and kind (BridgeRouteError|BridgeUnavailableError|other)',
  labelNames: ['provider', 'operation', 'kind'] as const,
  registers: [processRegistry],
});

/** JSON-RPC requests this process sent to the chains (a batch counts each call), by chain and method. */
export const rpcRequests = new Counter({
  name: 'private_route_rpc_requests_total',
  help: 'JSON-RPC calls sent to a chain node by the service (each call of a batch counts), by chain_id and method',
  labelNames: ['chain_id', 'method'] as const,
  registers: [processRegistry],
});

/** Sends the service did not make because the chain asked more than its fee ceiling (FEE_CEILING_GWEI), by chain and step. */
export const sendsDeferred = new Counter({
  name: 'private_route_sends_deferred_total',
  help: 'Sends put off because the chain asked more per gas than its FEE_CEILING_GWEI, by chain_id and step',
  labelNames: ['chain_id', 'step'] as const,
  registers: [processRegistry],
});

export type ProviderErrorKind = 'BridgeRouteError' | 'QuotaExhaustedError' | 'BridgeUnavailableError' | 'other';

export function providerErrorKind(error: unknown): ProviderErrorKind {
  if (error instanceof BridgeRouteError) return 'BridgeRouteError';
  // Our own quota held the call back (src/providers/providerQuota.ts): the provider did not fail.
  if (error instanceof QuotaExhaustedError) return 'QuotaExhaustedError';
  if (error instanceof BridgeUnavailableError) return 'BridgeUnavailableError';
  return 'other';
}

/**
 * Wraps a provider adapter so that every error its methods throw (or reject with) is counted in
 * `private_route_provider_errors_total{provider, operation=<method>, kind}`, then rethrown unchanged.
 */
export function instrumentProvider<T extends object>(adapter: T, provider: string): T {
  const wrapped = new Map<PropertyKey, unknown>();
  return new Proxy(adapter, {
    get(target, property, receiver) {
      const value: unknown = Reflect.get(target, property, receiver);
      if (typeof value !== 'function' || typeof property !== 'string') return value;
      let fn = wrapped.get(property);
      if (!fn) {
        const count = (error: unknown) => providerErrors.inc({ provider, operation: property, kind: providerErrorKind(error) });
        fn = function (this: unknown, ...args: unknown[]) {
          try {
            const result: unknown = Reflect.apply(value, this === receiver ? target : this, args);
            if (result instanceof Promise)
              return result.catch((error: unknown) => {
                count(error);
                throw error;
              });
            return result;
          } catch (error) {
            count(error);
            throw error;
          }
        };
        wrapped.set(property, fn);
      }
      return fn;
    },
  });
}

/** How long a Postgres snapshot is reused across the gauges of one scrape. */
const SNAPSHOT_TTL_MS = 1000;

/** The transfer gauges, computed from the projection table (`transfers`) each time they are scraped. */
export function transferMetricsRegistry(db: Database, logger?: Logger): Registry {
  const registry = new Registry();
  let cached: { at: number; value: Promise<{ byStatus: Map<string, number>; needingAttention: number }> } | undefined;
  const snapshot = () => {
    if (!cached || Date.now() - cached.at > SNAPSHOT_TTL_MS) {
      const value = db
        .select({
          status: transfers.status,
          total: count(),
          needingAttention: sql<number>`count(*) filter (where ${transfers.needsAttention})`.mapWith(Number),
        })
        .from(transfers)
        .groupBy(transfers.status)
        .then((rows) => ({
          byStatus: new Map(rows.map((r) => [r.status, r.total])),
          needingAttention: rows.reduce((sum, r) => sum + r.needingAttention, 0),
        }));
      cached = { at: Date.now(), value };
      // A failed query is not reused.
      value.catch(() => {
        if (cached?.value === value) cached = undefined;
      });
    }
    return cached.value;
  };
  const failed = (error: unknown) => logger?.warn('metrics: reading transfers from Postgres failed', { error: String(error) });

  new Gauge({
    name: 'private_route_transfers',
    help: 'Transfers by current status (from the Postgres projection)',
    labelNames: ['status'] as const,
    registers: [registry],
    async collect() {
      this.reset();
      try {
        const { byStatus } = await snapshot();
        for (const status of new Set<string>([...TRANSFER_STATUSES, ...byStatus.keys()])) this.set({ status }, byStatus.get(status) ?? 0);
      } catch (error) {
        failed(error);
      }
    },
  });

  new Gauge({
    name: 'private_route_transfers_needing_attention',
    help: 'Transfers parked for an operator (a step exhausted its retry budget after funds were received)',
    registers: [registry],
    async collect() {
      this.reset();
      try {
        this.set((await snapshot()).needingAttention);
      } catch (error) {
        failed(error);
      }
    },
  });

  return registry;
}

/** Everything a `/metrics` endpoint of this service serves: this process's metrics and the transfer gauges. */
export function metricsRegistry(db: Database, logger?: Logger): Registry {
  // Node's process metrics (process_*, nodejs_*), started only in processes that serve metrics.
  if (!defaultMetricsOn) {
    collectDefaultMetrics({ register: processRegistry });
    defaultMetricsOn = true;
  }
  return Registry.merge([processRegistry, transferMetricsRegistry(db, logger)]);
}

/** The bridge adapter with its errors counted (see instrumentProvider). */
export function instrumentBridge(bridge: DepositAddressBridge, provider: string): DepositAddressBridge {
  return instrumentProvider(bridge, provider);
}
