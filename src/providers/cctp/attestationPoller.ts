import { AsyncResource } from 'node:async_hooks';
import type { Hex } from 'viem';
import { BridgeUnavailableError } from '../bridge.ts';
import { describeError } from '../errorText.ts';
import { IrisRateLimitedError, type IrisClient } from './iris.ts';
import type { AttestationProgress, AttestationState, AttestedMessage, AwaitAttestationOptions } from './types.ts';

export type { AttestationProgress, AttestedMessage, AwaitAttestationOptions } from './types.ts';

/**
 * One poller of Circle's Iris per process, for every burn that waits for its attestation. A waiting route
 * registers its burn and awaits the result; the poller makes the lookups itself:
 *
 * - at most `maxRequestsPerSecond` lookups per second across all burns (Circle allows 35 and blocks a
 *   client that exceeds it for 5 minutes; keep the sum over all processes sharing an IP below that);
 * - per burn, the first check at once, then further apart (×1.25 each time from `initialIntervalMs`, at most
 *   `maxIntervalMs`), whether Iris answered "pending" or failed transiently;
 * - after a 429 no lookup at all until its retryAfterMs has passed;
 * - waiters of the same burn share its lookups.
 *
 * Nothing is kept across restarts: an activity retried after a lost worker simply registers again. With no
 * burn pending no timer runs; close() rejects the waiters and stops the timer.
 */

export interface AttestationPollerOptions {
  iris: Pick<IrisClient, 'getMessages'>;
  /** Default 10. */
  maxRequestsPerSecond?: number;
  /** Wait after a burn's first unanswered check. Default 1 s. */
  initialIntervalMs?: number;
  /** Longest wait between two checks of one burn. Default 10 s (at least initialIntervalMs). */
  maxIntervalMs?: number;
  timers?: PollerTimers;
}

export interface PollerTimers {
  now(): number;
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export interface AttestationPoller {
  /** Resolves once Iris has signed the burn's message; rejects on an error that retrying the lookup cannot fix. */
  awaitAttestation(sourceDomain: number, burnTxHash: Hex, opts?: AwaitAttestationOptions): Promise<AttestedMessage>;
  /** Burns waiting, for metrics and tests. */
  readonly pending: number;
  close(): void;
}

interface Waiter {
  resolve(value: AttestedMessage): void;
  reject(error: unknown): void;
  onProgress?: (progress: AttestationProgress) => void;
  detach(): void;
}

interface Burn {
  domain: number;
  txHash: Hex;
  waiters: Set<Waiter>;
  nextAt: number;
  inFlight: boolean;
  checks: number;
  /** Lookups since registration that did not end the wait: the backoff grows with them. */
  misses: number;
  failures: number;
  last: AttestationState | 'unknown';
}

export const DEFAULT_IRIS_MAX_REQUESTS_PER_SECOND = 10;
/** Gentle: a fast burn is attested within seconds, so the first checks stay close together. */
const BACKOFF_FACTOR = 1.25;

const realTimers: PollerTimers = {
  now: Date.now,
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

export function createAttestationPoller(opts: AttestationPollerOptions): AttestationPoller {
  const rps = opts.maxRequestsPerSecond ?? DEFAULT_IRIS_MAX_REQUESTS_PER_SECOND;
  if (!(rps > 0)) throw new Error(`maxRequestsPerSecond must be positive, got ${rps}`);
  const spacingMs = 1000 / rps;
  const initialMs = opts.initialIntervalMs ?? 1000;
  const maxMs = Math.max(opts.maxIntervalMs ?? 10_000, initialMs);
  const timers = opts.timers ?? realTimers;
  // Lookups run in the poller's own async context, never in that of the activity whose registration set the
  // timer: an activity's context (its heartbeat, its cancellation) must not leak into another's lookups.
  const scope = new AsyncResource('AttestationPoller');

  const burns = new Map<string, Burn>();
  let pausedUntil = 0;
  let lastRequestAt = Number.NEGATIVE_INFINITY;
  let timer: unknown = null;
  let wakeAt = Number.POSITIVE_INFINITY;
  let closed = false;

  const keyOf = (domain: number, txHash: Hex) => `${domain}:${txHash.toLowerCase()}`;
  const backoff = (misses: number) => Math.min(initialMs * BACKOFF_FACTOR ** Math.max(misses - 1, 0), maxMs);

  /** The burn due first among those not being looked up now. */
  function nextDue(): Burn | null {
    let first: Burn | null = null;
    for (const burn of burns.values()) if (!burn.inFlight && (!first || burn.nextAt < first.nextAt)) first = burn;
    return first;
  }

  function schedule() {
    if (closed) return;
    const due = nextDue();
    const at = due ? Math.max(due.nextAt, pausedUntil, lastRequestAt + spacingMs) : Number.POSITIVE_INFINITY;
    if (at === wakeAt && timer !== null) return;
    if (timer !== null) timers.clearTimeout(timer);
    timer = null;
    wakeAt = at;
    if (at !== Number.POSITIVE_INFINITY) timer = timers.setTimeout(() => scope.runInAsyncScope(tick), Math.max(0, at - timers.now()));
  }

  function tick() {
    timer = null;
    wakeAt = Number.POSITIVE_INFINITY;
    const t = timers.now();
    const due = nextDue();
    if (due && due.nextAt <= t && t >= pausedUntil && t >= lastRequestAt + spacingMs) {
      lastRequestAt = t;
      void lookUp(due);
    }
    schedule();
  }

  function settle(key: string, burn: Burn, outcome: { value: AttestedMessage } | { error: unknown }) {
    if (burns.get(key) === burn) burns.delete(key);
    for (const waiter of burn.waiters) {
      waiter.detach();
      if ('value' in outcome) waiter.resolve(outcome.value);
      else waiter.reject(outcome.error);
    }
    burn.waiters.clear();
  }

  function report(burn: Burn, progress: Omit<AttestationProgress, 'checks' | 'nextCheckInMs'>) {
    const full: AttestationProgress = { ...progress, checks: burn.checks, nextCheckInMs: Math.max(0, Math.max(burn.nextAt, pausedUntil) - timers.now()) };
    for (const waiter of burn.waiters) {
      try {
        waiter.onProgress?.(full);
      } catch {
        // A waiter's reporting must not stop the others' lookups.
      }
    }
  }

  async function lookUp(burn: Burn) {
    const key = keyOf(burn.domain, burn.txHash);
    burn.inFlight = true;
    burn.checks++;
    try {
      const status = await opts.iris.getMessages(burn.domain, burn.txHash);
      if (burns.get(key) !== burn) return; // every waiter left meanwhile
      burn.failures = 0;
      if (status.state === 'complete' && status.message && status.attestation) {
        settle(key, burn, { value: status as AttestedMessage });
        return;
      }
      burn.misses++;
      burn.last = status.state;
      burn.nextAt = timers.now() + backoff(burn.misses);
      report(burn, { attestation: status.state, ...(status.delayReason ? { delayReason: status.delayReason } : {}) });
    } catch (error) {
      if (burns.get(key) !== burn) return;
      if (!(error instanceof BridgeUnavailableError) || !error.transient) {
        settle(key, burn, { error });
        return;
      }
      burn.failures++;
      burn.misses++;
      burn.nextAt = timers.now() + backoff(burn.misses);
      const failure = { transientFailures: burn.failures, error: describeError(error) };
      if (error instanceof IrisRateLimitedError) {
        pausedUntil = Math.max(pausedUntil, timers.now() + error.retryAfterMs);
        // Every burn waits now: tell all their waiters why.
        const rateLimitedForMs = pausedUntil - timers.now();
        for (const other of burns.values()) report(other, { attestation: other.last, ...(other === burn ? failure : {}), rateLimitedForMs });
      } else {
        report(burn, { attestation: burn.last, ...failure });
      }
    } finally {
      burn.inFlight = false;
      schedule();
    }
  }

  return {
    awaitAttestation(sourceDomain, burnTxHash, waitOpts = {}) {
      const { signal, onProgress } = waitOpts;
      if (closed) return Promise.reject(new BridgeUnavailableError('the attestation poller is closed: this process is stopping; retry on another worker'));
      if (signal?.aborted) return Promise.reject(signal.reason);
      const key = keyOf(sourceDomain, burnTxHash);
      let burn = burns.get(key);
      if (!burn) {
        burn = {
          domain: sourceDomain,
          txHash: burnTxHash,
          waiters: new Set(),
          nextAt: timers.now(),
          inFlight: false,
          checks: 0,
          misses: 0,
          failures: 0,
          last: 'unknown',
        };
        burns.set(key, burn);
      }
      const joined = burn;
      return new Promise<AttestedMessage>((resolve, reject) => {
        const onAbort = () => {
          joined.waiters.delete(waiter);
          // The last waiter gone: stop looking the burn up (an in-flight lookup's answer is dropped).
          if (joined.waiters.size === 0 && burns.get(key) === joined) burns.delete(key);
          reject(signal?.reason);
          schedule();
        };
        const waiter: Waiter = { resolve, reject, onProgress, detach: () => signal?.removeEventListener('abort', onAbort) };
        joined.waiters.add(waiter);
        signal?.addEventListener('abort', onAbort, { once: true });
        schedule();
      });
    },

    get pending() {
      return burns.size;
    },

    close() {
      if (closed) return;
      closed = true;
      if (timer !== null) timers.clearTimeout(timer);
      timer = null;
      const stopping = new BridgeUnavailableError('the attestation poller closed while waiting: this process is stopping; retry on another worker');
      for (const [key, burn] of burns) settle(key, burn, { error: stopping });
      burns.clear();
    },
  };
}
