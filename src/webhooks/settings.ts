/** Webhook delivery settings and the delivery workflow's input (type-only for the workflow bundle). */

/** How the delivery activity is retried (Temporal retry policy; durations in milliseconds). */
export interface WebhookRetryPolicy {
  initialIntervalMs: number;
  backoffCoefficient: number;
  maximumIntervalMs: number;
  /** All attempts together; after it the delivery is marked failed. */
  scheduleToCloseMs: number;
}

/** 5 s, 10 s, 20 s … up to 10 min between attempts, for 24 h. */
export const DEFAULT_WEBHOOK_RETRY: WebhookRetryPolicy = {
  initialIntervalMs: 5_000,
  backoffCoefficient: 2,
  maximumIntervalMs: 600_000,
  scheduleToCloseMs: 24 * 3600_000,
};

export const WEBHOOK_REQUEST_TIMEOUT_MS = 10_000;

/** The worker's webhook settings (WEBHOOK_* in src/config.ts). */
export interface WebhookSettings {
  /** WEBHOOK_SIGNING_SECRET: the HMAC key of every delivery's signature. Never leaves the worker. */
  signingSecret: string;
  /** WEBHOOK_ALLOW_PRIVATE_TARGETS: POSTs to private, loopback and link-local addresses allowed (local stack, tests). */
  allowPrivateTargets: boolean;
  /** WEBHOOK_MAX_DELAY_SECONDS: each delivery waits a random 0..max seconds first (docs/privacy.md). */
  maxDelaySeconds: number;
  /**
   * PRIVACY_EXIT_EPOCH_SECONDS: deliveries of the statuses in EPOCH_ALIGNED_STATUSES wait for the next exit epoch to
   * begin before their random delay. Unset: none waits (tests of delivery alone).
   */
  exitEpochSeconds?: number;
  requestTimeoutMs: number;
  retry: WebhookRetryPolicy;
}

/**
 * Statuses from the pool's deposit on: their deliveries go out at the start of the exit epoch after they happened (in
 * its first WEBHOOK_MAX_DELAY_SECONDS), so that traffic to a receiver times the route's pool phase to the epoch and no
 * finer (docs/privacy.md, "Quiet public channels"). A deposit's BRIDGING_IN follows a public transfer anyway.
 */
export const EPOCH_ALIGNED_STATUSES: ReadonlySet<string> = new Set(['RECEIVED_ON_HUB', 'SHIELDED', 'UNSHIELD_SENT', 'BRIDGING_OUT', 'COMPLETED', 'FAILED']);

/** The webhookDelivery workflow's input: the event id and the policy, never the URL (it stays in Postgres). */
export interface WebhookDeliveryInput {
  eventId: string;
  maxDelaySeconds: number;
  /** Set: the delivery first waits for the next epoch of this many seconds on the clock to begin. */
  epochSeconds?: number;
  retry: WebhookRetryPolicy;
}

/** Starts the delivery workflow of one event, idempotently (workflow id `webhook-<eventId>`). */
export interface WebhookStarter {
  /** `status`: the event's, which decides whether the delivery waits for the next exit epoch. */
  start(eventId: string, status: string): Promise<void>;
}

export const WEBHOOK_WORKFLOW_TYPE = 'webhookDelivery';

export function webhookWorkflowId(eventId: string): string {
  return `webhook-${eventId}`;
}
