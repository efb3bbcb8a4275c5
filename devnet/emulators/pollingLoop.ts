/** A background loop of an emulator: one iteration at a time, every `intervalMs` after the previous one ends. */
export interface PollingLoop {
  start(): void;
  /** Stops polling and waits for the running iteration, if any. */
  stop(): Promise<void>;
  /** One iteration now (for tests); never overlaps with the polling loop. */
  tick(): Promise<void>;
}

/** A failed iteration goes to `onError` and the loop goes on: the work is picked up again next time. */
export function pollingLoop(iterate: () => Promise<void>, intervalMs: number, onError: (error: string) => void): PollingLoop {
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  let stopped = true;

  function tick(): Promise<void> {
    running ??= iterate()
      .catch((err: unknown) => onError(firstLine(err)))
      .finally(() => {
        running = undefined;
      });
    return running;
  }

  function schedule(): void {
    if (stopped) return;
    timer = setTimeout(() => {
      void tick().then(schedule);
    }, intervalMs);
  }

  return {
    start() {
      if (!stopped) return;
      stopped = false;
      schedule();
    },
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await running;
    },
    tick,
  };
}

/** The first line of an error's message: enough for an emulator's log. */
export function firstLine(err: unknown): string {
  const text = err instanceof Error ? err.message : String(err);
  return text.split('\n')[0] ?? text;
}
