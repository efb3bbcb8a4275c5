/**
 * The webhook signing secrets (docs/api.md, "Webhooks"), all derived from the worker's WEBHOOK_SIGNING_SECRET, which
 * itself never leaves the worker:
 * - a transfer created with a partner's API key is signed with that partner's secret,
 *   HMAC-SHA256(WEBHOOK_SIGNING_SECRET, "partner-webhook:<id>:<generation>");
 * - a transfer created without a key is signed with the keyless secret, HMAC-SHA256(WEBHOOK_SIGNING_SECRET,
 *   "keyless-webhook"), which the operator hands to keyless integrators (`routectl webhook-secret`).
 * HMAC is a PRF: whoever holds one of these secrets learns nothing of any other, so no integrator can sign a delivery
 * another would accept. Nothing of them is stored. Rotating a partner's secret moves it to the next generation;
 * until the overlap ends, its deliveries carry both signatures.
 */
import { createHmac } from 'node:crypto';
import { WEBHOOK_SECRET_PREFIX } from './signature.ts';

/** `whsec_` + base64 of the key bytes (Standard Webhooks' format: its libraries base64-decode what follows the prefix). */
const secretOf = (key: Buffer) => `${WEBHOOK_SECRET_PREFIX}${key.toString('base64')}`;

/** What the database keeps of a partner's webhook secret: which generation is current, and until when the previous one still signs. */
export interface PartnerWebhookState {
  partnerId: number;
  generation: number;
  previousValidUntil: Date | null;
}

export function partnerWebhookSecret(deploymentSecret: string, partnerId: number, generation: number): string {
  return secretOf(createHmac('sha256', deploymentSecret).update(`partner-webhook:${partnerId}:${generation}`).digest());
}

/** The secret of transfers created without an API key. */
export function keylessWebhookSecret(deploymentSecret: string): string {
  return secretOf(createHmac('sha256', deploymentSecret).update('keyless-webhook').digest());
}

/** The secrets a delivery is signed with: the partner's current one (and its previous one during a rotation's overlap), else the keyless one. */
export function deliverySigningSecrets(deploymentSecret: string, partner: PartnerWebhookState | null, now: Date): string[] {
  if (partner === null) return [keylessWebhookSecret(deploymentSecret)];
  const current = partnerWebhookSecret(deploymentSecret, partner.partnerId, partner.generation);
  const overlapping = partner.generation > 1 && partner.previousValidUntil !== null && partner.previousValidUntil > now;
  return overlapping ? [current, partnerWebhookSecret(deploymentSecret, partner.partnerId, partner.generation - 1)] : [current];
}
