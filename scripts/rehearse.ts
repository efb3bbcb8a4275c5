/**
 * `npm run rehearse`: the first deployment of docs/operations.md performed on the local chains from dist/ (roles,
 * migrations job, token signer, two workers, two APIs behind a load balancer, a rolling restart mid-route), ending in
 * routes paid exactly their quotes (devnet/rehearsal.ts). Its last line says what it proved; exit 1 says what failed.
 * REHEARSAL_SKIP_BUILD=1 uses the dist/ already built; REHEARSAL_DATABASE_URL a Postgres superuser's URL instead of a
 * server of its own.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { rehearse } from '../devnet/rehearsal.ts';

const dataDir = await mkdtemp(path.join(tmpdir(), 'private-route-rehearsal-'));
const started = Date.now();
const log = (line: string) => process.stdout.write(`${line}  (${Math.round((Date.now() - started) / 1000)} s)\n`);
try {
  const report = await rehearse({
    dataDir,
    log,
    skipBuild: process.env.REHEARSAL_SKIP_BUILD === '1',
    databaseUrl: process.env.REHEARSAL_DATABASE_URL,
  });
  for (const figure of report.figures) process.stdout.write(`# ${figure}\n`);
  process.stdout.write(`${report.summary} (${Math.round((Date.now() - started) / 1000)} s)\n`);
} catch (error) {
  process.stdout.write(`rehearsal FAILED: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exitCode = 1;
} finally {
  await rm(dataDir, { recursive: true, force: true });
}
