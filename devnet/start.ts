/**
 * `npm start`: the whole service on a local stack (Temporal dev server, Postgres, three anvil chains,
 * the Relay emulator, Privacy Pools with an ASP emulator on the hub, the worker and the API). Ctrl-C stops it; starting again
 * resumes the transfers that were in flight (state lives in .data/).
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ConfigError } from '../src/config.ts';
import { startLocalStack } from './stack.ts';
import { PAYLOAD_CODEC_FILE } from './stackInfo.ts';
import { readTemporalDevConfig } from './temporalServer.ts';
import { createLogger } from '../src/logger.ts';
import { DEFAULT_API_METRICS_PORT, portFromEnv } from '../src/observability/http.ts';
import { DEFAULT_TEMPORAL_METRICS_PORT } from '../src/observability/temporalRuntime.ts';
import { DEFAULT_WORKER_HTTP_PORT } from '../src/observability/workerHttp.ts';
import { onShutdown } from '../src/shutdown.ts';

const repoRoot = fileURLToPath(new URL('..', import.meta.url));
const logger = createLogger({ level: (process.env.LOG_LEVEL as 'info' | undefined) ?? 'info' });

async function main() {
  const started = Date.now();
  const temporal = readTemporalDevConfig();
  const stack = await startLocalStack({
    dataDir: path.resolve(repoRoot, process.env.DATA_DIR ?? '.data'),
    ports: {
      api: Number(process.env.PORT ?? 3000),
      temporal: temporal.port,
      temporalUi: temporal.uiPort,
      postgres: Number(process.env.EMBEDDED_POSTGRES_PORT ?? 5433),
      relay: Number(process.env.RELAY_EMULATOR_PORT ?? 8590),
      iris: Number(process.env.IRIS_EMULATOR_PORT ?? 8591),
      source: 8545,
      hub: 8546,
      destination: 8547,
      workerHttp: portFromEnv('WORKER_HTTP_PORT', DEFAULT_WORKER_HTTP_PORT),
      apiMetrics: portFromEnv('API_METRICS_PORT', DEFAULT_API_METRICS_PORT),
      temporalMetrics: portFromEnv('TEMPORAL_METRICS_PORT', DEFAULT_TEMPORAL_METRICS_PORT),
    },
    env: process.env,
    worker: process.env.WORKER === 'external' ? 'external' : 'in-process',
    logger,
  });

  const chains = stack.manifest.chains.map(
    (c) => `  ${c.displayName.padEnd(20)} chainId ${c.chainId}  ${c.rpcUrl}  ${c.tokens.map((t) => `${t.symbol} ${t.address}`).join('  ')}`,
  );
  process.stdout.write(
    [
      '',
      `private-route local stack is up (${((Date.now() - started) / 1000).toFixed(1)} s)`,
      `  API                  ${stack.apiUrl}   (health ${stack.apiUrl}/healthz · ready ${stack.apiUrl}/readyz)`,
      `  API metrics          ${stack.apiMetricsUrl}   (internal listener, METRICS_HOST)`,
      stack.workerUrl
        ? `  Worker               ${stack.workerUrl}/healthz · ${stack.workerUrl}/readyz · ${stack.workerUrl}/metrics`
        : '  Worker               none in this process (WORKER=external): run it with "npm run devnet:worker"',
      `  Signer               ${stack.signerUrl}   (its own process: the only one holding keys; the API has the xpubs)`,
      ...(stack.temporalMetricsUrl ? [`  Temporal SDK metrics ${stack.temporalMetricsUrl}`] : []),
      `  Temporal Web UI      ${stack.temporal.uiUrl}/namespaces/${stack.temporal.namespace}/workflows`,
      `  Temporal gRPC        ${stack.temporal.address} (namespace ${stack.temporal.namespace})`,
      ...(stack.codec
        ? [
            `  Codec endpoint       ${stack.codec.url}   (history is encrypted; the Web UI decodes through it, the CLI with:`,
            `                       temporal workflow show -n ${stack.temporal.namespace} --address ${stack.temporal.address} -w <routeId> --codec-endpoint ${stack.codec.url} --codec-auth "Bearer $(node -p "require('${path.join(path.resolve(repoRoot, process.env.DATA_DIR ?? '.data'), PAYLOAD_CODEC_FILE)}').authToken")")`,
          ]
        : [`  History              in clear (PAYLOAD_CODEC=off)`]),
      `  Bridge mode          ${stack.config.BRIDGE_PROVIDER === 'cctp' ? `burn-and-mint (CCTP v2, ${stack.config.CCTP_FINALITY})` : 'deposit-address (Relay)'}`,
      `  Relay emulator       ${stack.relay.url}   (fault injection: ${stack.relay.url}/_emulator/faults)`,
      ...(stack.irisUrl ? [`  Iris emulator        ${stack.irisUrl}`] : []),
      `  Database             ${stack.config.DATABASE_URL.replace(/\/\/[^@]*@/, '//')}`,
      `  Privacy Pools        Entrypoint ${stack.manifest.privacyPools.entrypoint}, USDC pool ${stack.manifest.privacyPools.pool} on chain ${stack.manifest.privacyPools.chainId}`,
      `  ASP emulator         ${stack.asp.url}/${stack.manifest.privacyPools.chainId}/public/mt-roots   (X-Pool-Scope: ${stack.manifest.privacyPools.scope})`,
      ...chains,
      '',
      `Try: curl -s localhost:${stack.config.PORT}/api/bridge/chains   ·   npx routectl devnet info   ·   Ctrl-C to stop`,
      '',
    ].join('\n'),
  );

  onShutdown(logger, async () => {
    await stack.stop();
    logger.info('local stack stopped');
  });
}

main().catch((error: unknown) => {
  if (error instanceof ConfigError) logger.error(error.message);
  else logger.error('local stack failed to start', { error: error instanceof Error ? error.stack : String(error) });
  process.exit(1);
});
