/**
 * How the service's processes load code: TypeScript through tsx, and the ES modules of node_modules by Node
 * itself. tsx's module hook would otherwise process those too, and its loader thread keeps about 300 MiB for the
 * Privacy Pools SDK's 3.5 MB bundle alone (docs/performance.md, "Memory").
 *
 *   node --import ./src/loader/register.mjs src/worker.ts
 */
import { register } from 'node:module';
import 'tsx';

// Registered after tsx, so it runs first and answers for node_modules before tsx's hook sees them.
register('./nativeNodeModules.mjs', import.meta.url);
