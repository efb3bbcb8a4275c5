import {
  bigint,
  boolean,
  index,
  integer,
  jsonb,
  pgSequence,
  pgTable,
  pgView,
  primaryKey,
  doublePrecision,
  serial,
  text,
  timestamp,
  uniqueIndex,
} from 'drizzle-orm/pg-core';
import { inArray, sql } from 'drizzle-orm';
import type { HeldFunds } from '../domain/heldFunds.ts';
import type { GateLog, GateReason } from '../domain/observations.ts';

/**
 * Chain ids and derivation indexes: int8 (EIP-155 chain ids exceed int4), read as JS numbers. The API accepts
 * chain ids up to Number.MAX_SAFE_INTEGER only, so every stored value is exact.
 */
const chainIdColumn = (name: string) => bigint(name, { mode: 'number' });

/** Source of per-route account derivation indexes; never reused, so no two routes share an account. */
export const routeAccountIndex = pgSequence('route_account_index_seq', { startWith: 1 });

/**
 * The projection the API serves. Temporal owns orchestration state; this table is written only by
 * the create call and by the workflow's projection activity (in status order, guarded by `statusSeq`).
 * Amounts are decimal strings of smallest units (numeric precision beyond bigint is possible for 18-decimal tokens).
 */
export const transfers = pgTable(
  'transfers',
  {
    routeId: text('route_id').primaryKey(),
    /** Derivation index of the route's deposit, hub and exit accounts. */
    accountIndex: bigint('account_index', { mode: 'number' }).notNull().unique(),
    status: text('status').notNull(),
    /** Sequence number of the last projected status; an older write never overwrites a newer one. */
    statusSeq: integer('status_seq').notNull().default(0),
    error: text('error'),

    sourceChainId: chainIdColumn('source_chain_id').notNull(),
    destChainId: chainIdColumn('dest_chain_id').notNull(),
    hubChainId: chainIdColumn('hub_chain_id').notNull(),
    symbol: text('symbol').notNull(),
    destSymbol: text('dest_symbol').notNull(),
    sourceToken: text('source_token').notNull(),
    sourceDecimals: integer('source_decimals').notNull(),
    destToken: text('dest_token').notNull(),
    destDecimals: integer('dest_decimals').notNull(),
    hubToken: text('hub_token').notNull(),
    hubDecimals: integer('hub_decimals').notNull(),

    amount: text('amount').notNull(),
    quotedOutputAmount: text('quoted_output_amount').notNull(),
    feeAmount: text('fee_amount').notNull(),
    bridgeFeeAmount: text('bridge_fee_amount').notNull(),
    privacyFeeAmount: text('privacy_fee_amount').notNull(),
    /** The part of feeAmount quoted for the service's own gas (destination units); null for transfers quoted before it was. */
    networkCostAmount: text('network_cost_amount'),
    networkCostUsd: doublePrecision('network_cost_usd'),
    /** What rounding the output down to its amount class cost (destination units); null for transfers created before classes. */
    roundingAmount: text('rounding_amount'),
    roundingUsd: doublePrecision('rounding_usd'),
    amountInUsd: doublePrecision('amount_in_usd'),
    quotedOutputUsd: doublePrecision('quoted_output_usd'),
    feeUsd: doublePrecision('fee_usd'),
    bridgeFeeUsd: doublePrecision('bridge_fee_usd'),
    privacyFeeUsd: doublePrecision('privacy_fee_usd'),
    etaSeconds: integer('eta_seconds').notNull(),
    route: jsonb('route').$type<string[]>().notNull(),

    depositAddress: text('deposit_address').notNull(),
    hubAccount: text('hub_account').notNull(),
    hubIsSmartAccount: boolean('hub_is_smart_account').notNull(),
    /** Written by the worker at the bridge-in (the API has no exit xpub); null until then. */
    exitAccount: text('exit_account'),
    userDestinationAddress: text('user_destination_address').notNull(),
    /** Where undeliverable funds go back to (optional at create; without it they are held for an operator). */
    refundAddress: text('refund_address'),
    /** The anonymity set the route waits for before leaving the pool (config default, or raised at create). */
    minAnonymitySet: integer('min_anonymity_set'),
    /** What the route got, once it left the pool (src/privacy/anonymitySet.ts; counted again when a peer ragequits), and the time between. */
    anonymitySet: integer('anonymity_set'),
    privacyWaitedSeconds: integer('privacy_waited_seconds'),
    /** True when the route left the pool at PRIVACY_MAX_WAIT_SECONDS with a set below its minimum. */
    privacyLeftAtMaxWait: boolean('privacy_left_at_max_wait'),
    /**
     * Keyed hash of the client that created the transfer (as clientHash), kept until its note enters the pool, where it
     * becomes the class's pseudonym pool_notes.client_tag (src/privacy/anonymitySet.ts); cleared then, or when the route ends.
     */
    privacyClient: text('privacy_client'),
    /**
     * The partner that vouched for the route's user (a keyed hash of its API key's id, as client_hash) and the share of a
     * set its users may fill: pool_notes.voucher_tag and voucher_share_bps. Cleared with privacy_client.
     */
    privacyVoucher: text('privacy_voucher'),
    privacyVoucherShareBps: integer('privacy_voucher_share_bps'),
    /**
     * The address that funded the route's deposit: of the transfers that brought the deposit address to the amount, the
     * sender that paid the most (src/domain/funding.ts; deposit_transfers): routes of one sender count as one client in
     * an anonymity set (pool_notes.sender_tag).
     */
    depositSender: text('deposit_sender'),

    /** Parked: a step exhausted its retry budget after funds were received; an operator decides. */
    needsAttention: boolean('needs_attention').notNull().default(false),
    parkedStep: text('parked_step'),
    lastError: text('last_error'),
    parkedSince: timestamp('parked_since', { withTimezone: true }),
    /** What the route holds and where, recorded when it failed or parked holding funds. */
    heldFunds: jsonb('held_funds').$type<HeldFunds[]>(),

    depositDeadline: timestamp('deposit_deadline', { withTimezone: true }).notNull(),
    /** When the deposit watcher last saw a token transfer into the deposit address (any token, any status). */
    depositSeenAt: timestamp('deposit_seen_at', { withTimezone: true }),
    /**
     * When the stray-deposit check last looked at the finished route's deposit address. A finished route is looked
     * at once, and again whenever the watcher sees a transfer into it after that (surplus, second or late deposit).
     */
    depositCheckedAt: timestamp('deposit_checked_at', { withTimezone: true }),
    /**
     * Per-hop transaction hashes shown to the statusToken holder (docs/api.md): the sender's deposit, the bridge-in
     * sent from the deposit account, and the payout on the destination chain. Never the shield or the withdrawal.
     */
    depositTxHash: text('deposit_tx_hash'),
    bridgeInTxHash: text('bridge_in_tx_hash'),
    payoutTxHash: text('payout_tx_hash'),
    /** Optional URL the service POSTs each status change to (signed; docs/api.md "Webhooks"). */
    webhookUrl: text('webhook_url'),
    /** The partner whose API key created the transfer (api_keys.id): its webhook secret signs, its fee is owed. Null: no key. */
    partnerId: integer('partner_id'),
    /** The partner's own reference for the transfer (create's externalId): unique per API key, searchable by that key only. */
    externalId: text('external_id'),
    /** Why a FAILED transfer failed, as a stable code (src/domain/failureCodes.ts); null while not failed. */
    failureCode: text('failure_code'),
    /** The partner's fee on this transfer (destination smallest units), part of feeAmount's retained margin; null: none. */
    partnerFeeAmount: text('partner_fee_amount'),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
    completedAt: timestamp('completed_at', { withTimezone: true }),
    /**
     * SHA-256 of the statusToken handed out once at create: GET answers the full view only to its holder, and
     * status and error to anyone with the routeId (docs/api.md). Null for transfers created before it existed.
     */
    statusTokenHash: text('status_token_hash'),
    /**
     * What the public view's own delays are drawn from once the statusToken was reissued (src/transfers/publicView.ts):
     * the first token's hash, kept, so a reissue never moves the moments the public view already showed. Null: the
     * token was never reissued, and status_token_hash is the seed.
     */
    publicDelaySeed: text('public_delay_seed'),
    /**
     * Keyed hash of the client (API key or IP) that created the transfer, kept only while it is unfunded: it counts
     * toward that client's cap on unfunded transfers and is cleared once the transfer leaves AWAITING_DEPOSIT.
     */
    clientHash: text('client_hash'),
  },
  (t) => [
    index('transfers_status_idx').on(t.status),
    index('transfers_unfunded_client_idx').on(t.clientHash).where(sql`${t.clientHash} is not null`),
    index('transfers_attention_idx').on(t.needsAttention),
    // The deposit watcher looks up the routes that the Transfer logs it read paid into.
    uniqueIndex('transfers_deposit_address_uq').on(t.sourceChainId, t.depositAddress),
    // …and, each pass, the finished routes it still watches for strays (activities/depositWatcher.ts, STRAY_WATCH_DAYS).
    index('transfers_finished_watch_idx')
      .on(t.sourceChainId, sql`coalesce(${t.completedAt}, ${t.updatedAt})`)
      .where(sql`${t.status} in ('COMPLETED', 'FAILED')`),
    // …and the routes not finished yet, which it always watches.
    index('transfers_unfinished_watch_idx').on(t.sourceChainId).where(sql`${t.status} not in ('COMPLETED', 'FAILED')`),
    // A partner lists its own transfers, newest first, and finds one by its own reference.
    index('transfers_partner_listing_idx').on(t.partnerId, t.createdAt, t.routeId).where(sql`${t.partnerId} is not null`),
    uniqueIndex('transfers_partner_external_id_uq').on(t.partnerId, t.externalId).where(sql`${t.externalId} is not null`),
  ],
);

/**
 * Every status a transfer reached and when (the projection writes it with the status). Only the public view reads it:
 * without the statusToken, GET and the event stream show the status as it stood at the start of the current exit
 * epoch (docs/privacy.md, "Quiet public channels").
 */
export const transferStatuses = pgTable(
  'transfer_statuses',
  {
    routeId: text('route_id').notNull(),
    statusSeq: integer('status_seq').notNull(),
    status: text('status').notNull(),
    reachedAt: timestamp('reached_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.routeId, t.statusSeq] })],
);

/**
 * A route's note in the privacy pool: the public facts of its deposit (the note's secrets derive from the
 * signer's keys and the route's account index, and are never stored). Written by the shield activity.
 */
export const poolNotes = pgTable(
  'pool_notes',
  {
    routeId: text('route_id').primaryKey(),
    /** The pool's asset (the hub token). */
    asset: text('asset').notNull(),
    label: text('label').notNull(),
    commitment: text('commitment').notNull(),
    /** Value of the note after the pool's deposit fee. */
    value: text('value').notNull(),
    /** The route's amount class (src/privacy/amountClass.ts amountClassKey); null for routes created before classes. */
    amountClass: text('amount_class'),
    txHash: text('tx_hash').notNull(),
    blockNumber: text('block_number').notNull(),
    depositedAt: timestamp('deposited_at', { withTimezone: true }).notNull(),
    withdrawnAt: timestamp('withdrawn_at', { withTimezone: true }),
    /** Set when the note went back to its depositor: it no longer hides anyone. */
    ragequitAt: timestamp('ragequit_at', { withTimezone: true }),
    /**
     * When the service first saw the ASP approve the note (the privacy gate's pass, or a route's own check): no earlier
     * than the public root that approved it. A withdrawal counts a peer only if it was approved before its exit epoch.
     */
    approvedAt: timestamp('approved_at', { withTimezone: true }),
    /**
     * The creating client as a pseudonym of this class only (SHA-256 of transfers.privacy_client and the class): one
     * client's notes of a class count once in an anonymity set (src/privacy/anonymitySet.ts); across classes, or without
     * CLIENT_HASH_KEY, it names nobody.
     */
    clientTag: text('client_tag'),
    /** The deposit's sender as a pseudonym of this class only (SHA-256 of transfers.deposit_sender and the class). */
    senderTag: text('sender_tag'),
    /** The partner that vouched for the route's user, as a pseudonym of this class only, and the share of a set its users may fill. */
    voucherTag: text('voucher_tag'),
    voucherShareBps: integer('voucher_share_bps'),
    /**
     * The candidates counted in the route's anonymity set when its withdrawal was proved (src/privacy/anonymitySet.ts),
     * written before the proof, and the state tree's leaf count at the root it proved against (orders the class's
     * withdrawals by what they could spend). Reports are counted from them.
     */
    anonymityMembers: jsonb('anonymity_members').$type<Array<{ routeId: string; client: number }>>(),
    provedLeaves: integer('proved_leaves'),
    /**
     * The gate (src/privacy/gate.ts): the start of the first exit epoch the note may leave in, why its gate opened, and
     * what the last decision about it counted (written at each decision while closed, kept once open). Null while closed.
     */
    gatedAt: timestamp('gated_at', { withTimezone: true }),
    gateReason: text('gate_reason').$type<GateReason>(),
    gateLog: jsonb('gate_log').$type<GateLog>(),
    /** The note's own random seed for the exit lottery's draws (src/privacy/exitLottery.ts), set when its gate opens. */
    exitSeed: text('exit_seed'),
    /**
     * The exit the lottery drew and the epoch it is in: the moment the route withdraws, cleared when the withdrawal is
     * deferred (the note then faces the next epochs' draws). Once withdrawn, `exitEpochAt` orders the class's withdrawals.
     */
    exitAt: timestamp('exit_at', { withTimezone: true }),
    exitEpochAt: timestamp('exit_epoch_at', { withTimezone: true }),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [index('pool_notes_amount_class_idx').on(t.amountClass)],
);

/**
 * The exit lottery of each class and epoch (src/privacy/exitLottery.ts), written once by the first pass that draws for
 * the epoch (the epoch before it) so that every pass and replica draws against the same chance.
 */
export const classExitEpochs = pgTable(
  'class_exit_epochs',
  {
    amountClass: text('amount_class').notNull(),
    startsAt: timestamp('starts_at', { withTimezone: true }).notNull(),
    /** Each gated note of the class leaves in this epoch with this chance (1 in a flush). */
    chance: doublePrecision('chance').notNull(),
    flush: boolean('flush').notNull(),
    /** What the chance came from: the class's pool entries in its traffic window, and the set its routes aim at. */
    entries: integer('entries').notNull(),
    target: integer('target').notNull(),
  },
  (t) => [primaryKey({ columns: [t.amountClass, t.startsAt] })],
);

/**
 * Price epochs (src/quote/priceEpochs.ts): the USD price of a token held for cross-asset quotes from `startedAt` until
 * `endsAt` (the end of its clock epoch, or earlier when the market moved and a new epoch started).
 */
export const priceEpochs = pgTable(
  'price_epochs',
  {
    /** `<chainId>:<token address, lowercase>`. */
    token: text('token').notNull(),
    startedAt: timestamp('started_at', { withTimezone: true }).notNull(),
    endsAt: timestamp('ends_at', { withTimezone: true }).notNull(),
    usdPrice: text('usd_price').notNull(),
    /** The end of the exit epoch in which a quote last checked the held price against the market (null: never). */
    checkedUntil: timestamp('checked_until', { withTimezone: true }),
  },
  (t) => [primaryKey({ columns: [t.token, t.startedAt] })],
);

/**
 * The service's income left in the pool: the change note each withdrawal leaves (a route's note less what it
 * withdrew), generation 1 from the route's own withdrawal, k + 1 from the sweep of generation k. Collected only by
 * income sweeps (src/income/), in amounts of a fixed grid, in batches, days later (docs/privacy.md, "Collecting the
 * income"). Its secrets derive from the signer's keys and the label; never stored.
 */
export const changeNotes = pgTable(
  'change_notes',
  {
    routeId: text('route_id').notNull(),
    generation: integer('generation').notNull(),
    asset: text('asset').notNull(),
    label: text('label').notNull(),
    /** What the note holds, in the asset's smallest units. */
    value: text('value').notNull(),
    /** When the withdrawal that left it was mined. */
    leftAt: timestamp('left_at', { withTimezone: true }).notNull(),
    /** Set when a sweep spent it: what it took (gross) and its transaction; the rest is generation + 1. */
    sweptAmount: text('swept_amount'),
    sweptTxHash: text('swept_tx_hash'),
    sweptAt: timestamp('swept_at', { withTimezone: true }),
  },
  (t) => [primaryKey({ columns: [t.routeId, t.generation] })],
);

/**
 * Write-ahead record of every on-chain send, keyed by (route, step) while it is live. The signed transaction is
 * stored before it is broadcast, so a retried activity re-broadcasts the same transaction (same nonce) instead of
 * signing a second payment. A transaction that does not mine is replaced at the same nonce with higher fees: a new
 * attempt of the same intent, recorded before it is broadcast like the first. Any attempt may be the one that mines.
 * A voided intent can never mine (its nonce went to another transaction, or it never reached a node and the route
 * ended); it keeps its row but frees its (route, step) key.
 */
export const txIntents = pgTable(
  'tx_intents',
  {
    /** For operators: `routectl senders` lists it, `routectl void <id>` voids it. */
    id: serial('id').primaryKey(),
    routeId: text('route_id').notNull(),
    step: text('step').notNull(),
    chainId: chainIdColumn('chain_id').notNull(),
    fromAddress: text('from_address').notNull(),
    nonce: integer('nonce').notNull(),
    /** The latest attempt: the only bytes broadcast from now on. */
    txHash: text('tx_hash').notNull(),
    rawTx: text('raw_tx').notNull(),
    /** 1, then one more for each replacement with higher fees. */
    attempt: integer('attempt').notNull().default(1),
    /** The hashes of the earlier attempts, oldest first. */
    earlierTxHashes: jsonb('earlier_tx_hashes').$type<string[]>().notNull().default([]),
    lastAttemptAt: timestamp('last_attempt_at', { withTimezone: true }).notNull().defaultNow(),
    /** pending (until a send saw its nonce used) | mined | voided. */
    status: text('status').notNull().default('pending'),
    /** The attempt that mined (set once seen; for a voided intent: it mined after all). */
    minedTxHash: text('mined_tx_hash'),
    voidReason: text('void_reason'),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex('tx_intents_live_step_uq').on(t.routeId, t.step).where(sql`${t.status} <> 'voided'`),
    index('tx_intents_sender_idx').on(t.chainId, t.fromAddress, t.nonce),
  ],
);

/** The bridge orders a route placed, one per leg, so a retry reuses the order instead of opening another. */
export const bridgeOrders = pgTable(
  'bridge_orders',
  {
    routeId: text('route_id').notNull(),
    leg: text('leg').notNull(),
    requestId: text('request_id').notNull(),
    depositAddress: text('deposit_address').notNull(),
    amountIn: text('amount_in').notNull(),
    amountOut: text('amount_out').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.routeId, t.leg] })],
);

/**
 * Per-route accounting: one row per money movement (received, bridged_in, arrived_on_hub, shielded,
 * unshielded, bridged_out, paid, service_fee, refunded, ragequit). Inserts are idempotent on (route, entryKey);
 * entryKey is the kind, or kind:key for movements that can happen more than once (refunds).
 */
export const ledgerEntries = pgTable(
  'ledger_entries',
  {
    id: serial('id').primaryKey(),
    routeId: text('route_id').notNull(),
    kind: text('kind').notNull(),
    entryKey: text('entry_key').notNull(),
    chainId: chainIdColumn('chain_id').notNull(),
    token: text('token').notNull(),
    amount: text('amount').notNull(),
    txHash: text('tx_hash'),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [uniqueIndex('ledger_route_entry_uq').on(t.routeId, t.entryKey)],
);

/**
 * The ledger's movements a route's holder sees in its full view (what arrived, what was refunded: src/transfers/outcomes.ts):
 * the API reads them here and never the ledger itself, whose pool entries (the shield and the unshield) would join the
 * route's two halves (deploy/postgres/roles.sql).
 */
export const transferOutcomeEntries = pgView('transfer_outcome_entries').as((qb) =>
  qb
    .select({
      id: ledgerEntries.id,
      routeId: ledgerEntries.routeId,
      kind: ledgerEntries.kind,
      chainId: ledgerEntries.chainId,
      token: ledgerEntries.token,
      amount: ledgerEntries.amount,
      txHash: ledgerEntries.txHash,
    })
    .from(ledgerEntries)
    .where(inArray(ledgerEntries.kind, ['received', 'refunded'])),
);

/**
 * Token contracts other than the route's source token seen moving into a route's deposit address (ERC-20
 * Transfer logs of any contract), so the stray-deposit scanner checks their balances too: a deposit of a
 * different token with the same symbol is held or refunded, never missed. Written by the deposit watcher.
 */
export const depositTokens = pgTable(
  'deposit_tokens',
  {
    routeId: text('route_id').notNull(),
    chainId: chainIdColumn('chain_id').notNull(),
    token: text('token').notNull(),
    /** The first transfer seen (for operators). */
    txHash: text('tx_hash').notNull(),
    blockNumber: bigint('block_number', { mode: 'number' }).notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.routeId, t.token] })],
);

/**
 * The transfers of its own token into a route's deposit address while it awaited its deposit (written by the deposit
 * watcher, never overwritten): who funded the route is computed from them (src/domain/funding.ts), so a later poke or a
 * forged zero-value `transferFrom` changes nothing. Values in the token's smallest units.
 */
export const depositTransfers = pgTable(
  'deposit_transfers',
  {
    routeId: text('route_id').notNull(),
    txHash: text('tx_hash').notNull(),
    logIndex: integer('log_index').notNull(),
    blockNumber: bigint('block_number', { mode: 'number' }).notNull(),
    sender: text('sender').notNull(),
    value: text('value').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ columns: [t.routeId, t.txHash, t.logIndex] }),
    // A partner finds its transfer by the deposit's transaction hash.
    index('deposit_transfers_tx_hash_idx').on(t.txHash),
  ],
);

/**
 * How far the deposit watcher has read each source chain's Transfer logs (the next block to read). Each read
 * goes back a few blocks below it, so a log that a short reorg moved is seen again.
 */
export const depositWatchCursors = pgTable('deposit_watch_cursors', {
  chainId: chainIdColumn('chain_id').primaryKey(),
  nextBlock: bigint('next_block', { mode: 'number' }).notNull(),
  /** The next block to read for the finished routes' addresses (read once a minute); null: as next_block. */
  finishedNextBlock: bigint('finished_next_block', { mode: 'number' }),
  /** The next block read whole for native-currency deposits (they leave no log); null: as next_block. */
  nativeNextBlock: bigint('native_next_block', { mode: 'number' }),
  updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
});

/**
 * The signer's fingerprint: the address of a derivation path no route uses, recorded by the first API or
 * worker that starts on this database. Every later start compares its own, so an API and a worker with
 * different SIGNER_MNEMONICs refuse to start instead of handing out deposit addresses nobody can spend.
 * Public information only (an address), never the secret.
 */
export const signerFingerprints = pgTable('signer_fingerprints', {
  name: text('name').primaryKey(),
  address: text('address').notNull(),
  createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
});

/** Partner API keys. Only the SHA-256 of a key is stored; the key itself is shown once, when it is created. */
export const apiKeys = pgTable('api_keys', {
  id: serial('id').primaryKey(),
  name: text('name').notNull().unique(),
  keyHash: text('key_hash').notNull().unique(),
  /** The key's first characters, so an operator can tell keys apart without the secret. */
  keyPrefix: text('key_prefix').notNull(),
  /** Null: the service's default (RATE_LIMIT_PER_MINUTE and its siblings). */
  requestsPerMinute: integer('requests_per_minute'),
  createsPerMinute: integer('creates_per_minute'),
  maxUnfunded: integer('max_unfunded'),
  /** The partner's fee, in basis points of the output before it, on every transfer created with this key (0: none). */
  feeBps: integer('fee_bps').notNull().default(0),
  /**
   * Whether the key vouches for its users (docs/privacy.md, "Users of one integrator"): null, its transfers are one
   * client in every anonymity set; else each userReference it sends is a client of its own, and its users together
   * may fill at most this share (basis points) of any one route's set.
   */
  userShareBps: integer('user_share_bps'),
  /** The partner's webhook secret is derived from WEBHOOK_SIGNING_SECRET and this generation (src/webhooks/signingSecrets.ts). */
  webhookSecretGeneration: integer('webhook_secret_generation').notNull().default(1),
  /** After a rotation: until when deliveries are signed with the previous generation's secret too. */
  webhookPreviousValidUntil: timestamp('webhook_previous_valid_until', { withTimezone: true }),
  /** The partner's default webhook endpoint, used when a create names none; null: none. */
  webhookUrl: text('webhook_url'),
  /**
   * Browser origins (scheme://host[:port]) allowed to call the API with this key (CORS) and to frame its transfers'
   * tracking pages (frame-ancestors). Empty: none.
   */
  allowedOrigins: text('allowed_origins').array().notNull().default(sql`'{}'::text[]`),
  createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  revokedAt: timestamp('revoked_at', { withTimezone: true }),
});

/** Fixed-window request counters, shared by every API instance. Old windows are deleted as new ones open. */
export const rateLimitCounters = pgTable(
  'rate_limit_counters',
  {
    /** Which limit and which client, e.g. `create:<client hash>`; never a raw IP or key. */
    bucket: text('bucket').notNull(),
    windowStart: timestamp('window_start', { withTimezone: true }).notNull(),
    hits: integer('hits').notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.bucket, t.windowStart] }), index('rate_limit_counters_window_idx').on(t.windowStart)],
);

/**
 * The leaves of a Privacy Pools state tree that are final (deep enough below the head that no reorg moves them), kept
 * so a worker that starts does not read the pool's every LeafInserted event again (src/providers/privacy-pools/pool/
 * leafStore.ts). Public data: the pool's own events.
 */
export const poolLeaves = pgTable(
  'pool_leaves',
  {
    chainId: integer('chain_id').notNull(),
    pool: text('pool').notNull(),
    /** 0-based position in the tree (the event's index minus one). */
    leafIndex: integer('leaf_index').notNull(),
    /** The commitment, as a decimal string. */
    leaf: text('leaf').notNull(),
  },
  (t) => [primaryKey({ columns: [t.chainId, t.pool, t.leafIndex] })],
);

/** How far each pool's leaves in pool_leaves were read: every leaf up to this block is there. */
export const poolLeafCursors = pgTable(
  'pool_leaf_cursors',
  {
    chainId: integer('chain_id').notNull(),
    pool: text('pool').notNull(),
    scannedTo: bigint('scanned_to', { mode: 'bigint' }).notNull(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.chainId, t.pool] })],
);

/**
 * A token bucket per provider endpoint class (`relay:quote`, `relay:status`, …), shared by every API and worker
 * replica, so together they stay inside the provider's quota (src/providers/providerQuota.ts). Tokens in thousandths.
 */
export const providerQuotas = pgTable('provider_quotas', {
  bucket: text('bucket').primaryKey(),
  milliTokens: bigint('milli_tokens', { mode: 'bigint' }).notNull(),
  refilledAt: timestamp('refilled_at', { withTimezone: true }).notNull().defaultNow(),
});

/**
 * Secrets the service generates for itself once, on first use, e.g. `client_hash_key`: the HMAC key of the client
 * hashes in rate_limit_counters and transfers.client_hash when CLIENT_HASH_KEY is not configured.
 */
export const serviceSecrets = pgTable('service_secrets', {
  name: text('name').primaryKey(),
  value: text('value').notNull(),
  createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
});

/**
 * Every operator action (retry, fail, refund, recover, void, API key changes): who, why, with what, and how it
 * ended. Written before the action runs (outcome `requested`) and completed after it (`done`, `refused`, `failed`).
 */
export const operatorActions = pgTable(
  'operator_actions',
  {
    id: bigint('id', { mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
    routeId: text('route_id'),
    action: text('action').notNull(),
    operator: text('operator').notNull(),
    reason: text('reason').notNull(),
    params: jsonb('params').$type<Record<string, unknown>>().notNull().default({}),
    /** requested | done | refused | failed. */
    outcome: text('outcome').notNull().default('requested'),
    detail: text('detail'),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    finishedAt: timestamp('finished_at', { withTimezone: true }),
  },
  (t) => [index('operator_actions_route_idx').on(t.routeId, t.createdAt)],
);

/**
 * Idempotency-Key of POST /api/private-route, kept 24 h (docs/api.md). The key itself is never stored: `keyDigest`
 * is its SHA-256, and the create answer (which holds the statusToken) is stored encrypted under a key derived
 * from the Idempotency-Key, so only a client presenting the key again can read it back.
 */
export const idempotencyKeys = pgTable(
  'idempotency_keys',
  {
    keyDigest: text('key_digest').primaryKey(),
    /** SHA-256 of the request body as parsed (canonical JSON): the same key with another body is a 409. */
    requestDigest: text('request_digest').notNull(),
    /** Null while the first request with this key is still being answered. */
    routeId: text('route_id'),
    /** AES-256-GCM of the create answer (base64url iv.ciphertext.tag); null while in progress. */
    sealedResponse: text('sealed_response'),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    expiresAt: timestamp('expires_at', { withTimezone: true }).notNull(),
  },
  (t) => [index('idempotency_keys_expires_idx').on(t.expiresAt)],
);

/**
 * Webhook deliveries: one row per (route, status change), written before the delivery starts and updated after
 * each attempt. Shown by `routectl show`. The URL is the route's (transfers.webhook_url), never copied here.
 */
export const webhookDeliveries = pgTable(
  'webhook_deliveries',
  {
    /** The event id sent in the body and the `Webhook-Id` header: `<routeId>:<statusSeq>`. */
    eventId: text('event_id').primaryKey(),
    routeId: text('route_id').notNull(),
    status: text('status').notNull(),
    statusSeq: integer('status_seq').notNull(),
    /** pending | delivered | failed (the retries ran out). */
    state: text('state').notNull().default('pending'),
    attempts: integer('attempts').notNull().default(0),
    /** HTTP status of the last attempt, null when it got no answer. */
    lastResponseStatus: integer('last_response_status'),
    /** Why the last attempt failed, without the URL (it may carry a secret). */
    lastError: text('last_error'),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    lastAttemptAt: timestamp('last_attempt_at', { withTimezone: true }),
    deliveredAt: timestamp('delivered_at', { withTimezone: true }),
    /**
     * The earliest the delivery may go out. Null while it is held: a pool-phase status or the end, until the route
     * ends and the public view's moment for its end is known (activities/webhooks.ts, docs/privacy.md). Defaults to the
     * insert's time: a row written by a worker from before held deliveries is never held.
     */
    deliverAfter: timestamp('deliver_after', { withTimezone: true }).defaultNow(),
  },
  (t) => [
    index('webhook_deliveries_route_idx').on(t.routeId),
    // The worker's minute sweep for deliveries never started (activities/webhooks.ts): only those rows, not the table.
    index('webhook_deliveries_unstarted_idx').on(t.deliverAfter).where(sql`${t.state} = 'pending' and ${t.attempts} = 0`),
  ],
);

/**
 * Quotes handed out with a quoteId (src/quote/quoteRecords.ts), kept until shortly after they expire so that a create
 * citing one gets exactly it. No client address or recipient is stored with a quote; a partner's id is, when one asked.
 */
export const quotes = pgTable(
  'quotes',
  {
    quoteId: text('quote_id').primaryKey(),
    /** The quote and the tokens it resolved (ResolvedQuote), as the quote service returned them. */
    resolved: jsonb('resolved').notNull(),
    /** The partner whose API key asked for it (api_keys.id): only that key may cite it. Null: asked without a key. */
    partnerId: integer('partner_id'),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    expiresAt: timestamp('expires_at', { withTimezone: true }).notNull(),
  },
  (t) => [index('quotes_expires_idx').on(t.expiresAt)],
);
