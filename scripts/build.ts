/**
 * `npm run build`: the production build in dist/, run by plain `node` (npm run start:api, start:worker, start:signer):
 * - the TypeScript of src/, workflows/ and activities/ compiled to JavaScript (tsconfig.build.json; relative imports
 *   rewritten from .ts to .js), with source maps;
 * - the files the code reads beside itself: the prover thread (plain JavaScript), the tracking page's static files
 *   (src/api/trackingPage: HTML, browser script, stylesheet) and the database migrations (the native prover stays
 *   where npm ci built it, native/groth16-prover/build: the build finds it there);
 * - the workflow bundle, prebuilt (dist/workflow-bundle.json), so a worker starts without webpack.
 * The layout mirrors the repository (dist/src, dist/workflows, dist/activities, dist/drizzle), so every path the code
 * finds from its own location (import.meta.url) holds in both.
 */
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createLogger } from '../src/logger.ts';
import { PREBUILT_WORKFLOW_BUNDLE, buildWorkflowBundle } from '../src/temporal/worker.ts';

const repoRoot = fileURLToPath(new URL('..', import.meta.url));
const dist = path.join(repoRoot, 'dist');
const started = Date.now();
const log = (line: string) => process.stdout.write(`${line}\n`);

rmSync(dist, { recursive: true, force: true });
log('compiling TypeScript (tsconfig.build.json)');
execFileSync(process.execPath, [path.join(repoRoot, 'node_modules/typescript/bin/tsc'), '-p', path.join(repoRoot, 'tsconfig.build.json')], {
  stdio: 'inherit',
});

// JavaScript modules the code loads by path (worker threads) are not compiled: copied as they are.
const copyPlainModules = (dir: string) => {
  for (const entry of readdirSync(path.join(repoRoot, dir), { withFileTypes: true })) {
    const relative = path.join(dir, entry.name);
    if (entry.isDirectory()) copyPlainModules(relative);
    else if (entry.name.endsWith('.mjs') && dir !== path.join('src', 'loader')) cpSync(path.join(repoRoot, relative), path.join(dist, relative));
  }
};
copyPlainModules('src');
// Served as they are to browsers (GET /t/…), not run by node.
cpSync(path.join(repoRoot, 'src/api/trackingPage'), path.join(dist, 'src/api/trackingPage'), { recursive: true });
cpSync(path.join(repoRoot, 'drizzle'), path.join(dist, 'drizzle'), { recursive: true });

log('bundling the workflow code');
const bundle = await buildWorkflowBundle(createLogger({ level: 'warn' }));
const bundleFile = path.join(dist, PREBUILT_WORKFLOW_BUNDLE);
mkdirSync(path.dirname(bundleFile), { recursive: true });
writeFileSync(bundleFile, JSON.stringify(bundle));
log(`built dist/ in ${((Date.now() - started) / 1000).toFixed(1)} s: node dist/src/api.js (API), dist/src/worker.js (worker), dist/src/signer.js (signer)`);
