import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import proto from '@temporalio/proto';
import { clusterProblems, setUpCluster } from '../../src/temporal/clusterSetup.ts';

const { IndexedValueType } = proto.temporal.api.enums.v1;
const grpcError = (code: number, message: string) => Object.assign(new Error(message), { code });

/** A cluster's namespace and search-attribute calls, in memory; `refuse` makes its writes answer PERMISSION_DENIED. */
function fakeCluster(opts: { namespaces?: string[]; attributes?: Record<string, number>; refuse?: boolean; lagReads?: number } = {}) {
  const namespaces = new Set(opts.namespaces ?? []);
  const attributes: Record<string, Record<string, number>> = {};
  for (const ns of namespaces) attributes[ns] = { ...(opts.attributes ?? {}) };
  const calls: string[] = [];
  let lag = opts.lagReads ?? 0;
  const connection = {
    workflowService: {
      async describeNamespace({ namespace }: { namespace: string }) {
        calls.push('describeNamespace');
        if (!namespaces.has(namespace)) throw grpcError(5, `Namespace ${namespace} is not found.`);
        return {};
      },
      async registerNamespace({ namespace }: { namespace: string }) {
        calls.push('registerNamespace');
        if (opts.refuse) throw grpcError(7, 'PermissionDenied');
        namespaces.add(namespace);
        attributes[namespace] = {};
        return {};
      },
    },
    operatorService: {
      async listSearchAttributes({ namespace }: { namespace: string }) {
        calls.push('listSearchAttributes');
        // A new namespace reaches the operator service's cache a little later.
        if (lag > 0 && lag--) throw grpcError(5, `Namespace ${namespace} is not found.`);
        return { customAttributes: { ...attributes[namespace] } };
      },
      async addSearchAttributes({ namespace, searchAttributes }: { namespace: string; searchAttributes: Record<string, number> }) {
        calls.push('addSearchAttributes');
        if (opts.refuse) throw grpcError(7, 'PermissionDenied');
        Object.assign(attributes[namespace]!, searchAttributes);
        return {};
      },
    },
  };
  return { connection: connection as never, calls };
}

describe('a Temporal cluster for private-route (src/temporal/clusterSetup.ts)', () => {
  test('clusterProblems names what is missing and what to run', async () => {
    const none = fakeCluster();
    assert.deepEqual(await clusterProblems(none.connection, 'prod'), [
      'the Temporal namespace "prod" does not exist: run `routectl setup` with the service’s TEMPORAL_* settings (docs/operations.md, "First deployment")',
    ]);
    const bare = fakeCluster({ namespaces: ['prod'], attributes: { TransferStatus: IndexedValueType.INDEXED_VALUE_TYPE_TEXT } });
    const problems = await clusterProblems(bare.connection, 'prod');
    assert.equal(problems.length, 2);
    assert.match(problems[0]!, /TransferStatus in namespace "prod" has type INDEXED_VALUE_TYPE_TEXT, not Keyword: remove it/);
    assert.match(problems[1]!, /NeedsAttention \(Bool\) is not registered in namespace "prod": run `routectl setup`/);
  });

  test('setUpCluster creates the namespace and the attributes once; a second run only finds them', async () => {
    const cluster = fakeCluster({ lagReads: 2 });
    const first = await setUpCluster(cluster.connection, { namespace: 'prod', createNamespace: true, retentionDays: 30, timeoutMs: 5000 });
    assert.deepEqual(first, [
      'created namespace "prod" (retention 30 days)',
      'created search attribute TransferStatus (Keyword)',
      'created search attribute NeedsAttention (Bool)',
    ]);
    assert.deepEqual(await clusterProblems(cluster.connection, 'prod'), []);
    const writes = cluster.calls.filter((c) => c === 'registerNamespace' || c === 'addSearchAttributes').length;
    const second = await setUpCluster(cluster.connection, { namespace: 'prod', createNamespace: true, retentionDays: 30, timeoutMs: 5000 });
    assert.deepEqual(second, [
      'namespace "prod" already there',
      'search attribute TransferStatus (Keyword) already there',
      'search attribute NeedsAttention (Bool) already there',
    ]);
    assert.equal(cluster.calls.filter((c) => c === 'registerNamespace' || c === 'addSearchAttributes').length, writes, 'nothing written the second time');
  });

  test('a cluster that refuses (Temporal Cloud) gets a message that says where to create things instead', async () => {
    await assert.rejects(
      setUpCluster(fakeCluster({ refuse: true }).connection, { namespace: 'prod', createNamespace: true, retentionDays: 30 }),
      /does not let the service create namespace "prod" .*tcld namespace create/,
    );
    await assert.rejects(
      setUpCluster(fakeCluster({ namespaces: ['prod'], refuse: true }).connection, { namespace: 'prod', createNamespace: true, retentionDays: 30 }),
      /add TransferStatus \(Keyword\), NeedsAttention \(Bool\) in its console \(Temporal Cloud: tcld namespace search-attributes add\)/,
    );
    await assert.rejects(
      setUpCluster(fakeCluster().connection, { namespace: 'prod', createNamespace: false, retentionDays: 30 }),
      /does not exist; create it .*without --no-create-namespace/,
    );
  });
});
