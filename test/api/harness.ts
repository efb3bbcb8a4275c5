/**
 * The API in process over real Postgres, with the real quote, transfer, idempotency and status-feed services; only
 * the bridge provider, the privacy pool and Temporal's `workflow.start` are stand-ins (no chain, no worker).
 */
import { freeNetwork } from '../../src/quote/gasCost.ts';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Client } from '@temporalio/client';
import type { Address } from 'viem';
import { english, generateMnemonic } from 'viem/accounts';
import { createRouteAddressBook, createRouteKeyring } from '../../src/accounts/routeAccounts.ts';
import { createApi } from '../../src/api/app.ts';
import type { ApiDeps } from '../../src/api/deps.ts';
import { connectDatabase, migrateDatabase, type DatabaseHandle } from '../../src/db/client.ts';
import { freePort } from '../../devnet/ports.ts';
import { startLocalPostgres, type LocalPostgres } from '../../devnet/postgres.ts';
import { createLogger, type Logger } from '../../src/logger.ts';
import { BridgeRouteError, BridgeUnavailableError, type BridgeToken, type DepositAddressBridge } from '../../src/providers/bridge.ts';
import type { PrivacyPool } from '../../src/providers/privacyPool.ts';
import { createQuoteService } from '../../src/quote/quoteService.ts';
import { withAmountLimits } from '../../src/quote/amountLimits.ts';
import { withPartnerFees } from '../../src/quote/partnerFees.ts';
import { createQuoteRecords, withQuoteRecords } from '../../src/quote/quoteRecords.ts';
import { createInMemoryPriceEpochs } from '../../src/quote/priceEpochs.ts';
import { createIdempotencyStore } from '../../src/transfers/idempotency.ts';
import { createStatusFeed, type StatusFeed } from '../../src/transfers/statusFeed.ts';
import { createTransferService, type TransferService } from '../../src/transfers/transferService.ts';

export const SOURCE = 1;
export const HUB = 2;
export const DEST = 3;
export const SOURCE_EXPLORER = 'https://explorer.source.example';
export const RECIPIENT = '0x000000000000000000000000000000000000bEEF';
export const QUOTE_BODY = { sourceChainId: SOURCE, destChainId: DEST, amount: '10' };
export const CREATE_BODY = { ...QUOTE_BODY, userDestinationAddress: RECIPIENT };
/** Amounts that make the fake bridge answer like a provider without liquidity, or like one that is down. */
export const NO_ROUTE_AMOUNT = '777';
export const BRIDGE_DOWN_AMOUNT = '666';
/** The service's largest transfer here (every token is worth a dollar), and how long a quoteId stays good. */
export const MAX_TRANSFER_USD = '5000';
export const QUOTE_TTL_SECONDS = 30;

const token = (chainId: number, symbol: string, decimals: number, digit: string): BridgeToken => ({
  chainId,
  address: `0x${digit.repeat(40)}` as Address,
  symbol,
  name: symbol === 'USDC' ? 'USD Coin' : 'Wrapped Ether',
  decimals,
});

/**
 * Two tokens of the source chain that share a symbol, as a bridged token and its native issue do (USDC and USDC.e
 * where both call themselves "USDC"): naming them by symbol is ambiguous. Only on the source chain, and not USDC, so
 * that the default token stays unambiguous for every other test.
 */
export const SOURCE_USDT: BridgeToken = { chainId: SOURCE, address: `0x${'3'.repeat(40)}`, symbol: 'USDT', name: 'Tether USD', decimals: 6 };
export const SOURCE_BRIDGED_USDT: BridgeToken = { chainId: SOURCE, address: `0x${'4'.repeat(40)}`, symbol: 'USDT', name: 'Bridged USDT', decimals: 6 };

/** How much the fake bridge keeps of what it moves, in basis points: a test moves the market with it (0: one for one). */
export const market = { haircutBps: 0 };

const fakeBridge: DepositAddressBridge = {
  // The source chain names an explorer and its currency, as Relay's catalogue does; the others, like local chains, do not.
  listChains: async () =>
    [SOURCE, HUB, DEST].map((chainId) => ({
      chainId,
      name: `c${chainId}`,
      displayName: `Chain ${chainId}`,
      ...(chainId === SOURCE && { explorerUrl: SOURCE_EXPLORER, nativeCurrency: { symbol: 'ETH', decimals: 18 } }),
    })),
  listTokens: async (chainId) => [
    token(chainId, 'USDC', 6, '1'),
    token(chainId, 'WETH', 18, '2'),
    ...(chainId === SOURCE ? [SOURCE_USDT, SOURCE_BRIDGED_USDT] : []),
  ],
  quote: async (request) => {
    if (request.amount === 777_000_000n) throw new BridgeRouteError('no route: insufficient liquidity');
    if (request.amount === 666_000_000n) throw new BridgeUnavailableError('relay answered 503 at https://relay.example/quote');
    const amountOut = (request.amount * BigInt(10_000 - market.haircutBps)) / 10_000n;
    return {
      requestId: null,
      depositAddress: null,
      amountIn: request.amount,
      amountOut,
      amountInUsd: null,
      amountOutUsd: null,
      timeEstimateSeconds: 10,
    };
  },
  orderStatus: async () => assert.fail('not used'),
  tokenUsdPrice: async () => '1',
};
const fakePool = { chainId: HUB, fees: async () => ({ depositFeeBps: 0, withdrawalFeeBps: 0, minimumDeposit: 1n }) } as unknown as PrivacyPool;

export interface Harness {
  database: DatabaseHandle;
  transfers: TransferService;
  /** Moves the quote records' clock (a quote's expiry) forward. */
  quoteClock: { offsetMs: number };
  feed: StatusFeed;
  logLines: string[];
  logger: Logger;
  /** What `workflow.start` does (default: succeeds); a test may make it fail or wait. */
  workflowStart: { impl: () => Promise<unknown> };
  deps(extra?: Partial<ApiDeps>): ApiDeps;
  api(extra?: Partial<ApiDeps>): ReturnType<typeof createApi>;
  close(): Promise<void>;
}

export async function startHarness(name: string): Promise<Harness> {
  const dataDir = await mkdtemp(path.join(tmpdir(), `${name}-`));
  let postgres: LocalPostgres | undefined;
  let database: DatabaseHandle | undefined;
  try {
    postgres = await startLocalPostgres({ databaseUrl: process.env.TEST_DATABASE_URL, dataDir, port: await freePort(), ephemeral: true });
    await migrateDatabase(postgres.url);
    database = connectDatabase(postgres.url);
  } catch (error) {
    await postgres?.stop();
    await rm(dataDir, { recursive: true, force: true });
    throw error;
  }
  const db = database;
  const pg = postgres;
  const quoteClock = { offsetMs: 0 };
  const quoteRecords = createQuoteRecords(db.db, { ttlSeconds: QUOTE_TTL_SECONDS, now: () => Date.now() + quoteClock.offsetMs });
  const core = createQuoteService({
    bridge: fakeBridge,
    pool: fakePool,
    hubChainId: HUB,
    hubTokenSymbol: 'USDC',
    feePolicy: { feeBps: 0n, feeMinUsd: '0' },
    networkCosts: freeNetwork,
    priceEpochs: createInMemoryPriceEpochs({ epochSeconds: 3600, marginBps: 50 }),
    priceMarginBps: 50,
    poolEtaSeconds: 1,
    previewAccount: `0x${'9'.repeat(40)}`,
  });
  const quotes = withQuoteRecords(
    withAmountLimits(withPartnerFees(core), { maxTransferUsd: MAX_TRANSFER_USD, usdPrice: (t) => fakeBridge.tokenUsdPrice(t.chainId, t.address) }),
    quoteRecords,
  );
  const workflowStart = { impl: async (): Promise<unknown> => ({}) };
  const temporal = { workflow: { start: () => workflowStart.impl() } } as unknown as Client;
  const transfers = createTransferService({
    db: db.db,
    temporal,
    taskQueue: name,
    quotes,
    quoteRecords,
    addresses: createRouteAddressBook(createRouteKeyring(generateMnemonic(english)).xpubs()),
    settings: { depositTimeoutSeconds: 3600 } as never,
    privacy: {
      exitEpochSeconds: 2,
      publicEndDelaySeconds: 0,
      publicEndHoldSeconds: 0,
      minAnonymitySet: 1,
      maxAnonymitySet: 50,
      maxWaitSeconds: 10,
      pollSeconds: 1,
      reviewTimeoutSeconds: 10,
    },
  });
  const feed = createStatusFeed(db.db, { pollIntervalMs: 50 });
  const logLines: string[] = [];
  const logger = createLogger({ level: 'debug', write: (line) => logLines.push(line) });
  const idempotency = createIdempotencyStore(db.db);
  const deps = (extra: Partial<ApiDeps> = {}): ApiDeps => ({
    quotes,
    transfers,
    logger,
    servedChainIds: new Set([SOURCE, HUB, DEST]),
    idempotency,
    statusFeed: feed,
    ...extra,
  });
  return {
    database: db,
    transfers,
    quoteClock,
    feed,
    logLines,
    logger,
    workflowStart,
    deps,
    api: (extra) => createApi(deps(extra)),
    async close() {
      await feed.close();
      await db.close();
      await pg.stop();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

export interface Answer<T = Record<string, unknown>> {
  status: number;
  headers: Headers;
  body: { success: boolean; data?: T; error?: string; code?: string };
}

/** One JSON request to an app in process. */
export async function call<T = Record<string, unknown>>(
  app: { request: (path: string, init?: RequestInit) => Response | Promise<Response> },
  method: string,
  urlPath: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<Answer<T>> {
  const response = await app.request(urlPath, {
    method,
    headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  });
  return { status: response.status, headers: response.headers, body: (await response.json()) as Answer<T>['body'] };
}
