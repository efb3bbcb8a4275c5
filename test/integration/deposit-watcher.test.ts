import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import { MockActivityEnvironment } from '@temporalio/testing';
import { eq, inArray, sql } from 'drizzle-orm';
import { createPublicClient, createWalletClient, defineChain, erc20Abi, getAddress, http, type Address, type Hex, toHex, type PublicClient } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import {
  DEFAULT_DEPOSIT_WATCH_TUNING,
  depositWatcherActivities,
  FINISHED_READ_EVERY_POLLS,
  STRAY_WATCH_DAYS,
  type DepositWatchTuning,
} from '../../activities/depositWatcher.ts';
import type { ActivityDeps } from '../../activities/deps.ts';
import { testTokenAbi, testTokenBytecode } from '../../devnet/artifacts/TestToken.ts';
import { DEVNET_ACCOUNTS, startScratchAnvil, type AnvilNode } from '../../devnet/chains.ts';
import type { ChainClients } from '../../src/chain/clients.ts';
import { connectDatabase, type DatabaseHandle } from '../../src/db/client.ts';
import { depositTokens, depositTransfers, depositWatchCursors, transfers } from '../../src/db/schema.ts';
import { startTestPostgres, transferRow, type TestPostgres } from '../support/database.ts';

/**
 * The deposit watcher on real parts (one anvil chain, embedded Postgres), run in Temporal's mock activity context:
 * it reads only the Transfer logs into the deposit addresses it watches, in batches, after reading the head.
 */

const CHAIN_ID = 7_113_101;
let anvil: AnvilNode;
let postgres: TestPostgres;
let database: DatabaseHandle;
let client: PublicClient;
let usdc: Address;
let other: Address;
const faucet = privateKeyToAccount(DEVNET_ACCOUNTS.faucet);
const chain = defineChain({
  id: CHAIN_ID,
  name: 'watcher-test',
  nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
  rpcUrls: { default: { http: ['http://unused'] } },
});

/** Every JSON-RPC call the watcher sent (method and params), and a hook that runs before one is forwarded. */
let calls: { method: string; params: unknown[] }[] = [];
let beforeCall: ((call: { method: string; params: unknown[] }) => Promise<void>) | undefined;

const getLogsCalls = () => calls.filter((c) => c.method === 'eth_getLogs');
const freshAddress = () => privateKeyToAccount(generatePrivateKey()).address;
let nextIndex = 1;

before(
  async () => {
    [anvil, postgres] = await Promise.all([startScratchAnvil('watcher-test', CHAIN_ID), startTestPostgres('deposit-watcher-test')]);
    database = connectDatabase(postgres.url);
    client = createPublicClient({
      chain: { ...chain, rpcUrls: { default: { http: [anvil.rpcUrl] } } },
      transport: http(anvil.rpcUrl),
      pollingInterval: 50,
    }) as PublicClient;
    [usdc, other] = [await deployToken('USD Coin', 'USDC'), await deployToken('Other', 'OTHER')];
  },
  { timeout: 120_000 },
);
after(
  async () => {
    await database?.close();
    await Promise.all([anvil?.stop(), postgres?.stop()]);
  },
  { timeout: 60_000 },
);

// Each test watches only its own routes: the others' are moved out of the stray-watch window.
beforeEach(async () => {
  await database.db
    .update(transfers)
    .set({ status: 'COMPLETED', completedAt: sql`now() - make_interval(days => ${STRAY_WATCH_DAYS + 1})` })
    .where(sql`true`);
  calls = [];
  beforeCall = undefined;
});

async function deployToken(name: string, symbol: string): Promise<Address> {
  const wallet = createWalletClient({ account: faucet, chain, transport: http(anvil.rpcUrl) });
  const hash = await wallet.deployContract({ abi: testTokenAbi, bytecode: testTokenBytecode, args: [name, symbol, 6] });
  const address = getAddress((await client.waitForTransactionReceipt({ hash })).contractAddress!);
  await client.waitForTransactionReceipt({
    hash: await wallet.writeContract({ address, abi: testTokenAbi, functionName: 'mint', args: [faucet.address, 10n ** 15n] }),
  });
  return address;
}

async function pay(token: Address, to: Address, amount: bigint): Promise<Hex> {
  const wallet = createWalletClient({ account: faucet, chain, transport: http(anvil.rpcUrl) });
  const hash = await wallet.writeContract({ address: token, abi: erc20Abi, functionName: 'transfer', args: [to, amount] });
  await client.waitForTransactionReceipt({ hash, pollingInterval: 50 });
  return hash;
}

/** A route of this chain awaiting a deposit of 10 USDC (smallest units) at a fresh address. */
async function createRoute(overrides: Partial<typeof transfers.$inferInsert> = {}) {
  const index = nextIndex++;
  const row = transferRow(index, {
    routeId: `rt_watch_${index}`,
    sourceChainId: CHAIN_ID,
    sourceToken: usdc,
    amount: '10000000',
    depositAddress: freshAddress(),
    ...overrides,
  });
  await database.db.insert(transfers).values(row);
  return { routeId: row.routeId!, depositAddress: row.depositAddress as Address, amount: BigInt(row.amount) };
}

/** Chain clients over the anvil that record each call and run `beforeCall` before forwarding it. */
const recordingClients: ChainClients = {
  chain: () => chain,
  publicClient: () =>
    createPublicClient({
      chain,
      cacheTime: 0,
      transport: http(anvil.rpcUrl, {
        retryCount: 0,
        fetchFn: async (input, init) => {
          const body = JSON.parse(String(init?.body)) as { method: string; params: unknown[] } | { method: string; params: unknown[] }[];
          for (const call of Array.isArray(body) ? body : [body]) {
            calls.push(call);
            await beforeCall?.(call);
          }
          return fetch(input, init);
        },
      }),
    }) as PublicClient,
};

/** One pass of the watcher (runForSeconds 0) from the cursor, or passes for `runForSeconds`; what it reported to the transfer workflows. */
async function watchOnce(tuning: DepositWatchTuning = DEFAULT_DEPOSIT_WATCH_TUNING, runForSeconds = 0) {
  const observed: { routeId: string; balance: string }[] = [];
  // The watcher uses only these of the activities' dependencies.
  const deps = {
    db: database.db,
    chains: recordingClients,
    pollIntervalMs: 50,
    confirmationsOf: () => 0,
    notifier: {
      depositObserved: async (routeId: string, { balance }: { balance: string }) => void observed.push({ routeId, balance }),
      privacyObserved: async () => {},
    },
  } as unknown as ActivityDeps;
  const quiet = () => {};
  const env = new MockActivityEnvironment(undefined, { logger: { log: quiet, trace: quiet, debug: quiet, info: quiet, warn: quiet, error: quiet } });
  const { nextBlock } = (await env.run(() => depositWatcherActivities(deps, tuning).watchDeposits({ chainId: CHAIN_ID, runForSeconds }))) as {
    nextBlock: number;
  };
  return { observed, nextBlock };
}

/** Starts the cursor at the head, so a test reads only its own blocks (and the reorg margin below them). */
async function cursorAtHead(): Promise<void> {
  const nextBlock = Number(await client.getBlockNumber()) + 1;
  await database.db
    .insert(depositWatchCursors)
    .values({ chainId: CHAIN_ID, nextBlock, finishedNextBlock: nextBlock })
    .onConflictDoUpdate({ target: depositWatchCursors.chainId, set: { nextBlock, finishedNextBlock: nextBlock } });
}

/** The addresses named in an eth_getLogs call's topic 2 (the `to` filter); null when it has none. */
function recipientsOf(call: { params: unknown[] }): string[] | null {
  const topics = (call.params[0] as { topics?: (string | string[] | null)[] }).topics ?? [];
  const to = topics[2];
  if (to === undefined || to === null) return null;
  return (Array.isArray(to) ? to : [to]).map((topic) => getAddress(`0x${topic.slice(-40)}`));
}

describe('the deposit watcher reads only the transfers into the addresses it watches', { timeout: 300_000 }, () => {
  test('a deposit amid unrelated transfers is found, and a stray token sent to a watched address is recorded', { timeout: 60_000 }, async () => {
    await cursorAtHead();
    const route = await createRoute();
    for (let i = 0; i < 5; i++) await pay(i % 2 ? usdc : other, freshAddress(), 1_000n);
    const deposit = await pay(usdc, route.depositAddress, route.amount);
    await pay(other, freshAddress(), 7n);
    const stray = await pay(other, route.depositAddress, 3n);

    const { observed } = await watchOnce();
    assert.deepEqual(observed, [{ routeId: route.routeId, balance: route.amount.toString() }]);
    const recorded = await database.db.select().from(depositTransfers).where(eq(depositTransfers.routeId, route.routeId));
    assert.deepEqual(
      recorded.map((r) => r.txHash),
      [deposit],
    );
    const tokens = await database.db.select().from(depositTokens).where(eq(depositTokens.routeId, route.routeId));
    assert.deepEqual(
      tokens.map((t) => [t.token, t.txHash]),
      [[other, stray]],
    );
    const [row] = await database.db.select({ seenAt: transfers.depositSeenAt }).from(transfers).where(eq(transfers.routeId, route.routeId));
    assert.ok(row?.seenAt, 'the route is marked for the stray check');
    // Every read named the watched address (topic 2) and no token contract: nothing unrelated came back.
    assert.ok(getLogsCalls().length > 0);
    for (const call of getLogsCalls()) {
      assert.deepEqual(recipientsOf(call), [route.depositAddress]);
      assert.equal((call.params[0] as { address?: unknown }).address, undefined);
    }
  });

  test('a finished route is watched for strays for STRAY_WATCH_DAYS after it ended, not longer', { timeout: 60_000 }, async () => {
    await cursorAtHead();
    const recent = await createRoute({ status: 'COMPLETED', completedAt: sql`now() - interval '1 day'` as unknown as Date });
    const old = await createRoute({ status: 'FAILED', completedAt: sql`now() - make_interval(days => ${STRAY_WATCH_DAYS + 1})` as unknown as Date });
    await pay(usdc, recent.depositAddress, 5n);
    await pay(usdc, old.depositAddress, 5n);
    await watchOnce();
    const seen = await database.db
      .select({ routeId: transfers.routeId, seenAt: transfers.depositSeenAt })
      .from(transfers)
      .where(inArray(transfers.routeId, [recent.routeId, old.routeId]));
    assert.ok(seen.find((r) => r.routeId === recent.routeId)?.seenAt, 'a surplus to a route finished a day ago is seen');
    assert.equal(seen.find((r) => r.routeId === old.routeId)?.seenAt, null, 'an address finished longer ago is no longer read');
    for (const call of getLogsCalls()) assert.deepEqual(recipientsOf(call), [recent.depositAddress]);
  });

  test('finished routes are read on the first pass of a run and then every FINISHED_READ_EVERY_POLLS passes, from a cursor of their own', {
    timeout: 60_000,
  }, async () => {
    await cursorAtHead();
    const finished = await createRoute({ status: 'COMPLETED', completedAt: sql`now() - interval '1 hour'` as unknown as Date });
    const waiting = await createRoute();
    // 1.5 s at a 50 ms poll: some 30 passes, fewer than FINISHED_READ_EVERY_POLLS, over new blocks all the while.
    let mining = true;
    const blocks = (async () => {
      while (mining) {
        await pay(other, freshAddress(), 1n);
        await new Promise((r) => setTimeout(r, 100));
      }
    })();
    await watchOnce(DEFAULT_DEPOSIT_WATCH_TUNING, 1.5);
    mining = false;
    await blocks;
    assert.ok(getLogsCalls().filter((call) => recipientsOf(call)?.includes(waiting.depositAddress)).length > 2, 'the unfinished route is read pass after pass');
    const naming = getLogsCalls().filter((call) => recipientsOf(call)?.includes(finished.depositAddress));
    assert.equal(naming.length, 1, `the finished route's address is read once in ${FINISHED_READ_EVERY_POLLS} passes, not every pass`);
    // A stray sent after that read, while the main cursor moved on, is found at the next read of the finished routes.
    await pay(usdc, finished.depositAddress, 5n);
    for (let i = 0; i < 3; i++) await pay(usdc, freshAddress(), 1n);
    await watchOnce(DEFAULT_DEPOSIT_WATCH_TUNING, 0);
    const [row] = await database.db.select({ seenAt: transfers.depositSeenAt }).from(transfers).where(eq(transfers.routeId, finished.routeId));
    assert.ok(row?.seenAt, 'the stray into the finished route is seen');
  });

  test('more watched addresses than one call takes are read in batches, each batch over the same range', { timeout: 60_000 }, async () => {
    await cursorAtHead();
    const routes = [];
    for (let i = 0; i < 8; i++) routes.push(await createRoute());
    const last = routes.at(-1)!;
    await pay(usdc, last.depositAddress, last.amount);
    const { observed } = await watchOnce({ ...DEFAULT_DEPOSIT_WATCH_TUNING, addressesPerCall: 3 });
    assert.deepEqual(observed, [{ routeId: last.routeId, balance: last.amount.toString() }]);
    // One range (the pass covers a few blocks): three calls of 3, 3 and 2 addresses, together all eight.
    const batches = getLogsCalls().map(recipientsOf);
    assert.deepEqual(
      batches.map((b) => b?.length),
      [3, 3, 2],
    );
    assert.deepEqual(batches.flat().sort(), routes.map((r) => r.depositAddress).sort());
  });

  test('a route created and paid just before the pass reads the head is found in that pass', { timeout: 60_000 }, async () => {
    await cursorAtHead();
    let created: Awaited<ReturnType<typeof createRoute>> | undefined;
    // The API commits the route and the sender's deposit is mined, just before the watcher asks for the head:
    // the watched addresses are read after the head, so this pass already has the route.
    beforeCall = async (call) => {
      if (call.method !== 'eth_blockNumber' || created) return;
      created = await createRoute();
      await pay(usdc, created.depositAddress, created.amount);
    };
    const { observed } = await watchOnce();
    assert.ok(created);
    assert.deepEqual(observed, [{ routeId: created.routeId, balance: created.amount.toString() }]);
  });

  test('with no watched address the watcher makes no eth_getLogs call and moves its cursor to the head', { timeout: 60_000 }, async () => {
    await cursorAtHead();
    await pay(usdc, freshAddress(), 1n);
    const head = await client.getBlockNumber();
    const { nextBlock } = await watchOnce();
    assert.equal(getLogsCalls().length, 0);
    assert.ok(BigInt(nextBlock) > head, `the cursor (${nextBlock}) passed the head (${head})`);
  });

  test('catching up, the range doubles while the filter is quiet, and halves when the provider refuses it', { timeout: 60_000 }, async () => {
    const tuning = { ...DEFAULT_DEPOSIT_WATCH_TUNING, initialRange: 50n, maxRange: 400n };
    await cursorAtHead();
    const route = await createRoute();
    await client.request({ method: 'anvil_mine' as never, params: [toHex(700)] as never });
    await pay(usdc, route.depositAddress, route.amount);
    const quiet = await watchOnce(tuning);
    assert.deepEqual(quiet.observed, [{ routeId: route.routeId, balance: route.amount.toString() }]);
    // Over 700 blocks from the reorg margin: 50, 100, 200, then the rest (at most 400): four calls, not 15 of 50.
    const spans = getLogsCalls().map((c) => {
      const { fromBlock, toBlock } = c.params[0] as { fromBlock: Hex; toBlock: Hex };
      return Number(BigInt(toBlock) - BigInt(fromBlock)) + 1;
    });
    assert.deepEqual(spans.slice(0, 3), [50, 100, 200]);
    assert.equal(spans.length, 4, `spans ${spans.join(', ')}`);
    assert.ok(spans[3]! > 350 && spans[3]! <= 400, `spans ${spans.join(', ')}`);

    // A provider that refuses more than 30 blocks a call: halved to 25, the read goes on and finds the deposit.
    const second = await createRoute();
    await client.request({ method: 'anvil_mine' as never, params: [toHex(100)] as never });
    await pay(usdc, second.depositAddress, second.amount);
    calls = [];
    beforeCall = async (call) => {
      if (call.method !== 'eth_getLogs') return;
      const { fromBlock, toBlock } = call.params[0] as { fromBlock: Hex; toBlock: Hex };
      if (BigInt(toBlock) - BigInt(fromBlock) + 1n > 30n) throw new Error('query exceeds max block range 30');
    };
    const refused = await watchOnce(tuning);
    // (A new run re-reads the reorg margin, so the first deposit is reported again: that changes nothing.)
    assert.deepEqual(
      refused.observed.filter((o) => o.routeId === second.routeId),
      [{ routeId: second.routeId, balance: second.amount.toString() }],
    );
    assert.ok(getLogsCalls().length > 5, 'the refused ranges were halved and retried');
  });
});
