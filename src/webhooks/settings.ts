/** Webhook delivery settings and the delivery workflow's input (type-only for the workflow bundle). */
import type { PublicViewSettings } from '../transfers/publicView.ts';

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
   * PRIVACY_EXIT_EPOCH_SECONDS, PUBLIC_STATUS_DELAY_MAX_SECONDS and PUBLIC_STATUS_HOLD_SECONDS: the public view's clock. Set (the worker always
   * sets it), the deliveries of HELD_UNTIL_END statuses and of the end go out together when the public view shows the
   * route's end. Unset: every delivery goes out at once (tests of delivery alone).
   */
  publicView?: PublicViewSettings;
  requestTimeoutMs: number;
  retry: WebhookRetryPolicy;
}

/**
 * Statuses of the pool phase: their deliveries are held and go out with the route's end, when its public view shows
 * it (docs/privacy.md, "Quiet public channels"), so that traffic to a receiver tells no more of the route's timing
 * than the public view does. Statuses before them (the deposit, public on its chain anyway) go out at once.
 */
export const HELD_UNTIL_END: ReadonlySet<string> = new Set(['RECEIVED_ON_HUB', 'SHIELDED', 'UNSHIELD_SENT', 'BRIDGING_OUT']);

/** The webhookDelivery workflow's input: the event id and the policy, never the URL (it stays in Postgres). */
export interface WebhookDeliveryInput {
  eventId: string;
  maxDelaySeconds: number;
  /** Set: the delivery first waits until this moment (ms since 1970): the public view's moment for the route's end. */
  deliverAfter?: number;
  /** Deliveries started before held deliveries (issue 19's first version): wait for the next epoch of this many seconds. */
  epochSeconds?: number;
  retry: WebhookRetryPolicy;
}

/** Starts the delivery workflow of one event, idempotently (workflow id `webhook-<eventId>`). */
export interface WebhookStarter {
  /** `deliverAfter`: the earliest moment the delivery may go out (absent or past: at once, after the random delay). */
  start(eventId: string, deliverAfter?: Date): Promise<void>;
}

export const WEBHOOK_WORKFLOW_TYPE = 'webhookDelivery';

export function webhookWorkflowId(eventId: string): string {
  return `webhook-${eventId}`;
}
