/** Waiting with limits: the drill never waits on a process, a server or a chain without one. */

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The promise's value, or null after `ms` or once `signal` aborts (the timer does not outlive the wait). */
export async function within<T>(promise: Promise<T>, ms: number, signal?: AbortSignal): Promise<T | null> {
  let timer: NodeJS.Timeout | undefined;
  let onAbort: (() => void) | undefined;
  const limit = new Promise<null>((resolve) => {
    timer = setTimeout(() => resolve(null), ms);
    onAbort = () => resolve(null);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
  try {
    return await Promise.race([promise, limit]);
  } finally {
    clearTimeout(timer);
    if (onAbort) signal?.removeEventListener('abort', onAbort);
  }
}

/** When `probe` first said true (polled every 200 ms), or null once `limitMs` passed, `stillValid` said false or `signal` aborted. */
export async function untilTrue(
  probe: () => Promise<boolean>,
  limitMs: number,
  { stillValid = () => true, signal }: { stillValid?: () => boolean; signal?: AbortSignal } = {},
): Promise<number | null> {
  const started = Date.now();
  while (Date.now() - started < limitMs && stillValid() && !signal?.aborted) {
    if (await probe().catch(() => false)) return Date.now();
    await sleep(200);
  }
  return null;
}

export const answers200 = (url: string) => () => fetch(url, { signal: AbortSignal.timeout(3000) }).then((r) => r.ok);
