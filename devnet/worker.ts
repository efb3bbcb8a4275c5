/**
 * `npm run devnet:worker`: the production worker (src/worker.ts) as its own process against a local stack
 * started with `WORKER=external npm start` (or a drill), configured from the stack's data folder.
 * Variables already set win, so WORKER_HTTP_PORT=0 or LOG_LEVEL=debug still apply.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { WORKER_ENV_FILE } from './stackInfo.ts';

const repoRoot = fileURLToPath(new URL('..', import.meta.url));
const file = path.join(path.resolve(repoRoot, process.env.DATA_DIR ?? '.data'), WORKER_ENV_FILE);
if (!existsSync(file)) {
  process.stderr.write(`no local stack configuration at ${file}; start the stack first with "WORKER=external npm start"\n`);
  process.exit(2);
}
const stackEnv = JSON.parse(readFileSync(file, 'utf8')) as Record<string, string>;
for (const [name, value] of Object.entries(stackEnv)) process.env[name] ??= value;
await import('../src/worker.ts');
