import { type Client, WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import { type WebhookSettings, type WebhookStarter, WEBHOOK_WORKFLOW_TYPE, webhookWorkflowId } from './settings.ts';

/**
 * Starts delivery workflows through `client` on `taskQueue` (the steps queue). A workflow id that was ever
 * used is refused (REJECT_DUPLICATE), so an event is delivered by one workflow only, however often its
 * status is written again.
 */
export function temporalWebhookStarter(client: Client, taskQueue: string, settings: Pick<WebhookSettings, 'maxDelaySeconds' | 'retry'>): WebhookStarter {
  return {
    async start(eventId, deliverAfter) {
      try {
        await client.workflow.start(WEBHOOK_WORKFLOW_TYPE, {
          workflowId: webhookWorkflowId(eventId),
          taskQueue,
          args: [{ eventId, maxDelaySeconds: settings.maxDelaySeconds, retry: settings.retry, ...(deliverAfter && { deliverAfter: deliverAfter.getTime() }) }],
          workflowIdReusePolicy: 'REJECT_DUPLICATE',
        });
      } catch (error) {
        if (!(error instanceof WorkflowExecutionAlreadyStartedError)) throw error;
      }
    },
  };
}
