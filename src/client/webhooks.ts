/**
 * `import { verifyWebhook } from 'private-route/client/webhooks'`: checks a webhook delivery's signature and
 * timestamp (docs/api.md, Webhooks). Server-side only (it uses node:crypto), hence an entry of its own: the main
 * client entry stays free of Node built-ins so that it runs in browsers.
 */
export { DEFAULT_WEBHOOK_TOLERANCE_SECONDS, verifyWebhook } from '../webhooks/signature.ts';
export type { ReceivedHeaders, WebhookVerification } from '../webhooks/signature.ts';
