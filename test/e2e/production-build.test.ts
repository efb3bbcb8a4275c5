/**
 * The service as an operator deploys it: `npm run rehearse` (devnet/rehearsal.ts) performs docs/operations.md's first
 * deployment from dist/ under plain node — roles, a migrations job, a token signer, two workers, two APIs behind a load
 * balancer, a rolling restart and a crash mid-route — and ends with routes paid exactly their quotes. The test runs
 * the command an operator runs and holds it to its last line.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';

const repoRoot = fileURLToPath(new URL('../..', import.meta.url));

describe('the rehearsal of a first deployment', { timeout: 900_000 }, () => {
  test('npm run rehearse passes and its last line says what it proved', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'scripts/rehearse.ts'], {
      cwd: repoRoot,
      env: { ...process.env, ...(process.env.TEST_DATABASE_URL && { REHEARSAL_DATABASE_URL: process.env.TEST_DATABASE_URL }) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const timer = setTimeout(() => child.kill('SIGTERM'), 840_000);
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    clearTimeout(timer);
    const lines = output.trim().split('\n');
    assert.equal(code, 0, output.slice(-8000));
    assert.match(
      lines.at(-1) ?? '',
      /^rehearsal passed: roles \(worker, API and signer as their own least-privilege logins; migrations by a one-shot job, twice at once\), signer keys generated in a PKCS#11 token, 2 workers \+ 2 APIs from dist\/ behind a load balancer \(TRUST_PROXY_HOPS=1, 4 distinct clients\), mid-route a rolling deploy to a second worker version \(promoted, the old one stopped, a waiting route finished on the new one\), an API restarted with 0 failed requests and a worker SIGKILLed, 4 routes quote → create\(quoteId\) → COMPLETED, each paid exactly its quote once \(\d+ s\)$/,
    );
    process.stdout.write(
      `# ${lines
        .filter((line) => line.startsWith('# '))
        .join('; ')
        .replaceAll('# ', '')}\n`,
    );
  });
});
