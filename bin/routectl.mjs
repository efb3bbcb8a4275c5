#!/usr/bin/env node
// Runs the TypeScript CLI through tsx, so `npx routectl` works in the repo without a build step.
import { register } from 'tsx/esm/api';

register();
await import('../src/cli/routectl.ts');
