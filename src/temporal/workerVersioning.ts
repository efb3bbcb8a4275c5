/**
 * Temporal Worker Deployment Versioning (docs/operations.md, "Deploying a changed workflow"): with
 * TEMPORAL_WORKER_DEPLOYMENT set, each worker polls as one version of that deployment, its build id the hash of the
 * workflow code it runs (or TEMPORAL_WORKER_BUILD_ID). Workflow tasks go only to the deployment's current version, so
 * new workers started beside old ones get nothing until `routectl workers promote <buildId>`; from then on every
 * transfer (auto-upgrade: the patches and replay tests keep a running transfer valid on new code) moves to the new
 * workers at its next task, and the old ones drain and can be stopped. Unset: unversioned workers, as before.
 */
import { createHash } from 'node:crypto';
import { type Connection, isGrpcServiceError } from '@temporalio/client';
import proto from '@temporalio/proto';
import type { WorkerDeploymentOptions } from '@temporalio/worker';

const { WorkerDeploymentVersionStatus } = proto.temporal.api.enums.v1;

export interface VersioningSettings {
  /** TEMPORAL_WORKER_DEPLOYMENT: the deployment's name; unset, the worker is unversioned. */
  deployment?: string;
  /** TEMPORAL_WORKER_BUILD_ID: defaults to the workflow code's hash, so workers of one build agree on it. */
  buildId?: string;
}

/** The build id of a workflow bundle: workers built from the same workflow code share it. */
export function buildIdOf(workflowCode: string): string {
  return `wf-${createHash('sha256').update(workflowCode).digest('hex').slice(0, 16)}`;
}

/** The Worker options of a versioned worker, or undefined for an unversioned one. */
export function workerDeploymentOptions(settings: VersioningSettings, workflowCode: string | undefined): WorkerDeploymentOptions | undefined {
  if (!settings.deployment) return undefined;
  const buildId = settings.buildId ?? (workflowCode === undefined ? undefined : buildIdOf(workflowCode));
  if (!buildId) throw new Error('a versioned worker without workflows needs TEMPORAL_WORKER_BUILD_ID');
  return {
    version: { deploymentName: settings.deployment, buildId },
    useWorkerVersioning: true,
    defaultVersioningBehavior: 'AUTO_UPGRADE',
  };
}

export interface DeploymentVersionView {
  buildId: string;
  /** current, ramping, draining, drained, inactive */
  status: string;
  createdAt: Date | null;
}

export interface DeploymentView {
  name: string;
  current: string | null;
  versions: DeploymentVersionView[];
}

const toDate = (t: { seconds?: unknown; nanos?: number | null } | null | undefined) =>
  t?.seconds === undefined || t.seconds === null ? null : new Date(Number(t.seconds) * 1000 + Math.floor((t.nanos ?? 0) / 1e6));

/** The deployment's versions and its current one; null when no worker of it ever polled. */
export async function describeDeployment(connection: Connection, namespace: string, deploymentName: string): Promise<DeploymentView | null> {
  try {
    const { workerDeploymentInfo: info } = await connection.workflowService.describeWorkerDeployment({ namespace, deploymentName });
    const statusName = (status: number | null | undefined) =>
      (WorkerDeploymentVersionStatus[status ?? 0] ?? 'UNSPECIFIED').replace('WORKER_DEPLOYMENT_VERSION_STATUS_', '').toLowerCase();
    return {
      name: deploymentName,
      current: info?.routingConfig?.currentDeploymentVersion?.buildId ?? null,
      versions: (info?.versionSummaries ?? []).map((v) => ({
        buildId: v.deploymentVersion?.buildId ?? '',
        status: statusName(v.status),
        createdAt: toDate(v.createTime),
      })),
    };
  } catch (error) {
    if (isGrpcServiceError(error) && error.code === 5) return null; // NOT_FOUND
    throw error;
  }
}

/** Makes `buildId` the deployment's current version; returns the one it replaced. */
export async function promoteVersion(
  connection: Connection,
  namespace: string,
  deploymentName: string,
  buildId: string,
  identity: string,
): Promise<{ previous: string | null }> {
  const answer = await connection.workflowService.setWorkerDeploymentCurrentVersion({ namespace, deploymentName, buildId, identity });
  return { previous: answer.previousDeploymentVersion?.buildId ?? null };
}
