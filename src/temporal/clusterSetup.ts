/**
 * What the service needs of a Temporal cluster before its first create: its namespace, and the custom search
 * attributes every transfer workflow starts with (TransferStatus, NeedsAttention). The dev server of the local stack
 * gets them from its flags (temporal-dev.yaml); any other cluster gets them from `routectl setup`, which calls
 * `setUpCluster`. The API and the worker call `clusterProblems` at start and refuse to run while it finds one:
 * without the attributes every create would fail when it starts its workflow.
 */
import type { Connection } from '@temporalio/client';
import { msToTs } from '@temporalio/common/lib/time.js';
import proto from '@temporalio/proto';
import { SEARCH_ATTRIBUTES } from '../../workflows/types.ts';

// A CommonJS package: its namespaces come through the default export under plain Node.
const { IndexedValueType } = proto.temporal.api.enums.v1;
type IndexedValueType = proto.temporal.api.enums.v1.IndexedValueType;

/** The custom search attributes of the transfer workflow, with their types. */
export const REQUIRED_SEARCH_ATTRIBUTES: Record<string, { type: IndexedValueType; name: string }> = {
  [SEARCH_ATTRIBUTES.status]: { type: IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD, name: 'Keyword' },
  [SEARCH_ATTRIBUTES.needsAttention]: { type: IndexedValueType.INDEXED_VALUE_TYPE_BOOL, name: 'Bool' },
};

/** gRPC status codes the setup tells apart. */
const GRPC = { ALREADY_EXISTS: 6, NOT_FOUND: 5, PERMISSION_DENIED: 7, UNIMPLEMENTED: 12 } as const;
const grpcCode = (error: unknown): number | undefined => (error as { code?: number }).code;

type ClusterConnection = Pick<Connection, 'workflowService' | 'operatorService'>;

const SETUP_HINT = 'run `routectl setup` with the service’s TEMPORAL_* settings (docs/operations.md, "First deployment")';

/** What the namespace lacks for this service, each as one sentence; empty when it is ready. */
export async function clusterProblems(connection: ClusterConnection, namespace: string): Promise<string[]> {
  try {
    await connection.workflowService.describeNamespace({ namespace });
  } catch (error) {
    if (grpcCode(error) === GRPC.NOT_FOUND) return [`the Temporal namespace "${namespace}" does not exist: ${SETUP_HINT}`];
    throw error;
  }
  const present = await customSearchAttributes(connection, namespace);
  const problems: string[] = [];
  for (const [name, { type, name: typeName }] of Object.entries(REQUIRED_SEARCH_ATTRIBUTES)) {
    const found = present[name];
    if (found === undefined) problems.push(`the search attribute ${name} (${typeName}) is not registered in namespace "${namespace}": ${SETUP_HINT}`);
    else if (found !== type) {
      problems.push(
        `the search attribute ${name} in namespace "${namespace}" has type ${IndexedValueType[found]}, not ${typeName}: remove it (temporal operator search-attribute remove) and ${SETUP_HINT}`,
      );
    }
  }
  return problems;
}

/** Throws when the namespace is not ready, naming everything that is missing and how to add it. */
export async function assertClusterReady(connection: ClusterConnection, namespace: string): Promise<void> {
  const problems = await clusterProblems(connection, namespace);
  if (problems.length > 0) throw new ClusterNotReadyError(problems);
}

export class ClusterNotReadyError extends Error {
  override name = 'ClusterNotReadyError';
  constructor(readonly problems: string[]) {
    super(`Temporal is not ready for private-route:\n  ${problems.join('\n  ')}`);
  }
}

export interface ClusterSetupOptions {
  namespace: string;
  /** Create the namespace when it is missing (a self-hosted cluster; Temporal Cloud creates namespaces in its own console). */
  createNamespace: boolean;
  /** How long closed workflow histories are kept, for a namespace this call creates. */
  retentionDays: number;
  /** How long to wait for a new namespace or attribute to become visible. */
  timeoutMs?: number;
  log?: (line: string) => void;
}

/** What `setUpCluster` did: every step, in order, each "created …" or "… already there". */
export type ClusterSetupReport = string[];

/**
 * Creates what `clusterProblems` would report, and nothing else: safe to run again and again (every step checks
 * first), from CI or by hand. Refusals of the cluster (Temporal Cloud answers PERMISSION_DENIED to namespace
 * creation by API) come back as an error that says what to do instead.
 */
export async function setUpCluster(connection: ClusterConnection, options: ClusterSetupOptions): Promise<ClusterSetupReport> {
  const { namespace } = options;
  const log = options.log ?? (() => {});
  const timeoutMs = options.timeoutMs ?? 60_000;
  const report: ClusterSetupReport = [];
  const step = (line: string) => {
    report.push(line);
    log(line);
  };

  if (await namespaceExists(connection, namespace)) step(`namespace "${namespace}" already there`);
  else {
    if (!options.createNamespace) {
      throw new Error(
        `the Temporal namespace "${namespace}" does not exist; create it (Temporal Cloud: its console or tcld), or run setup without --no-create-namespace`,
      );
    }
    try {
      await connection.workflowService.registerNamespace({
        namespace,
        description: 'private-route transfers',
        workflowExecutionRetentionPeriod: msToTs(`${options.retentionDays} days`),
      });
    } catch (error) {
      const code = grpcCode(error);
      if (code === GRPC.PERMISSION_DENIED || code === GRPC.UNIMPLEMENTED) {
        throw new Error(
          `this cluster does not let the service create namespace "${namespace}" (${String(error)}); create it in its console (Temporal Cloud: tcld namespace create) and run setup again`,
        );
      }
      if (code !== GRPC.ALREADY_EXISTS) throw error;
    }
    // Each service of the cluster learns of a new namespace on its own cache refresh (seconds): wait until the one
    // that registers search attributes knows it too.
    await waitFor(
      async () => {
        try {
          await customSearchAttributes(connection, namespace);
          return true;
        } catch (error) {
          if (grpcCode(error) === GRPC.NOT_FOUND) return false;
          throw error;
        }
      },
      timeoutMs,
      `namespace "${namespace}" to become visible`,
    );
    step(`created namespace "${namespace}" (retention ${options.retentionDays} days)`);
  }

  const present = await customSearchAttributes(connection, namespace);
  const missing = Object.entries(REQUIRED_SEARCH_ATTRIBUTES).filter(([name]) => present[name] === undefined);
  for (const [name, { type, name: typeName }] of Object.entries(REQUIRED_SEARCH_ATTRIBUTES)) {
    const found = present[name];
    if (found !== undefined && found !== type) {
      throw new Error(
        `search attribute ${name} exists in "${namespace}" with type ${IndexedValueType[found]}, not ${typeName}: remove it first (temporal operator search-attribute remove --name ${name})`,
      );
    }
    if (found !== undefined) step(`search attribute ${name} (${typeName}) already there`);
  }
  if (missing.length > 0) {
    try {
      await connection.operatorService.addSearchAttributes({
        namespace,
        searchAttributes: Object.fromEntries(missing.map(([name, { type }]) => [name, type])),
      });
    } catch (error) {
      const code = grpcCode(error);
      if (code === GRPC.PERMISSION_DENIED || code === GRPC.UNIMPLEMENTED) {
        const names = missing.map(([name, { name: typeName }]) => `${name} (${typeName})`).join(', ');
        throw new Error(
          `this cluster does not let the service add search attributes (${String(error)}); add ${names} in its console (Temporal Cloud: tcld namespace search-attributes add) and run setup again`,
        );
      }
      if (code !== GRPC.ALREADY_EXISTS) throw error;
    }
    await waitFor(
      async () => {
        const now = await customSearchAttributes(connection, namespace);
        return missing.every(([name]) => now[name] !== undefined);
      },
      timeoutMs,
      `search attributes ${missing.map(([name]) => name).join(', ')} to become visible`,
    );
    for (const [name, { name: typeName }] of missing) step(`created search attribute ${name} (${typeName})`);
  }
  return report;
}

async function namespaceExists(connection: ClusterConnection, namespace: string): Promise<boolean> {
  try {
    await connection.workflowService.describeNamespace({ namespace });
    return true;
  } catch (error) {
    if (grpcCode(error) === GRPC.NOT_FOUND) return false;
    throw error;
  }
}

async function customSearchAttributes(connection: ClusterConnection, namespace: string): Promise<Record<string, IndexedValueType>> {
  const response = await connection.operatorService.listSearchAttributes({ namespace });
  return (response.customAttributes ?? {}) as Record<string, IndexedValueType>;
}

async function waitFor(check: () => Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return;
    if (Date.now() > deadline) throw new Error(`gave up after ${timeoutMs / 1000} s waiting for ${what}; run setup again`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}
