import { heartbeat } from '@temporalio/activity';

/**
 * Heartbeats every `intervalMs` while `work` runs: for activities that wait on something that does not
 * heartbeat itself (a proof queued behind other routes' proofs), so Temporal knows the worker is alive.
 */
export async function whileHeartbeating<T>(work: Promise<T>, intervalMs = 5_000): Promise<T> {
  const timer = setInterval(() => heartbeat(), intervalMs);
  try {
    return await work;
  } finally {
    clearInterval(timer);
  }
}
