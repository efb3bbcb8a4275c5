#!/usr/bin/env node
// Runs the TypeScript CLI through tsx, so `npx routectl` works in the repo without a build step.
// `routectl devnet …` (the local stack's commands) lives in devnet/: production code never imports it.
import { register } from 'tsx/esm/api';

register();
if (process.argv[2] === 'devnet') {
  const { main } = await import('../devnet/cli.ts');
  main(process.argv.slice(3));
} else {
  await import('../src/cli/routectl.ts');
}
