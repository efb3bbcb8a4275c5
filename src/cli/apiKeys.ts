/**
 * routectl apikey and partner: partner API keys, their webhook secrets and fees (src/partners/apiKeys.ts). Needs the
 * database, and WEBHOOK_SIGNING_SECRET (or the local stack's) to show a partner's webhook secret.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { connectDatabase, type Database } from '../db/client.ts';
import {
  ApiKeyError,
  createApiKey,
  DEFAULT_USER_SHARE_BPS,
  listApiKeys,
  partnerFeesOwed,
  revokeApiKey,
  rotateWebhookSecret,
  setDefaultWebhookUrl,
  setUserShare,
  type PartnerLimits,
} from '../partners/apiKeys.ts';
import { webhookUrlProblem } from '../webhooks/webhookUrl.ts';
import { setAllowedOrigins } from '../partners/allowedOrigins.ts';
import { finishAction, requestAction } from '../operators/audit.ts';
import { keylessWebhookSecret, partnerWebhookSecret } from '../webhooks/signingSecrets.ts';
import type { Operator } from './operator.ts';
import { CliError, dataDir, print, stackInfo, usageError } from './context.ts';
import { WEBHOOK_SECRET_FILE } from './localStack.ts';

/**
 * The worker's WEBHOOK_SIGNING_SECRET: the environment's, else (only without DATABASE_URL, i.e. for the local stack)
 * the local stack's; null where neither is here.
 */
function deploymentWebhookSecret(): string | null {
  if (process.env.WEBHOOK_SIGNING_SECRET) return process.env.WEBHOOK_SIGNING_SECRET;
  if (process.env.DATABASE_URL) return null;
  const file = path.join(dataDir(), WEBHOOK_SECRET_FILE);
  return existsSync(file) ? readFileSync(file, 'utf8').trim() : null;
}

/** The secret that signs the deliveries of transfers created without an API key, for the operator to hand out. */
export function keylessSecret(): void {
  const deployment = deploymentWebhookSecret();
  if (deployment === null) throw new CliError('WEBHOOK_SIGNING_SECRET is not set here: the webhook secrets are derived from it (docs/api.md, "Webhooks")', 4);
  print(
    `The webhook signing secret of transfers created without an API key (give it to keyless integrators; partners get their own with routectl apikey create):\n${keylessWebhookSecret(deployment)}`,
  );
}

function webhookSecretLines(id: number, generation: number): string {
  const deployment = deploymentWebhookSecret();
  if (deployment === null) {
    return 'Its webhook secret was not shown: run `routectl apikey rotate-webhook-secret --name <name>` with WEBHOOK_SIGNING_SECRET set to hand one out.';
  }
  return `Its webhook signing secret (shown this once; deliveries of its transfers are signed with it, verify them with it):\n${partnerWebhookSecret(deployment, id, generation)}`;
}

async function withDatabase<T>(fn: (db: Database) => Promise<T>): Promise<T> {
  // DATABASE_URL alone is enough here (no Temporal), else the running local stack's.
  const database = connectDatabase(process.env.DATABASE_URL ?? stackInfo().databaseUrl, { max: 1 });
  try {
    return await fn(database.db);
  } finally {
    await database.close();
  }
}

/** A limit flag: a whole number above 0, or undefined when not given (the service's default applies). */
function limitFlag(flag: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n <= 0) throw usageError(`--${flag} must be a whole number above 0 (leave it out for the service's default)`);
  return n;
}

/** Rows under a header, each column as wide as its widest cell. */
function table(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  return [header, ...rows]
    .map((r) =>
      r
        .map((cell, i) => cell.padEnd(widths[i]!))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

/** --vouch-users [--user-share F]: the share (0 < F ≤ 1) in basis points; null without --vouch-users. */
function userShareFlag(flags: { vouchUsers?: boolean; userShare?: string }): number | null {
  if (!flags.vouchUsers) {
    if (flags.userShare !== undefined) throw usageError('--user-share goes with --vouch-users');
    return null;
  }
  if (flags.userShare === undefined) return DEFAULT_USER_SHARE_BPS;
  const share = Number(flags.userShare);
  if (!Number.isFinite(share) || share <= 0 || share > 1) throw usageError('--user-share must be a fraction above 0 and at most 1 (0.5: half of a set)');
  return Math.round(share * 10_000);
}

const shareText = (shareBps: number | null) =>
  shareBps === null
    ? 'one client in every anonymity set'
    : `vouches for its users (each userReference a client; together at most ${shareBps / 100} % of a set)`;

export async function create(
  name: string | undefined,
  flags: {
    perMinute?: string;
    createsPerMinute?: string;
    maxUnfunded?: string;
    feeBps?: string;
    vouchUsers?: boolean;
    userShare?: string;
    origins?: string[];
  },
): Promise<void> {
  if (!name) throw usageError('apikey create needs --name <partner name>');
  const limits: Partial<PartnerLimits> = {
    requestsPerMinute: limitFlag('per-minute', flags.perMinute),
    createsPerMinute: limitFlag('creates-per-minute', flags.createsPerMinute),
    maxUnfunded: limitFlag('max-unfunded', flags.maxUnfunded),
  };
  const feeBps = flags.feeBps === undefined ? 0 : Number(flags.feeBps);
  const userShareBps = userShareFlag(flags);
  if (userShareBps !== null && flags.origins !== undefined)
    throw usageError('a key with --origin is public, so it cannot vouch for its users (--vouch-users): give the partner a server key for that');
  const { key, id } = await withDatabase(async (db) => {
    try {
      return await createApiKey(db, name, limits, { feeBps, userShareBps, allowedOrigins: flags.origins });
    } catch (error) {
      if (error instanceof ApiKeyError) throw new CliError(error.message, 4);
      throw error;
    }
  });
  print(
    `API key for ${name} (shown this once; only its SHA-256 is stored, so keep it now):\n${key}\nThe partner sends it as the X-Api-Key header.${feeBps > 0 ? ` Its fee: ${feeBps} bps.` : ''} Privacy: ${shareText(userShareBps)}.\n${originsText(flags.origins ?? [])}\n${webhookSecretLines(id, 1)}`,
  );
}

const originsText = (origins: readonly string[]) =>
  origins.length === 0
    ? 'Browser origins: none (a server key: keep it secret).'
    : `Browser origins: ${origins.join(' ')} (a browser key: it is public, and refused what only a server key may do; docs/api.md, "Keys in browsers").`;

/**
 * `apikey origins --name N (--origin O … | --clear) --reason "…"`: replaces the browser origins of the key, recorded in
 * the audit log (operator_actions, action apikey-origins) with the origins before and after. API instances see the
 * change within 30 s.
 */
export async function origins(name: string | undefined, who: Operator, flags: { origins?: string[]; clear?: boolean }): Promise<void> {
  if (!name) throw usageError('apikey origins needs --name <partner name>');
  if (flags.clear === (flags.origins !== undefined)) throw usageError('apikey origins takes --origin <origin> (once per origin) or --clear');
  const wanted = flags.clear ? [] : flags.origins!;
  const changed = await withDatabase(async (db) => {
    const actionId = await requestAction(db, {
      routeId: null,
      action: 'apikey-origins',
      operator: who.operator,
      reason: who.reason,
      params: { name, origins: wanted, identity: who.identity },
    });
    try {
      const result = await setAllowedOrigins(db, name, wanted);
      if (!result) {
        await finishAction(db, actionId, 'refused', 'no active API key of this name');
        return null;
      }
      await finishAction(db, actionId, 'done', `origins before: ${result.before.join(' ') || 'none'}; after: ${result.after.join(' ') || 'none'}`);
      return result;
    } catch (error) {
      await finishAction(db, actionId, error instanceof ApiKeyError ? 'refused' : 'failed', error instanceof Error ? error.message : String(error));
      if (error instanceof ApiKeyError) throw new CliError(error.message, 4);
      throw error;
    }
  });
  if (!changed) throw new CliError(`no active API key named "${name}" (routectl apikey list)`, 4);
  print(`${name}: ${originsText(changed.after)} API instances apply it within 30 s.`);
}

/** `apikey vouch --name N (--user-share F | --off)`: whether the key vouches for its users, from the next transfer on. */
export async function vouch(name: string | undefined, flags: { userShare?: string; off?: boolean }): Promise<void> {
  if (!name) throw usageError('apikey vouch needs --name <partner name>');
  if (flags.off && flags.userShare !== undefined) throw usageError('apikey vouch takes --user-share or --off, not both');
  const shareBps = flags.off ? null : userShareFlag({ vouchUsers: true, userShare: flags.userShare });
  const updated = await withDatabase(async (db) => {
    try {
      return await setUserShare(db, name, shareBps);
    } catch (error) {
      if (error instanceof ApiKeyError) throw new CliError(error.message, 4);
      throw error;
    }
  });
  if (!updated) throw new CliError(`no active API key named "${name}" (routectl apikey list)`, 4);
  print(`${name}: ${shareText(shareBps)}, for the transfers it creates from now on.`);
}

/** Hands the partner a new webhook secret; the old one keeps signing beside it for `overlapHours`. */
export async function rotateSecret(name: string | undefined, overlapHours: string): Promise<void> {
  if (!name) throw usageError('apikey rotate-webhook-secret needs --name <partner name>');
  const hours = Number(overlapHours);
  if (!Number.isFinite(hours) || hours < 0 || hours > 24 * 30) throw usageError('--overlap-hours must be a number of hours from 0 to 720');
  if (deploymentWebhookSecret() === null)
    throw new CliError('WEBHOOK_SIGNING_SECRET is not set here: the partner secrets are derived from it (docs/api.md, "Webhooks")', 4);
  const rotated = await withDatabase((db) => rotateWebhookSecret(db, name, Math.round(hours * 3600)));
  if (!rotated) throw new CliError(`no active API key named "${name}" (routectl apikey list)`, 4);
  print(`${webhookSecretLines(rotated.id, rotated.generation)}\nDeliveries carry the old signature beside the new one for ${hours} h; then only the new one.`);
}

/** What each partner is owed: its fees on completed transfers, per chain and token, from the ledger. */
export async function fees(json: boolean, since: string | undefined): Promise<void> {
  const from = since === undefined ? undefined : new Date(since);
  if (from !== undefined && Number.isNaN(from.getTime())) throw usageError('--since must be an ISO 8601 date or time, e.g. 2026-11-01');
  const owed = await withDatabase((db) => partnerFeesOwed(db, from));
  if (json) return print(owed);
  if (owed.length === 0) return print('no partner fees booked');
  const rows = owed.map((o) => [o.partner, String(o.chainId), o.token, o.amount, String(o.transfers)]);
  const header = ['PARTNER', 'CHAIN', 'TOKEN', 'OWED (smallest units)', 'TRANSFERS'];
  print(table(header, rows));
}

export async function list(json: boolean): Promise<void> {
  const keys = await withDatabase(listApiKeys);
  if (json) return print(keys);
  if (keys.length === 0) return print('no API keys');
  const limit = (n: number | null) => (n === null ? 'default' : String(n));
  const rows = keys.map((k) => [
    k.name,
    `${k.keyPrefix}…`,
    limit(k.requestsPerMinute),
    limit(k.createsPerMinute),
    limit(k.maxUnfunded),
    String(k.feeBps),
    k.userShareBps === null ? 'no' : `${k.userShareBps / 100} %`,
    String(k.webhookSecretGeneration),
    k.allowedOrigins.join(' ') || '-',
    k.createdAt.toISOString(),
    k.revokedAt?.toISOString() ?? '-',
  ]);
  const header = [
    'NAME',
    'PREFIX',
    'PER_MIN',
    'CREATES_PER_MIN',
    'MAX_UNFUNDED',
    'FEE_BPS',
    'VOUCHES_USERS',
    'WEBHOOK_SECRET_GEN',
    'ORIGINS',
    'CREATED',
    'REVOKED',
  ];
  print(table(header, rows));
}

export async function revoke(name: string | undefined): Promise<void> {
  if (!name) throw usageError("apikey revoke needs the key's name (routectl apikey list)");
  const revoked = await withDatabase((db) => revokeApiKey(db, name));
  if (!revoked) throw new CliError(`no active API key named "${name}" (routectl apikey list shows the names and which are revoked)`, 4);
  print(`revoked the API key of ${name}: its requests now answer 401`);
}

/** `apikey webhook --name N (--url U | --clear)`: the partner's default webhook endpoint, for its transfers from now on. */
export async function defaultWebhook(name: string | undefined, flags: { url?: string; clear?: boolean }): Promise<void> {
  if (!name) throw usageError('apikey webhook needs --name <partner name>');
  if ((flags.url === undefined) === !flags.clear) throw usageError('apikey webhook takes --url <https URL> or --clear');
  const url = flags.clear ? null : flags.url!;
  if (url !== null) {
    const problem = webhookUrlProblem(url, process.env.WEBHOOK_ALLOW_HTTP === 'true');
    if (problem) throw new CliError(`--url: ${problem.replace(/^webhookUrl /, 'the URL ')}`, 4);
  }
  const updated = await withDatabase((db) => setDefaultWebhookUrl(db, name, url));
  if (!updated) throw new CliError(`no active API key named "${name}" (routectl apikey list)`, 4);
  print(
    url === null
      ? `${name}: no default webhook endpoint; its transfers get deliveries only where a create names a webhookUrl.`
      : `${name}: the transfers it creates from now on without a webhookUrl are delivered to ${new URL(url).origin}/…, signed with its webhook secret.`,
  );
}
