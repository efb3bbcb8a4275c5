import { PrivateRouteApiError, PrivateRouteNetworkError } from './errors.ts';

export function isTransient(error: unknown): boolean {
  return error instanceof PrivateRouteNetworkError || (error instanceof PrivateRouteApiError && error.isRetryable);
}

/** 0.5 s, 1 s, 2 s, … up to 8 s, with jitter so that many clients do not retry in step. */
export function backoff(attempt: number): number {
  const base = Math.min(500 * 2 ** (attempt - 1), 8000);
  return base / 2 + Math.random() * (base / 2);
}

/** Waits `ms`; `unref`: the timer does not keep a Node process alive (reads nobody awaits). */
export function sleep(ms: number, signal: AbortSignal | undefined, unref = false): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    if (unref) (timer as { unref?: () => void }).unref?.();
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
