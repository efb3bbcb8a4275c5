/**
 * `routectl setup`: prepares a Temporal cluster for the service (src/temporal/clusterSetup.ts): the namespace where
 * the cluster lets it, and the search attributes. Idempotent; prints each step. Uses the service's TEMPORAL_*
 * variables (TLS, API key), else the running local stack's.
 */
import { Connection } from '@temporalio/client';
import { setUpCluster } from '../temporal/clusterSetup.ts';
import { temporalConnectionOptions } from '../temporal/connection.ts';
import { print, stackInfo, temporalClientConfig, usageError } from './context.ts';

export async function setup(options: { createNamespace: boolean; retentionDays: string }): Promise<void> {
  const retentionDays = Number(options.retentionDays);
  if (!Number.isSafeInteger(retentionDays) || retentionDays < 1) throw usageError('--retention-days must be a whole number of days, at least 1');
  const config = temporalClientConfig(process.env.TEMPORAL_ADDRESS ? null : stackInfo());
  const connection = await Connection.connect(temporalConnectionOptions(config));
  try {
    await setUpCluster(connection, { namespace: config.TEMPORAL_NAMESPACE, createNamespace: options.createNamespace, retentionDays, log: print });
    print(`Temporal at ${config.TEMPORAL_ADDRESS} is ready for private-route (namespace "${config.TEMPORAL_NAMESPACE}")`);
  } finally {
    await connection.close();
  }
}
