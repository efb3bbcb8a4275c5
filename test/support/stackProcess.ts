/**
 * A local stack in a process of its own, for tests that crash it: `node --import tsx
 * test/support/stackProcess.ts '<json options>'` starts a persistent stack (state in options.dataDir) and
 * prints `READY <apiUrl>` when it serves; SIGINT stops it like Ctrl-C stops `npm start`.
 */
import { startLocalStack } from '../../devnet/stack.ts';
import { createLogger } from '../../src/logger.ts';
import { onShutdown } from '../../src/shutdown.ts';

const options = JSON.parse(process.argv[2] ?? '{}');
const logger = createLogger({ level: 'info' });
const stack = await startLocalStack({ dataDir: options.dataDir, ports: options.ports, pollIntervalMs: 200, env: options.env ?? {}, logger });
process.stdout.write(`READY ${stack.apiUrl}\n`);
onShutdown(logger, () => stack.stop());
