/**
 * Health, readiness and metrics endpoints. The API mounts /healthz and /readyz beside its public routes and
 * serves /metrics on a listener of its own (API_METRICS_PORT on METRICS_HOST); the worker serves all three on
 * its internal WORKER_HTTP_PORT. Answers use the API's envelope: `{success, data}` / `{success:false, error}`.
 *
 * - `GET /healthz`: the process is up (200 `{success:true, data:{status:'ok'}}`).
 * - `GET /readyz`: every dependency check passes within its timeout (200), else 503 naming what is down
 *   (and why, unless `publicReadiness`: a reason can carry a host name or address; it is logged instead).
 * - `GET /metrics`: Prometheus text format, only where a `registry` is given.
 */
import { serve, type ServerType } from '@hono/node-server';
import type { Connection } from '@temporalio/client';
import { sql } from 'drizzle-orm';
import { Hono } from 'hono';
import type { Registry } from 'prom-client';
import { ConfigError } from '../config.ts';
import type { Database } from '../db/client.ts';
import type { Logger } from '../logger.ts';
import { withTimeout } from '../withTimeout.ts';

/** Resolves when the dependency answers; rejects (with a short reason) when it does not. */
export type ReadinessCheck = () => Promise<void>;

export interface ObservabilityRoutesOptions {
  /** Named readiness checks, e.g. { postgres, temporal }. */
  checks: Record<string, ReadinessCheck>;
  /** Serves /metrics from it; omitted: no /metrics (the API's public port). */
  registry?: Registry;
  /** /readyz names what is down but not why (the answer is public). */
  publicReadiness?: boolean;
  /** Per-check time limit of /readyz (default 2000 ms). */
  checkTimeoutMs?: number;
  logger?: Logger;
}

export function observabilityRoutes(opts: ObservabilityRoutesOptions): Hono {
  const app = new Hono();
  const timeoutMs = opts.checkTimeoutMs ?? 2000;

  app.get('/healthz', (c) => c.json({ success: true, data: { status: 'ok' } }));

  app.get('/readyz', async (c) => {
    const names = Object.keys(opts.checks);
    const results = await Promise.all(
      names.map((name) =>
        withTimeout(opts.checks[name]!(), timeoutMs).then(
          () => null,
          (error: unknown) => errorMessage(error),
        ),
      ),
    );
    const down = names.flatMap((name, i) => (results[i] === null ? [] : [`${name} (${results[i]})`]));
    if (down.length > 0) {
      opts.logger?.warn('not ready', { down });
      const named = opts.publicReadiness ? names.filter((_, i) => results[i] !== null) : down;
      return c.json({ success: false, error: `not ready: ${named.join(', ')} unavailable` }, 503);
    }
    return c.json({ success: true, data: { status: 'ready', checks: Object.fromEntries(names.map((name) => [name, 'ok'])) } });
  });

  if (opts.registry) app.route('/', metricsRoute(opts.registry, opts.logger));
  return app;
}

/** `GET /metrics` alone, for a listener apart from the public port. */
export function metricsRoute(registry: Registry, logger?: Logger): Hono {
  const app = new Hono();
  app.get('/metrics', async (c) => {
    try {
      const text = await registry.metrics();
      return c.body(text, 200, { 'content-type': registry.contentType });
    } catch (error) {
      logger?.error('metrics failed', { error: errorMessage(error) });
      return c.json({ success: false, error: 'metrics unavailable' }, 500);
    }
  });
  return app;
}

/** Postgres answers `select 1`. */
export function postgresCheck(db: Database): ReadinessCheck {
  return async () => {
    await db.execute(sql`select 1`);
  };
}

/** The Temporal frontend answers GetSystemInfo (a cheap call every server supports). */
export function temporalCheck(connection: Connection, timeoutMs = 2000): ReadinessCheck {
  return async () => {
    await connection.withDeadline(Date.now() + timeoutMs, () => connection.workflowService.getSystemInfo({}));
  };
}

export interface HttpServer {
  url: string;
  stop(): Promise<void>;
}

/** The API's /metrics listener when API_METRICS_PORT is unset (the worker's is 9464, the Temporal SDK's 9465). */
export const DEFAULT_API_METRICS_PORT = 9466;

/** How long a stopping server lets requests in flight finish. */
const STOP_GRACE_MS = 2_000;

/** Serves a Hono app; port 0 picks a free port (the url tells which). */
export function serveHttp(app: Hono, port: number, hostname: string): Promise<HttpServer> {
  return new Promise((resolve, reject) => {
    const server: ServerType = serve({ fetch: app.fetch, port, hostname }, (info) => {
      server.off('error', reject);
      resolve({
        url: `http://${hostPort(hostname, info.port)}`,
        stop: () =>
          new Promise((done) => {
            const http = server as { closeIdleConnections?: () => void; closeAllConnections?: () => void };
            // Requests in flight get a moment to finish; idle keep-alive connections (a scraper's) and
            // whatever is still open after the grace (a watcher's long poll) must not hold the stop.
            const grace = setTimeout(() => http.closeAllConnections?.(), STOP_GRACE_MS);
            server.close(() => {
              clearTimeout(grace);
              done();
            });
            http.closeIdleConnections?.();
          }),
      });
    });
    server.once('error', reject);
  });
}

function errorMessage(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.split('\n')[0]!.slice(0, 200);
}

/** A TCP port from the environment (`name`), or `fallback` when unset. */
export function portFromEnv(name: string, fallback: number, env: Record<string, string | undefined> = process.env): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const port = Number(raw);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new ConfigError(`${name} must be a port number (0-65535), got "${raw}"`);
  return port;
}

/** `host:port`, bracketing an IPv6 host. */
export function hostPort(host: string, port: number): string {
  return host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
}
