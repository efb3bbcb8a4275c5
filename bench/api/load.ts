/**
 * The load generator of bench/api, in its own process so that it does not share the event loop of the API
 * it measures: autocannon at a fixed overall rate against one endpoint, the result as JSON on stdout.
 *
 *   node --import tsx bench/api/load.ts '<LoadSpec as JSON>'
 */
import autocannon from 'autocannon';
import { freshAddress } from '../support/address.ts';

export interface LoadSpec {
  url: string;
  method: 'GET' | 'POST';
  /** Paths to cycle through (GET of several routes); one for the others. */
  paths: string[];
  /** JSON body; `userDestinationAddress` in it is replaced by a fresh address on every request. */
  body?: Record<string, unknown>;
  rate: number;
  durationSeconds: number;
  connections: number;
}

export interface LoadResult {
  requests: number;
  ok: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  achievedRate: number;
  latencyMs: { p50: number; p90: number; p99: number; max: number; mean: number };
}

async function main() {
  const spec = JSON.parse(process.argv[2] ?? '') as LoadSpec;
  let i = 0;
  const result = await autocannon({
    url: spec.url,
    connections: spec.connections,
    overallRate: spec.rate,
    duration: spec.durationSeconds,
    timeout: 30,
    requests: [
      {
        method: spec.method,
        setupRequest: (request) => {
          const path = spec.paths[i++ % spec.paths.length]!;
          if (!spec.body) return { ...request, path };
          const body = 'userDestinationAddress' in spec.body ? { ...spec.body, userDestinationAddress: freshAddress() } : spec.body;
          return { ...request, path, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) };
        },
      },
    ],
  });
  const out: LoadResult = {
    requests: result.requests.total,
    ok: result['2xx'],
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    achievedRate: result.requests.total / spec.durationSeconds,
    latencyMs: { p50: result.latency.p50, p90: result.latency.p90, p99: result.latency.p99, max: result.latency.max, mean: result.latency.mean },
  };
  process.stdout.write(`${JSON.stringify(out)}\n`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
