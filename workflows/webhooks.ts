import { isCancellation, proxyActivities, sleep, workflowInfo } from '@temporalio/workflow';
import type { TransferActivities } from '../activities/index.ts';
import { nextEpochStart } from '../src/privacy/exitEpochs.ts';
import type { WebhookDeliveryInput } from '../src/webhooks/settings.ts';
import { taskQueues } from './types.ts';

/**
 * Delivers one webhook event (workflow id `webhook-<eventId>`, started by writeStatus through
 * activities/webhooks.ts): waits until `deliverAfter` (a held pool-phase status or an end: the moment the route's public
 * view shows its end) and a random 0..maxDelaySeconds, so that the service's outbound traffic does not time the route's
 * pool phase (docs/privacy.md), then runs `deliverWebhook` until the
 * receiver accepts it or the retry policy runs out, and then marks the delivery failed. The input holds the event
 * id and the policy only: the URL is read from Postgres by the activity and never enters the history.
 */
export async function webhookDelivery(input: WebhookDeliveryInput): Promise<void> {
  // The workflow's Math.random is seeded per execution: the same delay on every replay. Inputs of deliveries started
  // before held deliveries (epochSeconds, or neither field) wait exactly as they did.
  const now = Date.now();
  const untilMs =
    input.deliverAfter !== undefined ? Math.max(0, input.deliverAfter - now) : input.epochSeconds ? nextEpochStart(now, input.epochSeconds) - now : 0;
  const delayMs = untilMs + Math.floor(Math.random() * (Math.max(0, input.maxDelaySeconds) * 1000 + 1));
  if (delayMs > 0) await sleep(delayMs);
  // The waits queue: a slow receiver holds a slot for up to 10 s, and must not hold one of the money-moving steps'.
  const queue = taskQueues(workflowInfo().taskQueue).waits;
  const { deliverWebhook } = proxyActivities<TransferActivities>({
    taskQueue: queue,
    // Above the request's own 10 s timeout and the two database writes around it.
    startToCloseTimeout: '60 seconds',
    scheduleToCloseTimeout: input.retry.scheduleToCloseMs,
    retry: {
      initialInterval: input.retry.initialIntervalMs,
      backoffCoefficient: input.retry.backoffCoefficient,
      maximumInterval: input.retry.maximumIntervalMs,
    },
  });
  const { markWebhookFailed } = proxyActivities<TransferActivities>({
    taskQueue: queue,
    startToCloseTimeout: '30 seconds',
    retry: { initialInterval: '1 second', maximumInterval: '1 minute' },
  });
  try {
    await deliverWebhook({ eventId: input.eventId });
  } catch (error) {
    if (isCancellation(error)) throw error;
    // Refused for good, or the retries ran out: recorded, and the workflow ends without failing.
    await markWebhookFailed({ eventId: input.eventId });
  }
}
