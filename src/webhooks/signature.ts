/**
 * Webhook signatures, exactly as Standard Webhooks (standardwebhooks.com) defines them, so its libraries (and svix's)
 * verify our deliveries (docs/api.md, "Webhooks"). Each delivery carries
 *
 *   Webhook-Id:        <routeId>:<statusSeq>           (the event id, also the body's `id`)
 *   Webhook-Timestamp: <unix seconds of this attempt>
 *   Webhook-Signature: v1,<base64 HMAC-SHA256(key, "<id>.<timestamp>.<raw body>")>
 *
 * where the key is the secret's bytes: `whsec_<base64>`, the part after the prefix base64-decoded.
 *
 * Dependency-free (node:crypto only) on purpose: the typed client re-exports verifyWebhook, so this module
 * must not pull any server code into a client's bundle.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

export const WEBHOOK_SIGNATURE_VERSION = 'v1';
/** Standard Webhooks' secret prefix: the rest is the key, base64. */
export const WEBHOOK_SECRET_PREFIX = 'whsec_';

/** How far a delivery's timestamp may be from the receiver's clock before it is refused (replays). */
export const DEFAULT_WEBHOOK_TOLERANCE_SECONDS = 300;

// A type literal, not an interface: it is then assignable to a plain header record.
export type WebhookHeaders = {
  'Webhook-Id': string;
  'Webhook-Timestamp': string;
  'Webhook-Signature': string;
};

/**
 * The headers of one delivery of `rawBody`, signed at `timestamp` (unix seconds; now by default). Several secrets (a
 * rotation's new and old) give several space-separated signatures, any of which verifies.
 */
export function signWebhook(
  secret: string | readonly string[],
  eventId: string,
  rawBody: string,
  timestamp: number = Math.floor(Date.now() / 1000),
): WebhookHeaders {
  const ts = String(Math.floor(timestamp));
  const signatures = (typeof secret === 'string' ? [secret] : secret).map(
    (s) => `${WEBHOOK_SIGNATURE_VERSION},${signatureOf(s, eventId, ts, rawBody).toString('base64')}`,
  );
  return { 'Webhook-Id': eventId, 'Webhook-Timestamp': ts, 'Webhook-Signature': signatures.join(' ') };
}

export type WebhookVerification = { ok: true; eventId: string; timestamp: number } | { ok: false; reason: string };

/** Headers as a receiver has them: a Fetch `Headers`, or Node's lower-cased header object. */
export type ReceivedHeaders = Headers | Record<string, string | string[] | undefined>;

/**
 * Checks a delivery: the signature over the exact raw body (verify before parsing JSON) and a timestamp
 * within `toleranceSeconds` of `now` (unix seconds). Never throws for a bad delivery: answers why it is bad.
 */
export function verifyWebhook(
  secret: string,
  headers: ReceivedHeaders,
  rawBody: string | Uint8Array,
  opts: { toleranceSeconds?: number; now?: number } = {},
): WebhookVerification {
  const tolerance = opts.toleranceSeconds ?? DEFAULT_WEBHOOK_TOLERANCE_SECONDS;
  const now = opts.now ?? Math.floor(Date.now() / 1000);
  const eventId = header(headers, 'webhook-id');
  const ts = header(headers, 'webhook-timestamp');
  const signatures = header(headers, 'webhook-signature');
  if (!eventId || !ts || !signatures) return { ok: false, reason: 'missing Webhook-Id, Webhook-Timestamp or Webhook-Signature header' };
  if (!/^\d{1,12}$/.test(ts)) return { ok: false, reason: 'Webhook-Timestamp is not unix seconds' };
  const timestamp = Number(ts);
  if (Math.abs(now - timestamp) > tolerance)
    return { ok: false, reason: `Webhook-Timestamp is more than ${tolerance} s from now (a replay, or a wrong clock)` };
  const expected = signatureOf(secret, eventId, ts, rawBody);
  // Several signatures (space-separated) let a receiver accept the old and the new secret during a rotation.
  for (const candidate of signatures.split(' ')) {
    const [version, encoded] = candidate.split(',', 2);
    if (version !== WEBHOOK_SIGNATURE_VERSION || !encoded || !/^[A-Za-z0-9+/]{43}=$/.test(encoded)) continue;
    if (timingSafeEqual(Buffer.from(encoded, 'base64'), expected)) return { ok: true, eventId, timestamp };
  }
  return { ok: false, reason: 'no valid v1 signature: wrong secret, or the body was changed' };
}

/** The HMAC key of a secret: `whsec_<base64>` (or the bare base64) decoded, as Standard Webhooks' libraries do. */
export function webhookKey(secret: string): Buffer {
  return Buffer.from(secret.startsWith(WEBHOOK_SECRET_PREFIX) ? secret.slice(WEBHOOK_SECRET_PREFIX.length) : secret, 'base64');
}

function signatureOf(secret: string, eventId: string, timestamp: string, body: string | Uint8Array): Buffer {
  return createHmac('sha256', webhookKey(secret)).update(`${eventId}.${timestamp}.`).update(body).digest();
}

function header(headers: ReceivedHeaders, name: string): string | undefined {
  if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(name) ?? undefined;
  const record = headers as Record<string, string | string[] | undefined>;
  const value = record[name] ?? Object.entries(record).find(([key]) => key.toLowerCase() === name)?.[1];
  return Array.isArray(value) ? value[0] : value;
}
