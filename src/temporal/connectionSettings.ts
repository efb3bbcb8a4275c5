/**
 * The Temporal connection settings (TEMPORAL_* in src/config.ts) and their validation, apart from the connection
 * itself (src/temporal/connection.ts) so that the configuration can check them without importing the client.
 */
import { existsSync } from 'node:fs';

export interface TemporalConnectionConfig {
  TEMPORAL_ADDRESS: string;
  TEMPORAL_TLS?: boolean;
  TEMPORAL_TLS_CERT?: string;
  TEMPORAL_TLS_KEY?: string;
  TEMPORAL_TLS_CA?: string;
  TEMPORAL_TLS_SERVER_NAME?: string;
  TEMPORAL_API_KEY?: string;
}

/**
 * The problem with these settings, or null. A certificate without its key (or the reverse) is refused, and so is
 * a file that cannot be read; the message names the variables, never their values.
 */
export function temporalConnectionProblem(config: TemporalConnectionConfig): string | null {
  if (Boolean(config.TEMPORAL_TLS_CERT) !== Boolean(config.TEMPORAL_TLS_KEY)) {
    return 'TEMPORAL_TLS_CERT and TEMPORAL_TLS_KEY go together (the client certificate and its private key for mTLS): set both or neither';
  }
  if (config.TEMPORAL_TLS === false && (config.TEMPORAL_TLS_CERT || config.TEMPORAL_TLS_CA || config.TEMPORAL_API_KEY)) {
    return 'TEMPORAL_TLS=false contradicts TEMPORAL_TLS_CERT, TEMPORAL_TLS_CA and TEMPORAL_API_KEY (they need TLS): remove TEMPORAL_TLS=false or them';
  }
  for (const name of ['TEMPORAL_TLS_CERT', 'TEMPORAL_TLS_KEY', 'TEMPORAL_TLS_CA'] as const) {
    const value = config[name];
    if (value && !isPem(value) && !existsSync(value)) return `${name} must be a readable PEM file path (or the PEM text itself); the file does not exist`;
  }
  return null;
}

/** A PEM value given inline (rather than as a file path). */
export const isPem = (value: string) => value.trimStart().startsWith('-----BEGIN ');
