/**
 * Each partner's webhook signing secret (docs/api.md, "Webhooks"). A transfer created with a partner's API key is
 * signed with that partner's secret, so no partner can sign a delivery another partner would accept; transfers
 * created without a key are signed with the deployment's WEBHOOK_SIGNING_SECRET.
 *
 * A partner's secret is derived, never stored: HMAC-SHA256(WEBHOOK_SIGNING_SECRET, "partner-webhook:<id>:<generation>").
 * Knowing one partner's secret tells nothing of another's (HMAC is a PRF), and the database holds nothing to steal.
 * Rotating moves to the next generation; until the overlap ends, deliveries carry both signatures.
 */
import { createHmac } from 'node:crypto';

export const PARTNER_WEBHOOK_SECRET_PREFIX = 'whsec_';

/** What the database keeps of a partner's webhook secret: which generation is current, and until when the previous one still signs. */
export interface PartnerWebhookState {
  partnerId: number;
  generation: number;
  previousValidUntil: Date | null;
}

export function partnerWebhookSecret(deploymentSecret: string, partnerId: number, generation: number): string {
  const digest = createHmac('sha256', deploymentSecret).update(`partner-webhook:${partnerId}:${generation}`).digest('base64url');
  return `${PARTNER_WEBHOOK_SECRET_PREFIX}${digest}`;
}

/** The secrets a delivery is signed with: the partner's current one (and its previous one during a rotation's overlap), else the deployment's. */
export function deliverySigningSecrets(deploymentSecret: string, partner: PartnerWebhookState | null, now: Date): string[] {
  if (partner === null) return [deploymentSecret];
  const current = partnerWebhookSecret(deploymentSecret, partner.partnerId, partner.generation);
  const overlapping = partner.generation > 1 && partner.previousValidUntil !== null && partner.previousValidUntil > now;
  return overlapping ? [current, partnerWebhookSecret(deploymentSecret, partner.partnerId, partner.generation - 1)] : [current];
}
