import { randomBytes, randomInt } from 'node:crypto';
import { WorkflowExecutionAlreadyStartedError, type Client } from '@temporalio/client';
import { eq, sql } from 'drizzle-orm';
import type { RouteKeyring } from '../accounts/routeAccounts.ts';
import type { Database } from '../db/client.ts';
import { routeAccountIndex, transfers } from '../db/schema.ts';
import { QuoteError, type QuoteService, type Quote, type TransferRequest } from '../quote/quoteService.ts';
import { WORKFLOW_TYPE, type Address, type PrivacyPlan, type RoutePlan, type TransferSettings, type TransferStatus } from '../../workflows/types.ts';
import { SEARCH_ATTRIBUTES } from '../../workflows/types.ts';

export interface CreateTransferRequest extends TransferRequest {
  userDestinationAddress: Address;
  /** Optional: where undeliverable deposits are refunded on the source chain. */
  refundAddress?: Address;
  /** Optional: a larger anonymity set than the service's default to wait for in the pool. */
  minAnonymitySet?: number;
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
}

/** What a transfer got in the privacy pool, once it left it. */
export interface PrivacyReport {
  /** Its own deposit plus the same-bucket deposits that entered the pool before its withdrawal (docs/privacy.md). */
  anonymitySet: number;
  /** Seconds between its deposit into the pool and its withdrawal. */
  waitedSeconds: number;
}

/** The service's privacy rules, from configuration. */
export interface PrivacySettings {
  delayMinSeconds: number;
  delayMaxSeconds: number;
  minAnonymitySet: number;
  maxAnonymitySet: number;
  maxWaitSeconds: number;
  pollSeconds: number;
  reviewTimeoutSeconds: number;
}

/** The persisted transfer as GET returns it. Internal accounts (exit account, derivation index) stay private. */
export interface TransferView extends CreatedTransfer {
  error: string | null;
  /** True while the transfer waits for an operator (a step is parked, or funds are held for a decision). */
  needsAttention: boolean;
  refundAddress: string | null;
  userDestinationAddress: string;
  depositDeadline: string;
  payoutTxHash: string | null;
  createdAt: string;
  updatedAt: string;
  completedAt: string | null;
  /** null until the transfer has left the privacy pool. */
  privacy: PrivacyReport | null;
}

export interface TransferServiceDeps {
  db: Database;
  temporal: Client;
  taskQueue: string;
  quotes: QuoteService;
  keyring: RouteKeyring;
  settings: TransferSettings;
  privacy: PrivacySettings;
}

/** The route's own privacy plan: its delay drawn from the window, its anonymity set at least the service's. */
export function drawPrivacyPlan(settings: PrivacySettings, requested?: number): PrivacyPlan {
  if (requested !== undefined && requested > settings.maxAnonymitySet) {
    throw new QuoteError(`minAnonymitySet must be at most ${settings.maxAnonymitySet}`);
  }
  return {
    delaySeconds: randomInt(settings.delayMinSeconds, settings.delayMaxSeconds + 1),
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

export function createTransferService(deps: TransferServiceDeps) {
  return {
    /**
     * Quotes afresh, allocates the route's accounts, persists the transfer, then starts its workflow
     * (id = routeId). If the workflow cannot be started the transfer is marked FAILED before answering,
     * so no client is ever handed a deposit address that nothing watches.
     */
    /** `clientHash`: the creating client's hash (src/api/abuseLimits.ts), kept while the transfer is unfunded for its cap. */
    async create(request: CreateTransferRequest, options: { clientHash?: string } = {}): Promise<CreatedTransfer> {
      const privacy = drawPrivacyPlan(deps.privacy, request.minAnonymitySet);
      // fresh: the quote cache (QUOTE_CACHE_SECONDS) serves quote requests only; what a create promises is priced now.
      const { quote, sourceToken, hubToken, destToken } = await deps.quotes.quote(request, { fresh: true });
      // int8: postgres returns it as a string; the keyring refuses an index it cannot derive.
      const [next] = await deps.db.execute<{ index: string }>(sql`select nextval(${routeAccountIndex.seqName}) as index`);
      const index = Number(next?.index);
      const accounts = deps.keyring.routeAccounts(index);
      const routeId = newRouteId();
      const depositDeadline = new Date(Date.now() + deps.settings.depositTimeoutSeconds * 1000);

      await deps.db.insert(transfers).values({
        routeId,
        accountIndex: index,
        status: 'AWAITING_DEPOSIT',
        ...quote,
        sourceToken: sourceToken.address,
        sourceDecimals: sourceToken.decimals,
        destToken: destToken.address,
        destDecimals: destToken.decimals,
        hubToken: hubToken.address,
        hubDecimals: hubToken.decimals,
        depositAddress: accounts.deposit.address,
        hubAccount: accounts.hub.address,
        hubIsSmartAccount: false,
        exitAccount: accounts.exit.address,
        userDestinationAddress: request.userDestinationAddress,
        refundAddress: request.refundAddress ?? null,
        minAnonymitySet: privacy.minAnonymitySet,
        depositDeadline,
        clientHash: options.clientHash ?? null,
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
        depositAddress: accounts.deposit.address,
        hubAccount: accounts.hub.address,
        exitAccount: accounts.exit.address,
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
          await deps.db
            .update(transfers)
            .set({ status: 'FAILED', error: 'the transfer could not be started; do not deposit', statusSeq: 1_000_000, clientHash: null, updatedAt: sql`now()` })
            .where(eq(transfers.routeId, routeId));
          throw error;
        }
      }

      return {
        ...quote,
        routeId,
        depositAddress: accounts.deposit.address,
        depositTokenAddress: sourceToken.address,
        hubAccount: accounts.hub.address,
        hubIsSmartAccount: false,
        status: 'AWAITING_DEPOSIT',
        minAnonymitySet: privacy.minAnonymitySet,
      };
    },

    async get(routeId: string): Promise<TransferView | null> {
      const [row] = await deps.db.select().from(transfers).where(eq(transfers.routeId, routeId));
      if (!row) return null;
      return {
        routeId: row.routeId,
        status: row.status as TransferStatus,
        error: row.error,
        needsAttention: row.needsAttention,
        symbol: row.symbol,
        destSymbol: row.destSymbol,
        sourceChainId: row.sourceChainId,
        destChainId: row.destChainId,
        hubChainId: row.hubChainId,
        amount: row.amount,
        quotedOutputAmount: row.quotedOutputAmount,
        feeAmount: row.feeAmount,
        bridgeFeeAmount: row.bridgeFeeAmount,
        privacyFeeAmount: row.privacyFeeAmount,
        amountInUsd: row.amountInUsd,
        quotedOutputUsd: row.quotedOutputUsd,
        feeUsd: row.feeUsd,
        bridgeFeeUsd: row.bridgeFeeUsd,
        privacyFeeUsd: row.privacyFeeUsd,
        etaSeconds: row.etaSeconds,
        route: row.route,
        depositAddress: row.depositAddress,
        depositTokenAddress: row.sourceToken,
        hubAccount: row.hubAccount,
        hubIsSmartAccount: row.hubIsSmartAccount,
        userDestinationAddress: row.userDestinationAddress,
        refundAddress: row.refundAddress,
        depositDeadline: row.depositDeadline.toISOString(),
        payoutTxHash: row.payoutTxHash,
        createdAt: row.createdAt.toISOString(),
        updatedAt: row.updatedAt.toISOString(),
        completedAt: row.completedAt?.toISOString() ?? null,
        minAnonymitySet: row.minAnonymitySet ?? 1,
        privacy: row.anonymitySet === null ? null : { anonymitySet: row.anonymitySet, waitedSeconds: row.privacyWaitedSeconds ?? 0 },
      };
    },
  };
}

export type TransferService = ReturnType<typeof createTransferService>;
