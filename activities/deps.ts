import type { Address, LocalAccount } from 'viem';
import type { RouteKeyring } from '../src/accounts/routeAccounts.ts';
import type { ChainClients } from '../src/chain/clients.ts';
import type { IntentControl, TxSender } from '../src/chain/txSender.ts';
import type { Database } from '../src/db/client.ts';
import type { DepositAddressBridge } from '../src/providers/bridge.ts';
import type { BurnAndMintBridge } from '../src/providers/cctp/types.ts';
import type { PrivacyRules } from '../src/privacy/exitLottery.ts';
import type { DepositObservation, PrivacyObservation } from '../src/domain/observations.ts';
import type { PrivacyPool } from '../src/providers/privacyPool.ts';
import type { WebhookSettings, WebhookStarter } from '../src/webhooks/settings.ts';

/** How the watchers reach the transfer workflows (Temporal signals in production; tests inject their own). */
export interface WorkflowNotifier {
  /** Each resolves quietly when the route's workflow is no longer running. */
  depositObserved(routeId: string, observation: DepositObservation): Promise<void>;
  privacyObserved(routeId: string, observation: PrivacyObservation): Promise<void>;
}

/** What the activities need from the outside world; tests inject their own. */
export interface ActivityDeps {
  db: Database;
  chains: ChainClients;
  sender: TxSender & IntentControl;
  /** The bridge of the configured mode (BRIDGE_PROVIDER). */
  bridge: { mode: 'relay'; relay: DepositAddressBridge } | { mode: 'cctp'; cctp: BurnAndMintBridge };
  pool: PrivacyPool;
  keyring: RouteKeyring;
  /** Funded account that tops up per-route accounts with native gas up to the pool deposit (deposit and hub accounts). */
  gasAccount: LocalAccount;
  /**
   * The pool's relayer, shared by all routes: submits withdrawals and tops up gas on the far side of the pool
   * (exit accounts). Never the gas account, so no funding path joins a route's deposit to its withdrawal.
   */
  poolRelayer: LocalAccount;
  /**
   * The relayer's sending accounts, the relayer first: withdrawals and mints after the pool take turns among them,
   * so one transaction stuck at an account's head holds up only what that account signed (src/chain/sender/pickAccount.ts).
   */
  relaySenders: readonly LocalAccount[];
  /** Income sweeps (src/income/sweepPlan.ts); no treasury: none run. */
  incomeSweeps?: { treasury?: Address; gridUnit: bigint; minAmount: bigint; minAgeSeconds: number; minBatch: number };
  /** How often long-running activities poll a chain or provider. */
  pollIntervalMs: number;
  /** Signals transfer workflows (the watchers' reports); the worker adds it (src/temporal/worker.ts). */
  notifier?: WorkflowNotifier;
  /** PRIVACY_POLL_SECONDS: how often the privacy watcher asks the ASP about the notes in the pool. */
  privacyPollSeconds?: number;
  /** PRIVACY_*: the privacy gate's and the exit lottery's rules (src/privacy/gate.ts, src/privacy/exitLottery.ts). */
  privacyRules: PrivacyRules;
  /**
   * Blocks a transaction must be below its chain's head before it counts (CHAIN_CONFIRMATIONS, else
   * DEPOSIT_CONFIRMATIONS): a deposit before it funds a route, the route's pool deposit before its note is recorded.
   */
  confirmationsOf?: (chainId: number) => number;
  /** REFUND_MIN_AMOUNT: the smallest refund per source-token symbol, as a human decimal ("0.10"); unlisted symbols have none. */
  refundMinimums?: Record<string, string>;
  /** REFUND_DELAY_MIN/MAX_SECONDS: the window an automatic refund of a stray deposit waits in (none: at once). */
  refundDelay?: { minSeconds: number; maxSeconds: number };
  /** FEE_CEILING_GWEI, in wei per gas by chain id: a pool withdrawal waits while the chain asks more. */
  feeCeilingsWei?: Readonly<Record<number, bigint>>;
  /** STRAY_LIST_BATCH_SECONDS: held strays are flagged for an operator at multiples of it (none: as soon as found). */
  strayListBatchSeconds?: number;
  /** OPERATOR_ALLOWED_DESTINATIONS: where operators may send a route's funds besides its refundAddress and recipient. */
  operatorAllowedDestinations?: readonly string[];
  /** WEBHOOK_*: how the worker signs and sends webhook deliveries (activities/webhooks.ts). */
  webhooks?: WebhookSettings;
  /** Starts webhook delivery workflows when a status is written; the worker adds it (src/temporal/worker.ts). */
  webhookStarter?: WebhookStarter;
}

/** The notifier the watchers signal through; only a worker has one (startTransferWorker adds it). */
export function requireNotifier(deps: ActivityDeps): WorkflowNotifier {
  if (!deps.notifier) throw new Error('the watchers need a WorkflowNotifier: run them in a worker started by startTransferWorker');
  return deps.notifier;
}

/** A route's exit account, derived by the worker from the signer's public keys (the API cannot: it has no exit xpub). */
export function exitAddressOf(deps: Pick<ActivityDeps, 'keyring'>, accountIndex: number): Address {
  return deps.keyring.routeAddresses(accountIndex).exit;
}
