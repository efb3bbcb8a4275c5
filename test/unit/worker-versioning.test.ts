import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { buildIdOf, workerDeploymentOptions } from '../../src/temporal/workerVersioning.ts';

describe('worker versioning settings (src/temporal/workerVersioning.ts)', { timeout: 10_000 }, () => {
  test('the build id is the workflow code’s hash: the same code the same id, a changed workflow a new one', () => {
    const code = 'export async function transferWorkflowV2() {}';
    assert.equal(buildIdOf(code), buildIdOf(code));
    assert.notEqual(buildIdOf(code), buildIdOf(`${code}\n// a patch`));
    assert.match(buildIdOf(code), /^wf-[0-9a-f]{16}$/);
  });

  const cases: { name: string; settings: { deployment?: string; buildId?: string }; code?: string; expected: unknown }[] = [
    { name: 'no deployment: an unversioned worker', settings: {}, code: 'x', expected: undefined },
    {
      name: 'a deployment: auto-upgrade versions named by the code’s hash',
      settings: { deployment: 'private-route' },
      code: 'x',
      expected: {
        version: { deploymentName: 'private-route', buildId: buildIdOf('x') },
        useWorkerVersioning: true,
        defaultVersioningBehavior: 'AUTO_UPGRADE',
      },
    },
    {
      name: 'a build id given wins over the hash',
      settings: { deployment: 'private-route', buildId: 'release-42' },
      code: 'x',
      expected: { version: { deploymentName: 'private-route', buildId: 'release-42' }, useWorkerVersioning: true, defaultVersioningBehavior: 'AUTO_UPGRADE' },
    },
  ];
  for (const c of cases) test(c.name, () => assert.deepEqual(workerDeploymentOptions(c.settings, c.code), c.expected));

  test('a versioned worker with neither workflow code nor a build id is refused with what to set', () => {
    assert.throws(() => workerDeploymentOptions({ deployment: 'private-route' }, undefined), /TEMPORAL_WORKER_BUILD_ID/);
  });
});
