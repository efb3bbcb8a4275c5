/**
 * Partner API keys: a partner sends its key in `X-Api-Key` and is limited as itself (its own limits, or the
 * service's) instead of by IP. Only the SHA-256 of a key is stored; the key is shown once, when it is created.
 * A key is 32 random bytes, so an unsalted fast hash is enough: there is nothing to brute-force.
 */
import { randomBytes } from 'node:crypto';
import { and, asc, eq, gte, isNull, sql } from 'drizzle-orm';
import type { Database } from '../db/client.ts';
import { apiKeys, ledgerEntries, transfers } from '../db/schema.ts';
import { secretDigest } from '../secretTokens.ts';
import { originsProblem } from './origins.ts';

const KEY_PREFIX = 'prk_';
/** `prk_` + 32 bytes in base64url (43 characters). */
export const API_KEY_PATTERN = /^prk_[A-Za-z0-9_-]{43}$/;
/** Characters kept (prefix included) so an operator can tell keys apart without the secret. */
const SHOWN_PREFIX_LENGTH = 10;
export const API_KEY_NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

/** A partner's own limits; null: the service's default (RATE_LIMIT_PER_MINUTE and its siblings). */
export interface PartnerLimits {
  requestsPerMinute: number | null;
  createsPerMinute: number | null;
  maxUnfunded: number | null;
}

export interface Partner {
  id: number;
  name: string;
  limits: PartnerLimits;
  /** The partner's fee in basis points on each transfer it creates (0: none). */
  feeBps: number;
  /**
   * Null: all the partner's transfers are one client in an anonymity set. Else it vouches for its users: each
   * userReference is a client of its own, and its users together fill at most this share (bps) of any route's set.
   */
  userShareBps: number | null;
  /** Where the deliveries of its transfers go when a create names no webhookUrl; null: nowhere. */
  webhookUrl: string | null;
  /** Browser origins allowed to call the API with this key (CORS); non-empty: a public browser key (src/partners/origins.ts). */
  allowedOrigins: readonly string[];
}

/** The share of a route's set a vouching partner's users may fill unless the operator says otherwise: half. */
export const DEFAULT_USER_SHARE_BPS = 5_000;

/** The largest partner fee a key may carry, in basis points (5 %). */
export const MAX_PARTNER_FEE_BPS = 500;

export interface ApiKeyListing extends PartnerLimits {
  name: string;
  feeBps: number;
  userShareBps: number | null;
  webhookSecretGeneration: number;
  allowedOrigins: string[];
  keyPrefix: string;
  createdAt: Date;
  revokedAt: Date | null;
}

export class ApiKeyError extends Error {
  override name = 'ApiKeyError';
}

export function hashApiKey(key: string): string {
  return secretDigest(key).toString('hex');
}

export function newApiKey(): string {
  return `${KEY_PREFIX}${randomBytes(32).toString('base64url')}`;
}

/** Stores a new key for `name` and returns it: the only time the key itself is available. */
export async function createApiKey(
  db: Database,
  name: string,
  limits: Partial<PartnerLimits> = {},
  options: { feeBps?: number; userShareBps?: number | null; allowedOrigins?: readonly string[] } = {},
): Promise<{ id: number; key: string; keyPrefix: string }> {
  if (!API_KEY_NAME_PATTERN.test(name)) throw new ApiKeyError('the name must be 1-64 letters, digits, ".", "_" or "-", starting with a letter or digit');
  const feeBps = options.feeBps ?? 0;
  if (!Number.isInteger(feeBps) || feeBps < 0 || feeBps > MAX_PARTNER_FEE_BPS)
    throw new ApiKeyError(`the partner fee must be a whole number of basis points from 0 to ${MAX_PARTNER_FEE_BPS}`);
  const userShareBps = checkedUserShare(options.userShareBps ?? null);
  const allowedOrigins = checkedOrigins(options.allowedOrigins ?? []);
  for (const [field, value] of Object.entries(limits)) {
    if (value !== null && value !== undefined && !(Number.isInteger(value) && value > 0))
      throw new ApiKeyError(`${field} must be a whole number above 0 (leave it out for the service's default)`);
  }
  const key = newApiKey();
  const keyPrefix = key.slice(0, SHOWN_PREFIX_LENGTH);
  const inserted = await db
    .insert(apiKeys)
    .values({
      name,
      keyHash: hashApiKey(key),
      keyPrefix,
      requestsPerMinute: limits.requestsPerMinute ?? null,
      createsPerMinute: limits.createsPerMinute ?? null,
      maxUnfunded: limits.maxUnfunded ?? null,
      feeBps,
      userShareBps,
      allowedOrigins,
    })
    .onConflictDoNothing({ target: apiKeys.name })
    .returning({ id: apiKeys.id });
  if (inserted.length === 0) throw new ApiKeyError(`an API key named "${name}" exists already (revoked ones keep their name); choose another name`);
  return { id: inserted[0]!.id, key, keyPrefix };
}

export async function listApiKeys(db: Database): Promise<ApiKeyListing[]> {
  return db
    .select({
      name: apiKeys.name,
      keyPrefix: apiKeys.keyPrefix,
      requestsPerMinute: apiKeys.requestsPerMinute,
      createsPerMinute: apiKeys.createsPerMinute,
      maxUnfunded: apiKeys.maxUnfunded,
      feeBps: apiKeys.feeBps,
      userShareBps: apiKeys.userShareBps,
      webhookSecretGeneration: apiKeys.webhookSecretGeneration,
      allowedOrigins: apiKeys.allowedOrigins,
      createdAt: apiKeys.createdAt,
      revokedAt: apiKeys.revokedAt,
    })
    .from(apiKeys)
    .orderBy(asc(apiKeys.createdAt), asc(apiKeys.id));
}

/** Revokes the key named `name`; false when there is no such key or it was revoked already. */
export async function revokeApiKey(db: Database, name: string): Promise<boolean> {
  const revoked = await db
    .update(apiKeys)
    .set({ revokedAt: sql`now()` })
    .where(and(eq(apiKeys.name, name), isNull(apiKeys.revokedAt)))
    .returning({ id: apiKeys.id });
  return revoked.length > 0;
}

/** The partner holding `key`, or null for a malformed, unknown or revoked key. */
export async function findPartner(db: Database, key: string): Promise<Partner | null> {
  if (!API_KEY_PATTERN.test(key)) return null;
  const [row] = await db
    .select({
      id: apiKeys.id,
      name: apiKeys.name,
      requestsPerMinute: apiKeys.requestsPerMinute,
      createsPerMinute: apiKeys.createsPerMinute,
      maxUnfunded: apiKeys.maxUnfunded,
      feeBps: apiKeys.feeBps,
      userShareBps: apiKeys.userShareBps,
      webhookUrl: apiKeys.webhookUrl,
      allowedOrigins: apiKeys.allowedOrigins,
    })
    .from(apiKeys)
    .where(and(eq(apiKeys.keyHash, hashApiKey(key)), isNull(apiKeys.revokedAt)));
  if (!row) return null;
  return {
    id: row.id,
    name: row.name,
    limits: { requestsPerMinute: row.requestsPerMinute, createsPerMinute: row.createsPerMinute, maxUnfunded: row.maxUnfunded },
    feeBps: row.feeBps,
    userShareBps: row.userShareBps,
    webhookUrl: row.webhookUrl,
    allowedOrigins: row.allowedOrigins,
  };
}

/** A user share as stored: null (no vouching) or a whole number of basis points from 1 to 10,000. */
function checkedUserShare(shareBps: number | null): number | null {
  if (shareBps !== null && !(Number.isInteger(shareBps) && shareBps >= 1 && shareBps <= 10_000)) {
    throw new ApiKeyError('the user share must be a whole number of basis points from 1 to 10000 (0.5 as --user-share is 5000)');
  }
  return shareBps;
}

/** A key's allowed origins as stored: each a valid origin (src/partners/origins.ts), none twice. */
export function checkedOrigins(origins: readonly string[]): string[] {
  const problem = originsProblem(origins);
  if (problem) throw new ApiKeyError(problem);
  return [...new Set(origins)];
}

/**
 * Sets whether the partner's key vouches for its users, and the share of a set they may fill (null: it no longer
 * vouches; routes created before keep what they were created with). False when there is no such active key.
 */
export async function setUserShare(db: Database, name: string, shareBps: number | null): Promise<boolean> {
  const updated = await db
    .update(apiKeys)
    .set({ userShareBps: checkedUserShare(shareBps) })
    .where(and(eq(apiKeys.name, name), isNull(apiKeys.revokedAt)))
    .returning({ id: apiKeys.id });
  return updated.length > 0;
}

/**
 * Moves the partner's webhook secret to its next generation; the previous one keeps signing (beside the new) for
 * `overlapSeconds`, so the partner can switch without refusing a delivery. Returns the key's id and new generation.
 */
export async function rotateWebhookSecret(db: Database, name: string, overlapSeconds: number): Promise<{ id: number; generation: number } | null> {
  const [row] = await db
    .update(apiKeys)
    .set({
      webhookSecretGeneration: sql`${apiKeys.webhookSecretGeneration} + 1`,
      webhookPreviousValidUntil: sql`now() + make_interval(secs => ${overlapSeconds})`,
    })
    .where(and(eq(apiKeys.name, name), isNull(apiKeys.revokedAt)))
    .returning({ id: apiKeys.id, generation: apiKeys.webhookSecretGeneration });
  return row ?? null;
}

export interface PartnerFeeOwed {
  partner: string;
  chainId: number;
  token: string;
  /** Smallest units of `token`, summed over the partner's completed transfers. */
  amount: string;
  transfers: number;
}

/** Each partner's booked fees (ledger kind partner_fee) per chain and token, since `since` when given. */
export async function partnerFeesOwed(db: Database, since?: Date): Promise<PartnerFeeOwed[]> {
  const rows = await db
    .select({
      partner: apiKeys.name,
      chainId: ledgerEntries.chainId,
      token: ledgerEntries.token,
      amount: sql<string>`sum(${ledgerEntries.amount}::numeric)::text`,
      transfers: sql<number>`count(*)::int`,
    })
    .from(ledgerEntries)
    .innerJoin(transfers, eq(transfers.routeId, ledgerEntries.routeId))
    .innerJoin(apiKeys, eq(apiKeys.id, transfers.partnerId))
    .where(and(eq(ledgerEntries.kind, 'partner_fee'), since === undefined ? undefined : gte(ledgerEntries.createdAt, since)))
    .groupBy(apiKeys.name, ledgerEntries.chainId, ledgerEntries.token)
    .orderBy(asc(apiKeys.name), asc(ledgerEntries.chainId), asc(ledgerEntries.token));
  return rows;
}

/**
 * Sets the partner's default webhook endpoint (null: none): the deliveries of transfers it creates from now on without
 * a webhookUrl of their own go there. The caller checks the URL (src/api/schemas.ts webhookUrlProblem). False when
 * there is no such active key.
 */
export async function setDefaultWebhookUrl(db: Database, name: string, url: string | null): Promise<boolean> {
  const updated = await db
    .update(apiKeys)
    .set({ webhookUrl: url })
    .where(and(eq(apiKeys.name, name), isNull(apiKeys.revokedAt)))
    .returning({ id: apiKeys.id });
  return updated.length > 0;
}
