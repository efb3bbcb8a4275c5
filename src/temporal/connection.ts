/**
 * How every process of the service reaches Temporal: address, TLS (server CA, server name, client certificate for
 * mTLS) or an API key (Temporal Cloud). One function builds the options of the client's `Connection` and the
 * worker's `NativeConnection` from configuration, so the API, the worker, routectl and the local stack agree.
 */
import { readFileSync } from 'node:fs';
import { Client, Connection, type ClientInterceptors, type TLSConfig } from '@temporalio/client';
import type { Config } from '../config.ts';
import { temporalDataConverter, payloadCodecOf } from './codec.ts';
import { isPem, type TemporalConnectionConfig } from './connectionSettings.ts';

export { temporalConnectionProblem, type TemporalConnectionConfig } from './connectionSettings.ts';

/** What both `Connection.connect` and `NativeConnection.connect` take. */
export interface TemporalConnectionOptions {
  address: string;
  tls?: TLSConfig | boolean;
  apiKey?: string;
}

export function temporalConnectionOptions(config: TemporalConnectionConfig): TemporalConnectionOptions {
  const options: TemporalConnectionOptions = { address: config.TEMPORAL_ADDRESS };
  const tls: TLSConfig = {};
  if (config.TEMPORAL_TLS_CERT && config.TEMPORAL_TLS_KEY) {
    tls.clientCertPair = { crt: pemOrFile('TEMPORAL_TLS_CERT', config.TEMPORAL_TLS_CERT), key: pemOrFile('TEMPORAL_TLS_KEY', config.TEMPORAL_TLS_KEY) };
  }
  if (config.TEMPORAL_TLS_CA) tls.serverRootCACertificate = pemOrFile('TEMPORAL_TLS_CA', config.TEMPORAL_TLS_CA);
  if (config.TEMPORAL_TLS_SERVER_NAME) tls.serverNameOverride = config.TEMPORAL_TLS_SERVER_NAME;
  // An API key travels as a bearer token: never over plain text.
  if (Object.keys(tls).length > 0 || config.TEMPORAL_TLS || config.TEMPORAL_API_KEY) options.tls = Object.keys(tls).length > 0 ? tls : true;
  if (config.TEMPORAL_API_KEY) options.apiKey = config.TEMPORAL_API_KEY;
  return options;
}

/** A PEM value given inline (it starts with "-----BEGIN") or as a file path. */
function pemOrFile(name: string, value: string): Buffer {
  if (isPem(value)) return Buffer.from(value);
  try {
    return readFileSync(value);
  } catch (error) {
    throw new Error(`${name}: cannot read ${value} (${(error as NodeJS.ErrnoException).code ?? 'error'}); give a readable PEM file or the PEM text`);
  }
}

export type TemporalClientConfig = TemporalConnectionConfig &
  Pick<Config, 'TEMPORAL_NAMESPACE' | 'PAYLOAD_CODEC' | 'PAYLOAD_CODEC_KEYS' | 'PAYLOAD_CODEC_KEY_ID'>;

/**
 * A client with the configured connection security and the payload codec (encrypted history); `interceptors`: the
 * tracing ones, when tracing is on (temporalClientInterceptors in src/observability/tracing.ts).
 */
export async function connectTemporalClient(
  config: TemporalClientConfig,
  interceptors?: ClientInterceptors,
): Promise<{ connection: Connection; client: Client }> {
  const connection = await Connection.connect(temporalConnectionOptions(config));
  const dataConverter = temporalDataConverter(payloadCodecOf(config));
  return { connection, client: new Client({ connection, namespace: config.TEMPORAL_NAMESPACE, dataConverter, interceptors }) };
}
