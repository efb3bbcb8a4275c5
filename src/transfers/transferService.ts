import { randomBytes } from 'node:crypto';
import { matchesSecretDigest, secretDigest } from '../secretTokens.ts';
import { WorkflowExecutionAlreadyStartedError, type Client } from '@temporalio/client';
import { asc, eq, inArray, sql } from 'drizzle-orm';
import type { ApiAccountRole, RouteAddressBook } from '../accounts/routeAccounts.ts';
import type { Database } from '../db/client.ts';
import { depositTransfers, routeAccountIndex, transferOutcomeEntries, transferStatuses, transfers } from '../db/schema.ts';
import { publicError } from './publicErrors.ts';
import { depositedAmountOf, type Refund, refundsOf } from './outcomes.ts';
import type { FailureCode } from '../domain/failureCodes.ts';
import { publicClockOf, publicStatusAt } from './publicView.ts';
import { type StatusHistoryEntry, statusHistoryOf } from './statusHistory.ts';
import { explorerTxUrl } from '../quote/chainDetails.ts';
import { withTimeout } from '../withTimeout.ts';
import { QuoteError, type QuoteService, type Quote, quotedToken, type TransferRequest } from '../quote/quoteService.ts';
import type { QuoteRecords } from '../quote/quoteRecords.ts';
import { WORKFLOW_TYPE } from '../../workflows/types.ts';
import type { Address } from '../domain/address.ts';
import type { PrivacyPlan, RoutePlan, TransferSettings } from '../domain/plan.ts';
import type { TransferStatus } from '../domain/status.ts';
import { SEARCH_ATTRIBUTES } from '../../workflows/types.ts';
import { failNeverStarted, type Transfer, transferOf } from './transferStore.ts';
import { decodeCursor } from './listingCursor.ts';
import {
  ExternalIdTakenError,
  isExternalIdConflict,
  type PartnerTransferFilter,
  partnerTransferPage,
  replaceStatusTokenHash,
  routeWithExternalId,
} from './partnerTransfers.ts';

export interface CreateTransferRequest extends TransferRequest {
  userDestinationAddress: Address;
  /** Optional: where undeliverable deposits are refunded on the source chain. */
  refundAddress?: Address;
  /** Optional: a larger anonymity set than the service's default to wait for in the pool. */
  minAnonymitySet?: number;
  /** Optional: where the service POSTs each status change (validated by the API schema; stored as given). */
  webhookUrl?: string;
  /** Optional: the quote to create with, exactly as quoted, while it is fresh (src/quote/quoteRecords.ts). */
  quoteId?: string;
  /** Optional, with a partner only: the partner's own reference, unique among its transfers (src/transfers/partnerTransfers.ts). */
  externalId?: string;
}

/**
 * A user a partner vouched for (docs/privacy.md, "Users of one integrator"): the user's own client hash, the partner's
 * (its client hash), and the share of a set the partner's users may fill.
 */
export interface VouchedUser {
  client: string;
  voucher: string;
  shareBps: number;
}

export interface CreatedTransfer extends Quote {
  routeId: string;
  depositAddress: string;
  /** The source token's contract on the source chain: only a deposit of this contract funds the transfer. */
  depositTokenAddress: string;
  hubAccount: string;
  hubIsSmartAccount: boolean;
  status: TransferStatus;
  /** The anonymity set this transfer waits for before leaving the pool (at most PRIVACY_MAX_WAIT_SECONDS). */
  minAnonymitySet: number;
  /** The creating partner's own reference (create's externalId); null when it gave none. */
  externalId: string | null;
}

/** What create answers: the transfer plus its statusToken, which is handed out this once and stored only hashed. */
export interface NewTransfer extends CreatedTransfer {
  statusToken: string;
}

/** What a transfer got in the privacy pool, once it left it. */
export interface PrivacyReport {
  /**
   * Its own note plus the peers an observer cannot tell its withdrawal apart from (docs/privacy.md, "The anonymity
   * set"), counted once per client; counted again (lower) when a counted peer ragequits later.
   */
  anonymitySet: number;
  /** Seconds between its deposit into the pool and its withdrawal. */
  waitedSeconds: number;
  /** It left at PRIVACY_MAX_WAIT_SECONDS with fewer than minAnonymitySet. */
  leftAtMaxWait: boolean;
}

/** The service's privacy rules, from configuration. */
export interface PrivacySettings {
  exitEpochSeconds: number;
  /** PUBLIC_STATUS_DELAY_MAX_SECONDS: the longest a route's end waits before the public view shows it. */
  publicEndDelaySeconds: number;
  /** PUBLIC_STATUS_HOLD_SECONDS: the least time from a route's funding to its end's showing publicly. */
  publicEndHoldSeconds: number;
  minAnonymitySet: number;
  maxAnonymitySet: number;
  maxWaitSeconds: number;
  pollSeconds: number;
  reviewTimeoutSeconds: number;
}

/** The persisted transfer as GET returns it. Internal accounts (exit account, derivation index) stay private. */
/**
 * The webhook URL is never echoed, not even to the statusToken's holder: it may carry a secret (a token in its
 * path or query), and views end up in logs and support tickets. Its owner knows it already.
 */
export interface TransferView extends Omit<CreatedTransfer, 'roundingAmount' | 'roundingUsd' | 'amountClass' | 'networkCostAmount' | 'networkCostUsd'> {
  /** null for a transfer quoted before the fee covered the service's gas. */
  networkCostAmount: string | null;
  networkCostUsd: number | null;
  /** null for a transfer quoted before amount classes. */
  roundingAmount: string | null;
  roundingUsd: number | null;
  amountClass: { value: string; roundingBps: number } | null;
  error: string | null;
  /** Why it failed, as a stable code (src/domain/failureCodes.ts); null unless FAILED. */
  failureCode: FailureCode | null;
  /** What the deposit address received of the source token (smallest units; "0": nothing), so a short deposit shows what arrived. */
  depositedAmount: string;
  /** Every refund sent from the deposit address, oldest first (docs/api.md, "Outcomes"). */
  refunds: Refund[];
  /** The latest of `refunds`; null when there is none. */
  refund: Refund | null;
  /** True while the transfer waits for an operator (a step is parked, or funds are held for a decision). */
  needsAttention: boolean;
  refundAddress: string | null;
  userDestinationAddress: string;
  depositDeadline: string;
  /** Per-hop transactions (never the shield or the withdrawal): the sender's deposit on the source chain, */
  depositTxHash: string | null;
  /** the bridge's delivery to the hub account, */
  bridgeInTxHash: string | null;
  /** and the payment to the recipient on the destination chain; each null until seen. */
  payoutTxHash: string | null;
  createdAt: string;
  updatedAt: string;
  completedAt: string | null;
  /** The explorer page of each of the three hashes above, where its chain's explorer is known. */
  explorerLinks: { depositTx: string | null; bridgeInTx: string | null; payoutTx: string | null };
  /** Every status it reached, oldest first, with its time (and the transaction where the view names one). */
  statusHistory: StatusHistoryEntry[];
  /** null until the transfer has left the privacy pool. */
  privacy: PrivacyReport | null;
}

/** What GET answers to a holder of the routeId without its statusToken: nothing that identifies a sender or recipient. */
export interface PublicTransferView {
  routeId: string;
  status: TransferStatus;
  /** The error with addresses, hashes, amounts and times hidden (it can name the refund address and refund tx). */
  error: string | null;
  needsAttention: boolean;
}

/** One page of a partner's transfers (GET /api/private-route): full views, newest first. */
export interface TransferPage {
  items: TransferView[];
  /** Pass it as `cursor` for the next page; null on the last. */
  nextCursor: string | null;
}

/** A GET by routeId: the full view for the statusToken's holder, the public view without a token, denied with a wrong one. */
export type TransferRead = { access: 'full'; transfer: TransferView } | { access: 'public'; transfer: PublicTransferView; seq: number } | { access: 'denied' };

export interface TransferServiceDeps {
  db: Database;
  temporal: Client;
  taskQueue: string;
  quotes: QuoteService;
  /** The quotes handed out with a quoteId; without them, a create citing a quoteId is refused as expired. */
  quoteRecords?: Pick<QuoteRecords, 'recall'>;
  /** Deposit and hub addresses from the signer's xpubs: the API holds no key, and no exit account (the worker derives those). */
  addresses: RouteAddressBook<ApiAccountRole>;
  settings: TransferSettings;
  privacy: PrivacySettings;
}

/** The route's own privacy plan: the service's exit epochs, its anonymity set at least the service's. */
export function drawPrivacyPlan(settings: PrivacySettings, requested?: number): PrivacyPlan {
  if (requested !== undefined && requested > settings.maxAnonymitySet) {
    throw new QuoteError(`minAnonymitySet must be at most ${settings.maxAnonymitySet}`, { code: 'INVALID_REQUEST' });
  }
  return {
    exitEpochSeconds: settings.exitEpochSeconds,
    minAnonymitySet: Math.max(settings.minAnonymitySet, requested ?? 0),
    maxWaitSeconds: settings.maxWaitSeconds,
    pollSeconds: settings.pollSeconds,
    reviewTimeoutSeconds: settings.reviewTimeoutSeconds,
  };
}

/** Unguessable route id: 128 random bits. */
export function newRouteId(): string {
  return `rt_${randomBytes(16).toString('hex')}`;
}

export const ROUTE_ID_PATTERN = /^rt_[0-9a-f]{32}$/;

/** The bearer secret of one transfer's full view: 256 random bits. */
export function newStatusToken(): string {
  return `st_${randomBytes(32).toString('base64url')}`;
}

/** What the database keeps of a statusToken (hex SHA-256): a leaked table does not open any transfer's full view. */
export function hashStatusToken(token: string): string {
  return secretDigest(token).toString('hex');
}

/** Constant-time check of a presented token against the stored hash (both sides hashed: equal lengths, no early exit). */
export function statusTokenMatches(presented: string, storedHash: string | null): boolean {
  // A transfer created before statusTokens (no hash) matches no token.
  if (storedHash === null) return false;
  return matchesSecretDigest(presented, Buffer.from(storedHash, 'hex'));
}

export function createTransferService(deps: TransferServiceDeps) {
  /**
   * The quote a create cites, while it is fresh and the market still covers it: the request is priced afresh as
   * well, and a quote that would pay more than the fresh one (prices or gas moved against it, a price epoch ended
   * early) is refused like an expired one. Otherwise the cited quote is kept: it pays no more than the market does now.
   */
  const recall = async (quoteId: string, request: TransferRequest) => {
    if (!deps.quoteRecords)
      throw new QuoteError(`quoteId ${quoteId.slice(0, 40)} is unknown or has expired: create without a quoteId`, { code: 'QUOTE_EXPIRED' });
    const cited = await deps.quoteRecords.recall(quoteId, request);
    const fresh = await deps.quotes.quote(request, { fresh: true });
    if (BigInt(fresh.quote.quotedOutputAmount) < BigInt(cited.quote.quotedOutputAmount)) {
      throw new QuoteError(
        `quoteId ${quoteId} is no longer covered: prices moved since it was quoted and the same request now pays ${fresh.quote.quotedOutputAmount} instead of ${cited.quote.quotedOutputAmount}; quote again`,
        { code: 'QUOTE_EXPIRED' },
      );
    }
    return cited;
  };
  const fullView = async (row: Transfer) => {
    const [reached, explorers, records] = await Promise.all([
      reachedStatuses(deps.db, row.routeId),
      explorerUrls(deps.quotes),
      outcomeRecords(deps.db, row.routeId),
    ]);
    return transferView(row, reached, explorers, records);
  };
  /** Full views of many rows: their statuses, ledgers and deposits in one query each, the explorers once. */
  const fullViews = async (rows: Transfer[]) => {
    if (rows.length === 0) return [];
    const routeIds = rows.map((r) => r.routeId);
    const [reached, explorers, records] = await Promise.all([
      reachedStatusesOf(deps.db, routeIds),
      explorerUrls(deps.quotes),
      outcomeRecordsOf(deps.db, routeIds),
    ]);
    return rows.map((row) => transferView(row, reached.get(row.routeId) ?? [], explorers, records.get(row.routeId)!));
  };
  return {
    /**
     * Quotes afresh, allocates the route's accounts, persists the transfer, then starts its workflow
     * (id = routeId). If the workflow cannot be started the transfer is marked FAILED before answering,
     * so no client is ever handed a deposit address that nothing watches.
     */
    /**
     * `clientHash`: the creating client's hash (src/api/abuseLimits.ts), kept while the transfer is unfunded for its cap,
     * and (as privacyClient) while its note may count in other routes' anonymity sets.
     */
    async create(request: CreateTransferRequest, options: { clientHash?: string; partnerId?: number; user?: VouchedUser } = {}): Promise<NewTransfer> {
      const externalId = options.partnerId === undefined ? undefined : request.externalId;
      if (request.externalId !== undefined && externalId === undefined) throw new Error('an externalId needs the partner whose key gave it');
      // Checked before quoting, so a repeated create costs no quote; the unique index decides races (below).
      if (externalId !== undefined) {
        const taken = await routeWithExternalId(deps.db, options.partnerId!, externalId);
        if (taken) throw new ExternalIdTakenError(externalId, taken);
      }
      const privacy = drawPrivacyPlan(deps.privacy, request.minAnonymitySet);
      // fresh: the quote cache (QUOTE_CACHE_SECONDS) serves quote requests only; what a create promises is priced now,
      // unless it cites a quote still fresh enough to be kept (QUOTE_TTL_SECONDS, within its price epoch).
      const { quote, sourceToken, hubToken, destToken } =
        request.quoteId !== undefined ? await recall(request.quoteId, request) : await deps.quotes.quote(request, { fresh: true });
      // int8: postgres returns it as a string; the address book refuses an index it cannot derive.
      const [next] = await deps.db.execute<{ index: string }>(sql`select nextval(${routeAccountIndex.seqName}) as index`);
      const index = Number(next?.index);
      const accounts = deps.addresses.routeAddresses(index);
      const routeId = newRouteId();
      const depositDeadline = new Date(Date.now() + deps.settings.depositTimeoutSeconds * 1000);
      const statusToken = newStatusToken();

      const { amountClass: _, ...quoteColumns } = quote;
      const inserted = deps.db.insert(transfers).values({
        routeId,
        accountIndex: index,
        status: 'AWAITING_DEPOSIT',
        ...quoteColumns,
        sourceToken: sourceToken.address,
        sourceDecimals: sourceToken.decimals,
        destToken: destToken.address,
        destDecimals: destToken.decimals,
        hubToken: hubToken.address,
        hubDecimals: hubToken.decimals,
        depositAddress: accounts.deposit,
        hubAccount: accounts.hub,
        hubIsSmartAccount: false,
        userDestinationAddress: request.userDestinationAddress,
        refundAddress: request.refundAddress ?? null,
        minAnonymitySet: privacy.minAnonymitySet,
        depositDeadline,
        statusTokenHash: hashStatusToken(statusToken),
        clientHash: options.clientHash ?? null,
        privacyClient: options.user?.client ?? options.clientHash ?? null,
        privacyVoucher: options.user?.voucher ?? null,
        privacyVoucherShareBps: options.user?.shareBps ?? null,
        webhookUrl: request.webhookUrl ?? null,
        partnerId: options.partnerId ?? null,
        externalId: externalId ?? null,
        partnerFeeAmount: options.partnerId === undefined ? null : (quote.partnerFeeAmount ?? '0'),
      });
      await inserted.catch(async (error: unknown) => {
        if (externalId === undefined || !isExternalIdConflict(error)) throw error;
        throw new ExternalIdTakenError(externalId, (await routeWithExternalId(deps.db, options.partnerId!, externalId)) ?? 'another transfer');
      });

      const plan: RoutePlan = {
        routeId,
        accountIndex: index,
        sourceChainId: quote.sourceChainId,
        hubChainId: quote.hubChainId,
        destChainId: quote.destChainId,
        sourceToken: sourceToken.address,
        hubToken: hubToken.address,
        destToken: destToken.address,
        amount: quote.amount,
        quotedOutputAmount: quote.quotedOutputAmount,
        depositAddress: accounts.deposit,
        hubAccount: accounts.hub,
        recipient: request.userDestinationAddress,
        depositDeadline: depositDeadline.toISOString(),
        refundAddress: request.refundAddress ?? null,
        settings: deps.settings,
        privacy,
      };
      try {
        await deps.temporal.workflow.start(WORKFLOW_TYPE, {
          workflowId: routeId,
          taskQueue: deps.taskQueue,
          args: [plan],
          workflowIdReusePolicy: 'REJECT_DUPLICATE',
          searchAttributes: { [SEARCH_ATTRIBUTES.status]: ['AWAITING_DEPOSIT'] },
        });
      } catch (error) {
        if (!(error instanceof WorkflowExecutionAlreadyStartedError)) {
          await failNeverStarted(deps.db, routeId);
          throw error;
        }
      }

      return {
        ...quote,
        // From the resolved tokens: a quoteId recorded before quotes named their tokens has none.
        sourceToken: quotedToken(sourceToken),
        destToken: quotedToken(destToken),
        routeId,
        depositAddress: accounts.deposit,
        depositTokenAddress: sourceToken.address,
        hubAccount: accounts.hub,
        hubIsSmartAccount: false,
        status: 'AWAITING_DEPOSIT',
        minAnonymitySet: privacy.minAnonymitySet,
        externalId: externalId ?? null,
        statusToken,
      };
    },

    /**
     * GET by routeId as the API answers it: `statusToken` undefined gives the public view; the right token
     * the full view; any other token (or any token for a transfer created before statusTokens) is denied.
     */
    async read(routeId: string, statusToken: string | undefined): Promise<TransferRead | null> {
      const row = await transferOf(deps.db, routeId);
      if (!row) return null;
      if (statusToken === undefined) return { access: 'public', ...(await publicView(deps.db, row, deps.privacy)) };
      if (!statusTokenMatches(statusToken, row.statusTokenHash)) return { access: 'denied' };
      return { access: 'full', transfer: await fullView(row) };
    },

    async get(routeId: string): Promise<TransferView | null> {
      const row = await transferOf(deps.db, routeId);
      return row ? fullView(row) : null;
    },

    /**
     * A page of the partner's own transfers, full views (the partner created them and holds their statusTokens),
     * newest first. `cursor` is a previous page's nextCursor; a malformed one is an InvalidCursorError.
     */
    async listForPartner(partnerId: number, filter: PartnerTransferFilter, page: { cursor?: string; limit: number }): Promise<TransferPage> {
      const after = page.cursor === undefined ? undefined : (decodeCursor(page.cursor) ?? undefined);
      if (page.cursor !== undefined && after === undefined) throw new InvalidCursorError();
      const { rows, nextCursor } = await partnerTransferPage(deps.db, partnerId, filter, { after, limit: page.limit });
      return { items: await fullViews(rows), nextCursor };
    },

    /**
     * A new statusToken for the partner's transfer `routeId` (null: the partner has none of that id): the old token
     * stops opening its full view at once. Handed out this once, stored hashed like the first.
     */
    async reissueStatusToken(partnerId: number, routeId: string): Promise<{ routeId: string; statusToken: string } | null> {
      const statusToken = newStatusToken();
      const replaced = await replaceStatusTokenHash(deps.db, partnerId, routeId, hashStatusToken(statusToken));
      return replaced ? { routeId, statusToken } : null;
    },

    /** Whether `statusToken` still opens the transfer (an open event stream asks, to end once its token was replaced). */
    async opensFullView(routeId: string, statusToken: string): Promise<boolean> {
      const row = await transferOf(deps.db, routeId);
      return row !== null && statusTokenMatches(statusToken, row.statusTokenHash);
    },
  };
}

/**
 * The public view (no statusToken), as src/transfers/publicView.ts decides it from the route's history of statuses
 * (transfer_statuses): moving only at exit epochs, the pool phase folded into BRIDGING_IN, the end shown after a delay
 * of the route's own. The error and the attention flag show only with the end.
 */
async function publicView(db: Database, row: Transfer, privacy: Pick<PrivacySettings, 'exitEpochSeconds' | 'publicEndDelaySeconds' | 'publicEndHoldSeconds'>) {
  const history = await reachedStatuses(db, row.routeId);
  const clock = publicClockOf(row, {
    epochSeconds: privacy.exitEpochSeconds,
    endDelayMaxSeconds: privacy.publicEndDelaySeconds,
    holdSeconds: privacy.publicEndHoldSeconds,
  });
  const shown = publicStatusAt(history, { ...clock, now: Date.now() });
  const transfer: PublicTransferView = {
    routeId: row.routeId,
    status: shown.status,
    error: shown.status === 'FAILED' ? publicError(row.error) : null,
    needsAttention: shown.seq === 2 && row.needsAttention,
  };
  return { transfer, seq: shown.seq };
}

/**
 * Each chain's explorer, from the chain catalogue (cached by the providers). A view is never held up by it: an
 * unreachable or slow provider (over a second) leaves the links null.
 */
async function explorerUrls(quotes: Pick<QuoteService, 'chains'>): Promise<Map<number, string>> {
  try {
    const chains = await withTimeout(quotes.chains(), 1_000);
    return new Map(chains.flatMap((chain) => (chain.explorerUrl ? [[chain.chainId, chain.explorerUrl] as const] : [])));
  } catch {
    return new Map();
  }
}

/** What the outcomes are read from (src/transfers/outcomes.ts): the route's ledger and the values of the transfers into its deposit address. */
async function outcomeRecords(db: Database, routeId: string) {
  return (await outcomeRecordsOf(db, [routeId])).get(routeId)!;
}

/**
 * What arrived at and was refunded from several routes' deposit addresses, in two queries (a listing's page): the ledger's
 * outcome entries (its view transfer_outcome_entries, all the API may read of it) and the deposit transfers.
 */
async function outcomeRecordsOf(db: Database, routeIds: string[]) {
  const [ledger, deposits] = await Promise.all([
    db.select().from(transferOutcomeEntries).where(inArray(transferOutcomeEntries.routeId, routeIds)).orderBy(asc(transferOutcomeEntries.id)),
    db.select({ routeId: depositTransfers.routeId, value: depositTransfers.value }).from(depositTransfers).where(inArray(depositTransfers.routeId, routeIds)),
  ]);
  return new Map(
    routeIds.map((routeId) => [
      routeId,
      { ledger: ledger.filter((row) => row.routeId === routeId), depositValues: deposits.filter((d) => d.routeId === routeId).map((d) => d.value) },
    ]),
  );
}

/** A transfer's recorded statuses (transfer_statuses) in the order it reached them. */
function reachedStatuses(db: Database, routeId: string) {
  return db
    .select({ status: transferStatuses.status, reachedAt: transferStatuses.reachedAt })
    .from(transferStatuses)
    .where(eq(transferStatuses.routeId, routeId))
    .orderBy(transferStatuses.statusSeq);
}

/** The recorded statuses of several transfers, each in the order it reached them. */
async function reachedStatusesOf(db: Database, routeIds: string[]): Promise<Map<string, { status: string; reachedAt: Date }[]>> {
  const rows = await db
    .select({ routeId: transferStatuses.routeId, status: transferStatuses.status, reachedAt: transferStatuses.reachedAt })
    .from(transferStatuses)
    .where(inArray(transferStatuses.routeId, routeIds))
    .orderBy(transferStatuses.routeId, transferStatuses.statusSeq);
  const byRoute = new Map<string, { status: string; reachedAt: Date }[]>();
  for (const { routeId, ...reached } of rows) {
    const list = byRoute.get(routeId) ?? [];
    list.push(reached);
    byRoute.set(routeId, list);
  }
  return byRoute;
}

/** A listing's cursor that is not one the listing wrote. */
export class InvalidCursorError extends Error {
  override name = 'InvalidCursorError';
  constructor() {
    super('cursor is not a nextCursor of this listing: pass the nextCursor of the previous page as it was given, or none for the first page');
  }
}

/** The full view: what the statusToken's holder reads. Internal accounts (exit account, derivation index) stay private. */
function transferView(
  row: Transfer,
  reached: { status: string; reachedAt: Date }[],
  explorers: Map<number, string>,
  records: Awaited<ReturnType<typeof outcomeRecords>>,
): TransferView {
  const refunds = refundsOf(row, records.ledger, explorers);
  return {
    routeId: row.routeId,
    status: row.status as TransferStatus,
    error: row.error,
    failureCode: row.status === 'FAILED' ? (row.failureCode as FailureCode | null) : null,
    depositedAmount: depositedAmountOf(row, records.ledger, records.depositValues),
    refunds,
    refund: refunds.at(-1) ?? null,
    needsAttention: row.needsAttention,
    symbol: row.symbol,
    destSymbol: row.destSymbol,
    sourceToken: { chainId: row.sourceChainId, address: row.sourceToken, symbol: row.symbol, decimals: row.sourceDecimals },
    destToken: { chainId: row.destChainId, address: row.destToken, symbol: row.destSymbol, decimals: row.destDecimals },
    sourceChainId: row.sourceChainId,
    destChainId: row.destChainId,
    hubChainId: row.hubChainId,
    amount: row.amount,
    quotedOutputAmount: row.quotedOutputAmount,
    feeAmount: row.feeAmount,
    networkCostAmount: row.networkCostAmount,
    networkCostUsd: row.networkCostUsd,
    bridgeFeeAmount: row.bridgeFeeAmount,
    privacyFeeAmount: row.privacyFeeAmount,
    amountInUsd: row.amountInUsd,
    quotedOutputUsd: row.quotedOutputUsd,
    feeUsd: row.feeUsd,
    bridgeFeeUsd: row.bridgeFeeUsd,
    privacyFeeUsd: row.privacyFeeUsd,
    roundingAmount: row.roundingAmount,
    roundingUsd: row.roundingUsd,
    partnerFeeAmount: row.partnerFeeAmount ?? '0',
    amountClass: row.roundingAmount === null ? null : amountClassView(BigInt(row.quotedOutputAmount), BigInt(row.roundingAmount)),
    etaSeconds: row.etaSeconds,
    route: row.route,
    depositAddress: row.depositAddress,
    depositTokenAddress: row.sourceToken,
    hubAccount: row.hubAccount,
    hubIsSmartAccount: row.hubIsSmartAccount,
    userDestinationAddress: row.userDestinationAddress,
    refundAddress: row.refundAddress,
    depositDeadline: row.depositDeadline.toISOString(),
    depositTxHash: row.depositTxHash,
    bridgeInTxHash: row.bridgeInTxHash,
    payoutTxHash: row.payoutTxHash,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
    completedAt: row.completedAt?.toISOString() ?? null,
    explorerLinks: {
      depositTx: explorerTxUrl(explorers.get(row.sourceChainId), row.depositTxHash),
      bridgeInTx: explorerTxUrl(explorers.get(row.sourceChainId), row.bridgeInTxHash),
      payoutTx: explorerTxUrl(explorers.get(row.destChainId), row.payoutTxHash),
    },
    statusHistory: statusHistoryOf(row, reached),
    minAnonymitySet: row.minAnonymitySet ?? 1,
    externalId: row.externalId,
    privacy:
      row.anonymitySet === null
        ? null
        : { anonymitySet: row.anonymitySet, waitedSeconds: row.privacyWaitedSeconds ?? 0, leftAtMaxWait: row.privacyLeftAtMaxWait ?? false },
  };
}

/** A stored transfer's class: its output, and what the rounding cost in whole bps of the output before it (as src/privacy/amountClass.ts roundingBps). */
function amountClassView(output: bigint, rounding: bigint): { value: string; roundingBps: number } {
  const before = output + rounding;
  return { value: output.toString(), roundingBps: before === 0n ? 0 : Number((rounding * 10_000n) / before) };
}

export type TransferService = ReturnType<typeof createTransferService>;
