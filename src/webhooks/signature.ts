/**
 * Webhook signatures (docs/api.md, "Webhooks"). Each delivery carries
 *
 *   Webhook-Id:        <routeId>:<statusSeq>           (the event id, also the body's `id`)
 *   Webhook-Timestamp: <unix seconds of this attempt>
 *   Webhook-Signature: v1=<hex HMAC-SHA256(secret, "<timestamp>.<raw body>")>
 *
 * Dependency-free (node:crypto only) on purpose: the typed client re-exports verifyWebhook, so this module
 * must not pull any server code into a client's bundle.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

export const WEBHOOK_SIGNATURE_VERSION = 'v1';

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
  const signatures = (typeof secret === 'string' ? [secret] : secret).map((s) => `${WEBHOOK_SIGNATURE_VERSION}=${hmacHex(s, ts, rawBody)}`);
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
  const expected = Buffer.from(hmacHex(secret, ts, rawBody), 'hex');
  // Several signatures (space-separated) let a receiver accept the old and the new secret during a rotation.
  for (const candidate of signatures.split(' ')) {
    const [version, hex] = candidate.split('=', 2);
    if (version !== WEBHOOK_SIGNATURE_VERSION || !hex || !/^[0-9a-f]{64}$/i.test(hex)) continue;
    if (timingSafeEqual(Buffer.from(hex, 'hex'), expected)) return { ok: true, eventId, timestamp };
  }
  return { ok: false, reason: 'no valid v1 signature: wrong secret, or the body was changed' };
}

function hmacHex(secret: string, timestamp: string, body: string | Uint8Array): string {
  return createHmac('sha256', secret).update(`${timestamp}.`).update(body).digest('hex');
}

function header(headers: ReceivedHeaders, name: string): string | undefined {
  if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(name) ?? undefined;
  const record = headers as Record<string, string | string[] | undefined>;
  const value = record[name] ?? Object.entries(record).find(([key]) => key.toLowerCase() === name)?.[1];
  return Array.isArray(value) ? value[0] : value;
}
