import type { Address, Hex } from 'viem';
import { describeSignerAccount, type SignerAccount } from '../signer.ts';
import type { AuditEntry, AuditLog } from './auditLog.ts';
import { readTransaction } from './calls.ts';
import type { RouteRecords } from './routeFacts.ts';
import { REFUSAL_RULES, type PolicyContracts, type RefusalRule, type RouteFacts, decideTransaction, describeCall, factsNeeded } from './rules.ts';

/** The policy said no: the worker parks the route on it (failure type SignerRefused), never retries it blindly. */
export class SignerPolicyRefusal extends Error {
  override name = 'SignerPolicyRefusal';
  constructor(
    readonly rule: RefusalRule,
    message: string,
  ) {
    super(message);
  }
}

/**
 * The policy cannot decide yet: it has not seen the note secrets a pool deposit or a withdrawal rests on (the signer
 * restarted since the worker asked for them). Not a refusal: the worker's next try asks for them again, then signs.
 */
export class SignerPolicyNotReady extends Error {
  override name = 'SignerPolicyNotReady';
}

/** Signatures (and note-secret answers) per minute per role; above it the request is refused, not queued. */
export type RateLimits = Record<SignerAccount['role'] | 'noteSecrets', number>;

export const DEFAULT_RATE_LIMITS: RateLimits = { deposit: 600, hub: 600, exit: 600, gas: 300, poolRelayer: 300, noteSecrets: 600 };

export interface SpendingPolicy {
  /** Resolves when the request may be signed; rejects with SignerPolicyRefusal otherwise. Every verdict is in the audit log. */
  checkTransaction(account: SignerAccount, from: Address, unsigned: Hex): Promise<void>;
  checkNoteSecrets(request: { kind: 'deposit'; scope: bigint; index: bigint } | { kind: 'withdrawal'; label: bigint; index: bigint }): Promise<void>;
}

/**
 * The spending policy of the signer process (docs/security.md): the rules of src/signer/policy/rules.ts on the facts
 * the signer reads itself, a rate limit per role, and the audit log.
 */
export function createSpendingPolicy(opts: {
  records: RouteRecords;
  contracts: PolicyContracts;
  audit: AuditLog;
  /** Of the deposit note secrets (scope, index): the precommitment its pool deposit names, and the nullifier hash its withdrawal spends. */
  noteKeysOf: (scope: bigint, index: bigint) => Promise<{ precommitment: bigint; nullifierHash: bigint }>;
  /** Of the change note secrets (label, index): the nullifier hash a withdrawal spending that change note shows. */
  changeNullifierHashOf?: (label: bigint, index: bigint) => Promise<bigint>;
  rateLimits?: Partial<RateLimits>;
  now?: () => number;
}): SpendingPolicy {
  // Per account index, the precommitments of the deposit secrets handed out (a restart forgets them: the worker's
  // deposit asks for its secrets again before it signs).
  const precommitments = new Map<number, bigint[]>();
  // The pool scopes deposit secrets were asked for (one per pool; every withdrawal asks for its note's secrets first).
  const scopes = new Set<bigint>();
  // The nullifier hashes of the change notes whose secrets were handed out: an income sweep may spend only those.
  const changeNullifiers = new Set<bigint>();
  const nullifierHashesOf = async (index: number) => Promise.all([...scopes].map(async (scope) => (await opts.noteKeysOf(scope, BigInt(index))).nullifierHash));
  const limits = { ...DEFAULT_RATE_LIMITS, ...opts.rateLimits };
  const now = opts.now ?? Date.now;
  const windows = new Map<string, { start: number; count: number }>();
  const withinRate = (key: keyof RateLimits) => {
    const minute = Math.floor(now() / 60_000);
    const window = windows.get(key);
    if (!window || window.start !== minute) windows.set(key, { start: minute, count: 1 });
    else window.count += 1;
    return windows.get(key)!.count <= limits[key];
  };
  const refused = async (entry: Omit<AuditEntry, 'verdict'> & { rule: RefusalRule; reason: string }) => {
    await opts.audit.append({ ...entry, verdict: 'refused' });
    return new SignerPolicyRefusal(entry.rule, entry.reason);
  };

  return {
    async checkTransaction(account, from, unsigned) {
      const read = readTransaction(unsigned, from);
      const base = { request: 'sign-transaction' as const, account: describeSignerAccount(account), chainId: read.chainId, call: describeCall(read.call) };
      if (!withinRate(account.role)) throw await refused({ ...base, rule: 'rate-limited', reason: REFUSAL_RULES['rate-limited'] });
      const needed = factsNeeded(account, read.call);
      let found: RouteFacts | undefined;
      if (needed.index !== undefined) found = await opts.records.routeOfIndex(needed.index);
      else if (read.call.kind === 'relay') {
        // Of the routes the recipient belongs to, the one whose own note the withdrawal spends.
        const { nullifierHash } = read.call;
        const candidates = await opts.records.routesOfAddress(read.call.recipient);
        const withHashes = await Promise.all(candidates.map(async (c) => ({ ...c, nullifierHashes: await nullifierHashesOf(c.accountIndex) })));
        found = withHashes.find((c) => c.nullifierHashes.includes(nullifierHash)) ?? withHashes[0];
      } else if (needed.address) found = await opts.records.routeOfAddress(needed.address, { ownOnly: read.call.kind === 'native' });
      const route = found && { ...found, precommitments: precommitments.get(found.accountIndex) };
      const treasury = opts.contracts.incomeTreasury?.toLowerCase();
      const toTreasury = read.call.kind === 'relay' && read.call.recipient.toLowerCase() === treasury;
      // A sweep's change-note secrets are asked right before it signs, so it never waits for a scope.
      if ((read.call.kind === 'poolDeposit' && route && !route.precommitments) || (read.call.kind === 'relay' && !toTreasury && scopes.size === 0)) {
        throw new SignerPolicyNotReady('the signer has not derived the note secrets this transaction rests on since it started: ask for them, then sign');
      }
      const sweep = read.call.kind === 'relay' ? { spendsChangeNote: changeNullifiers.has(read.call.nullifierHash) } : undefined;
      const verdict = decideTransaction({ account, chainId: read.chainId, call: read.call, maxFee: read.maxFee }, route, opts.contracts, sweep);
      if (!verdict.allow) throw await refused({ ...base, routeId: verdict.routeId, rule: verdict.rule, reason: verdict.reason });
      await opts.audit.append({ ...base, routeId: verdict.routeId, verdict: 'signed' });
    },

    async checkNoteSecrets(request) {
      const base = {
        request: 'note-secrets' as const,
        call: request.kind === 'deposit' ? `deposit note of account ${request.index}` : `change note of label ${request.label}`,
      };
      if (!withinRate('noteSecrets')) throw await refused({ ...base, rule: 'rate-limited', reason: REFUSAL_RULES['rate-limited'] });
      // A deposit note's index is its route's account index; a change note's secrets are asked by its parent's label:
      // index 0 by the route's own withdrawal, index k ≥ 1 only once change note k is recorded (the sweep of change
      // note g spends index g − 1 and leaves its rest under index g).
      const route =
        request.kind === 'deposit'
          ? await opts.records.routeOfIndex(Number(request.index))
          : request.index === 0n
            ? await opts.records.noteWithLabel(request.label)
            : request.index < 1_000n
              ? await opts.records.changeNoteAt(request.label, Number(request.index))
              : undefined;
      if (!route) throw await refused({ ...base, rule: 'note-of-no-route', reason: REFUSAL_RULES['note-of-no-route'] });
      if (request.kind === 'deposit') {
        const index = Number(request.index);
        const known = precommitments.get(index) ?? [];
        const { precommitment } = await opts.noteKeysOf(request.scope, request.index);
        if (!known.includes(precommitment)) precommitments.set(index, [...known, precommitment].slice(-4));
        if (scopes.size < 16) scopes.add(request.scope);
      } else if (opts.changeNullifierHashOf) {
        if (changeNullifiers.size >= 100_000) changeNullifiers.clear();
        changeNullifiers.add(await opts.changeNullifierHashOf(request.label, request.index));
      }
      await opts.audit.append({ ...base, routeId: route.routeId, verdict: 'answered' });
    },
  };
}
