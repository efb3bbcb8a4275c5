import type { Logger } from './logger.ts';

/** How long one part may take to stop before the stop moves on without it. */
const PART_STOP_LIMIT_MS = 20_000;
/** How often a slow part's stop is reported. */
const WAITING_NOTICE_MS = 2_000;

/**
 * Parts of a process to stop in reverse order of start. Each part's stop is reported while it is slow
 * ("waiting for worker…") and abandoned after a limit, so one part that hangs never hangs the whole stop.
 */
export class StopList {
  private readonly parts: Array<{ name: string; stop: () => Promise<void> }> = [];

  constructor(private readonly logger: Logger) {}

  add(name: string, stop: () => Promise<void>): void {
    this.parts.push({ name, stop });
  }

  async stopAll(): Promise<void> {
    for (const part of this.parts.splice(0).reverse()) await this.stopPart(part.name, part.stop);
  }

  private async stopPart(name: string, stop: () => Promise<void>): Promise<void> {
    const started = Date.now();
    const notice = setInterval(
      () => this.logger.info(`stopping: waiting for ${name}`, { waitedSeconds: Math.round((Date.now() - started) / 1000) }),
      WAITING_NOTICE_MS,
    );
    let limit: NodeJS.Timeout | undefined;
    const abandoned = new Promise<'abandoned'>((resolve) => {
      limit = setTimeout(() => resolve('abandoned'), PART_STOP_LIMIT_MS);
    });
    try {
      const outcome = await Promise.race([stop().then(() => 'stopped' as const), abandoned]);
      if (outcome === 'abandoned') this.logger.error(`stopping: ${name} did not stop within ${PART_STOP_LIMIT_MS / 1000} s; going on without it`);
    } catch (error) {
      this.logger.error(`stopping ${name} failed`, { error: String(error) });
    } finally {
      clearInterval(notice);
      clearTimeout(limit);
    }
  }
}

/**
 * Runs `stop` once on SIGINT or SIGTERM, then exits. A second signal exits at once (a later start stops
 * whatever was left running). Replaces other signal handlers, which would exit before the worker drained.
 */
export function onShutdown(logger: Logger, stop: () => Promise<void>): void {
  let stopping = false;
  const handle = (signal: NodeJS.Signals) => {
    if (stopping) {
      logger.warn('stopping at once on a second signal; the next start stops what is left', { signal });
      process.exit(130);
    }
    stopping = true;
    logger.info('shutting down (a second Ctrl-C stops at once)', { signal });
    stop()
      .then(() => process.exit(0))
      .catch((error: unknown) => {
        logger.error('shutdown failed', { error: String(error) });
        process.exit(1);
      });
  };
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.removeAllListeners(signal);
    process.on(signal, handle);
  }
}
