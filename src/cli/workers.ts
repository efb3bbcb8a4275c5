/**
 * `routectl workers [--deployment D]` and `routectl workers promote <buildId> [--deployment D]`: the versions of the
 * worker deployment (TEMPORAL_WORKER_DEPLOYMENT) and which one gets the workflow tasks (src/temporal/workerVersioning.ts).
 * A rolling deploy: start the new build's workers beside the old ones (each logs its build id), promote it, stop the
 * old workers once `routectl workers` shows their version drained.
 */
import { Connection } from '@temporalio/client';
import { temporalConnectionOptions } from '../temporal/connection.ts';
import { describeDeployment, promoteVersion } from '../temporal/workerVersioning.ts';
import { print, stackInfo, temporalClientConfig, usageError } from './context.ts';

function deploymentName(given: string | undefined): string {
  const name = given ?? process.env.TEMPORAL_WORKER_DEPLOYMENT;
  if (!name) throw usageError('name the worker deployment: --deployment <name> or TEMPORAL_WORKER_DEPLOYMENT (the workers’ setting)');
  return name;
}

async function withConnection<T>(run: (connection: Connection, namespace: string) => Promise<T>): Promise<T> {
  const config = temporalClientConfig(process.env.TEMPORAL_ADDRESS ? null : stackInfo());
  const connection = await Connection.connect(temporalConnectionOptions(config));
  try {
    return await run(connection, config.TEMPORAL_NAMESPACE);
  } finally {
    await connection.close();
  }
}

export async function listVersions(options: { deployment?: string; json: boolean }): Promise<void> {
  const name = deploymentName(options.deployment);
  const view = await withConnection((connection, namespace) => describeDeployment(connection, namespace, name));
  if (options.json) {
    print(JSON.stringify(view));
    return;
  }
  if (!view) {
    print(`no worker of deployment "${name}" has polled yet: start the workers with TEMPORAL_WORKER_DEPLOYMENT=${name}`);
    return;
  }
  print(`deployment ${name}: current version ${view.current ?? '(none: workflow tasks wait until one is promoted)'}`);
  for (const version of view.versions) print(`  ${version.buildId.padEnd(24)} ${version.status.padEnd(10)} ${version.createdAt?.toISOString() ?? ''}`);
}

export async function promote(buildId: string | undefined, options: { deployment?: string; operator: string }): Promise<void> {
  if (!buildId) throw usageError('workers promote needs the build id the new workers logged ("worker running" → versioning.buildId)');
  const name = deploymentName(options.deployment);
  const { previous } = await withConnection((connection, namespace) => promoteVersion(connection, namespace, name, buildId, `routectl:${options.operator}`));
  print(`deployment ${name}: ${buildId} is current (was ${previous ?? 'none'}); workflow tasks go to its workers from now on`);
}
