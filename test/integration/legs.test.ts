import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { ApplicationFailure } from '@temporalio/activity';
import { MockActivityEnvironment } from '@temporalio/testing';
import { and, eq, like } from 'drizzle-orm';
import { createWalletClient, erc20Abi, http, toHex, type Address, type Hex, type LocalAccount } from 'viem';
import { english, generateMnemonic, generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { bridgeActivities } from '../../activities/bridge.ts';
import { cctpLegs } from '../../activities/cctpLeg.ts';
import { depositWatcherActivities } from '../../activities/depositWatcher.ts';
import type { ActivityDeps, WorkflowNotifier } from '../../activities/deps.ts';
import type { LegRequest } from '../../activities/legs.ts';
import { relayLegs } from '../../activities/relayLeg.ts';
import { createRouteKeyring } from '../../src/accounts/routeAccounts.ts';
import { createChainClients } from '../../src/chain/clients.ts';
import { createTxSender } from '../../src/chain/txSender.ts';
import { connectDatabase, migrateDatabase, type DatabaseHandle } from '../../src/db/client.ts';
import { bridgeOrders, ledgerEntries, transfers } from '../../src/db/schema.ts';
import { DEVNET_CCTP_ATTESTER_KEY } from '../../devnet/cctp.ts';
import { DEVNET_ACCOUNTS, startDevnetChains, type DevnetChains } from '../../devnet/chains.ts';
import type { ChainRole } from '../../devnet/manifest.ts';
import { freeChainPorts, freePort } from '../../devnet/ports.ts';
import { startLocalPostgres, type LocalPostgres } from '../../devnet/postgres.ts';
import { createFaultRegistry } from '../../devnet/emulators/faults.ts';
import { startIrisEmulator, type IrisEmulator } from '../../devnet/emulators/iris/index.ts';
import { startRelayEmulator, type RelayEmulator } from '../../devnet/emulators/relay/index.ts';
import { createCctpBridge } from '../../src/providers/cctp/adapter.ts';
import { type AttestationPoller, createAttestationPoller } from '../../src/providers/cctp/attestationPoller.ts';
import { feeForAmount, maxFeeFor } from '../../src/providers/cctp/fees.ts';
import { createIrisClient } from '../../src/providers/cctp/iris.ts';
import type { DepositAddressBridge } from '../../src/providers/bridge.ts';
import type { BurnAndMintBridge } from '../../src/providers/cctp/types.ts';
import { parseBurnMessageBody, parseMessageHeader } from '../../src/providers/cctp/message.ts';
import { messageTransmitterV2Abi } from '../../src/providers/cctp/abi.ts';
import type { PrivacyPool } from '../../src/providers/privacyPool.ts';
import { createRelayBridge } from '../../src/providers/relay/adapter.ts';
import type { RoutePlan } from '../../src/domain/plan.ts';

/**
 * The bridge legs' paths that used to park forever or end wrongly, on real parts: anvil chains with the devnet
 * CCTP contracts, embedded Postgres, the Relay and Iris emulators and the production adapters. Activities run
 * in Temporal's mock activity context (heartbeats, cancellable sleeps), without a Temporal server.
 */

const USDC = (units: number) => BigInt(Math.round(units * 1_000_000));

let dataDir: string;
let chains: DevnetChains;
let postgres: LocalPostgres;
let database: DatabaseHandle;
let relayEmulator: RelayEmulator;
let iris: IrisEmulator;
const faults = createFaultRegistry();
let base: Omit<ActivityDeps, 'bridge'>;
let relayDeps: ActivityDeps;
let relayBridge: DepositAddressBridge;
let cctp: BurnAndMintBridge;
let attestations: AttestationPoller | undefined;
let cctpDeps: ActivityDeps;
/** Relay's status endpoint answers 503 while this is in the future (a Relay outage). */
let relayStatusDownUntil = 0;
/** Relay quotes carry a minimum output this many bps below the expected one (Relay's slippage tolerance). */
let relaySlippageBps = 0n;

const chain = (role: ChainRole) => chains.manifest.chains.find((c) => c.role === role)!;
const token = (role: ChainRole, symbol = 'USDC') => chain(role).tokens.find((t) => t.symbol === symbol)!.address;
const faucet = privateKeyToAccount(DEVNET_ACCOUNTS.faucet);
const freshAddress = () => privateKeyToAccount(generatePrivateKey()).address;
let nextIndex = 1;
const routeAccounts = () => base.keyring.routeAccounts(nextIndex++);

async function faucetPay(role: ChainRole, to: Address, amount: bigint): Promise<Hex> {
  const wallet = createWalletClient({ account: faucet, chain: base.chains.chain(chain(role).chainId), transport: http(chain(role).rpcUrl) });
  const hash = await wallet.writeContract({ address: token(role), abi: erc20Abi, functionName: 'transfer', args: [to, amount] });
  await base.chains.publicClient(chain(role).chainId).waitForTransactionReceipt({ hash, pollingInterval: 100 });
  return hash;
}

const balanceOf = (role: ChainRole, owner: Address) =>
  base.chains.publicClient(chain(role).chainId).readContract({ address: token(role), abi: erc20Abi, functionName: 'balanceOf', args: [owner] });

/** Runs an activity body in Temporal's mock activity context; collects its heartbeats. */
const quiet = () => {};
async function inActivity<T>(body: () => Promise<T>, heartbeats: unknown[] = [], workflowId?: string): Promise<T> {
  const info = workflowId ? { workflowExecution: { workflowId, runId: randomUUID() } } : undefined;
  const env = new MockActivityEnvironment(info, { logger: { log: quiet, trace: quiet, debug: quiet, info: quiet, warn: quiet, error: quiet } });
  env.on('heartbeat', (details: unknown) => heartbeats.push(details));
  return env.run(body);
}

async function rejectsWithType(promise: Promise<unknown>, type: string, message?: RegExp) {
  await assert.rejects(promise, (error: unknown) => {
    assert.ok(error instanceof ApplicationFailure, `expected ApplicationFailure ${type}, got ${String(error)}`);
    assert.equal(error.type, type, error.message);
    if (message) assert.match(error.message, message);
    return true;
  });
}

function plan(overrides: Partial<RoutePlan> & { accountIndex: number }): RoutePlan {
  const accounts = base.keyring.routeAccounts(overrides.accountIndex);
  return {
    routeId: `legs-${randomUUID()}`,
    sourceChainId: chain('source').chainId,
    hubChainId: chain('hub').chainId,
    destChainId: chain('destination').chainId,
    sourceToken: token('source'),
    hubToken: token('hub'),
    destToken: token('destination'),
    amount: USDC(10).toString(),
    quotedOutputAmount: USDC(9).toString(),
    depositAddress: accounts.deposit.address,
    hubAccount: accounts.hub.address,
    exitAccount: accounts.exit.address,
    recipient: freshAddress(),
    depositDeadline: new Date(Date.now() + 3_600_000).toISOString(),
    refundAddress: null,
    settings: { stepMaxAttempts: 3, stepTimeBudgetSeconds: 60, depositTimeoutSeconds: 60 },
    privacy: { delaySeconds: 0, minAnonymitySet: 1, maxWaitSeconds: 0, pollSeconds: 1, reviewTimeoutSeconds: 60 },
    ...overrides,
  };
}

/** The transfers row the API would have written for `p` (the steps that move money check their plan against it). */
async function recordTransfer(p: RoutePlan): Promise<void> {
  await database.db.insert(transfers).values({
    routeId: p.routeId,
    accountIndex: p.accountIndex,
    status: 'AWAITING_DEPOSIT',
    symbol: 'USDC',
    destSymbol: 'USDC',
    sourceChainId: p.sourceChainId,
    destChainId: p.destChainId,
    hubChainId: p.hubChainId,
    amount: p.amount,
    quotedOutputAmount: p.quotedOutputAmount,
    feeAmount: '0',
    bridgeFeeAmount: '0',
    privacyFeeAmount: '0',
    etaSeconds: 60,
    route: [],
    sourceToken: p.sourceToken,
    sourceDecimals: 6,
    destToken: p.destToken,
    destDecimals: 6,
    hubToken: p.hubToken,
    hubDecimals: 6,
    depositAddress: p.depositAddress,
    hubAccount: p.hubAccount,
    hubIsSmartAccount: false,
    userDestinationAddress: p.recipient,
    depositDeadline: new Date(p.depositDeadline),
  });
}

/** An inbound leg request from a fresh route's deposit account (source → hub, exact input). */
function inboundRequest(amount: bigint): LegRequest & { deposit: LocalAccount } {
  const { deposit, hub } = routeAccounts();
  return {
    deposit,
    routeId: `legs-${randomUUID()}`,
    leg: 'in',
    generation: 1,
    from: deposit,
    originChainId: chain('source').chainId,
    destinationChainId: chain('hub').chainId,
    originCurrency: token('source'),
    destinationCurrency: token('hub'),
    amount,
    tradeType: 'EXACT_INPUT',
    recipient: hub.address,
    available: amount,
    gasFunder: base.gasAccount,
  };
}

/** What awaitArrival is asked for an inbound leg's order. */
const arrivalOf = (request: LegRequest, order: Awaited<ReturnType<ReturnType<typeof cctpLegs>['start']>>) => ({
  routeId: request.routeId,
  leg: 'in' as const,
  originChainId: request.originChainId,
  destinationChainId: request.destinationChainId,
  order,
});

/** An outbound leg request from a fresh route's exit account (hub → destination, exact output), funded after the pool. */
function outboundRequest(exit: LocalAccount, fields: Pick<LegRequest, 'amount' | 'recipient' | 'available'> & Partial<LegRequest>): LegRequest {
  return {
    routeId: `legs-${randomUUID()}`,
    leg: 'out',
    generation: 1,
    from: exit,
    originChainId: chain('hub').chainId,
    destinationChainId: chain('destination').chainId,
    originCurrency: token('hub'),
    destinationCurrency: token('destination'),
    tradeType: 'EXACT_OUTPUT',
    gasFunder: base.poolRelayer,
    ...fields,
  };
}

before(async () => {
  dataDir = await mkdtemp(path.join(tmpdir(), 'legs-test-'));
  const [chainPorts, pgPort] = await Promise.all([freeChainPorts(), freePort()]);
  [chains, postgres] = await Promise.all([
    startDevnetChains({ ports: chainPorts, cctp: true }),
    startLocalPostgres({ databaseUrl: process.env.TEST_DATABASE_URL, dataDir, port: pgPort, ephemeral: true }),
  ]);
  await migrateDatabase(postgres.url);
  database = connectDatabase(postgres.url);
  relayEmulator = await startRelayEmulator({
    manifest: chains.manifest,
    port: 0,
    solverPrivateKey: DEVNET_ACCOUNTS.relaySolver,
    usdPrices: { USDC: '1', WETH: '2500' },
    pollIntervalMs: 100,
    faults,
  });
  iris = await startIrisEmulator({ manifest: chains.manifest, port: 0, attesterPrivateKey: DEVNET_CCTP_ATTESTER_KEY, faults, pendingMs: 200 });

  const clients = createChainClients(Object.fromEntries(chains.manifest.chains.map((c) => [c.chainId, c.rpcUrl])), { pollingIntervalMs: 100 });
  const sender = createTxSender(database.db, clients);
  const pool = new Proxy({} as PrivacyPool, {
    get: (_target, name) => {
      throw new Error(`the bridge legs must not use the pool (${String(name)})`);
    },
  });
  base = {
    db: database.db,
    chains: clients,
    sender,
    pool,
    keyring: createRouteKeyring(generateMnemonic(english)),
    gasAccount: privateKeyToAccount(DEVNET_ACCOUNTS.gas),
    poolRelayer: privateKeyToAccount(DEVNET_ACCOUNTS.poolRelayer),
    relaySenders: [privateKeyToAccount(DEVNET_ACCOUNTS.poolRelayer)],
    pollIntervalMs: 100,
    privacyRules: {
      epochSeconds: 3,
      maxWaitSeconds: 20,
      minPeerAgeSeconds: 0,
      meanMinSeconds: 9,
      meanMaxSeconds: 45,
      flushSeconds: 180,
      trafficWindowSeconds: 432,
    },
  };

  // The production Relay adapter against the emulator; the transport can play a Relay outage or Relay's slippage.
  const relayFetch: typeof fetch = async (input, init) => {
    const url = new URL(String(input));
    if (url.pathname.startsWith('/intents/status') && Date.now() < relayStatusDownUntil) {
      return new Response(JSON.stringify({ message: 'upstream unavailable' }), { status: 503 });
    }
    const response = await fetch(input, init);
    if (url.pathname !== '/quote/v2' || relaySlippageBps === 0n || !response.ok) return response;
    const body = (await response.json()) as { details: { currencyOut: { amount: string; minimumAmount: string } } };
    const out = body.details.currencyOut;
    out.minimumAmount = ((BigInt(out.amount) * (10_000n - relaySlippageBps)) / 10_000n).toString();
    return new Response(JSON.stringify(body), { status: 200, headers: { 'content-type': 'application/json' } });
  };
  relayBridge = createRelayBridge({ baseUrl: relayEmulator.url, fetch: relayFetch });
  relayDeps = { ...base, bridge: { mode: 'relay', relay: relayBridge } };

  const irisClient = createIrisClient({ baseUrl: iris.url });
  // A burn Iris has not attested yet is looked up again after 100 ms, growing from there (the default: 1 s), so the
  // waits for the emulator's attestations (200 ms) and through its injected outages are short.
  attestations = createAttestationPoller({ iris: irisClient, initialIntervalMs: 100 });
  cctp = createCctpBridge({
    iris: irisClient,
    attestations,
    chains: chains.manifest.cctp!.chains.map((c) => ({ ...c, name: `devnet-${c.chainId}`, displayName: `Devnet ${c.chainId}` })),
    clients,
    sender,
    finality: 'fast',
  });
  cctpDeps = { ...base, bridge: { mode: 'cctp', cctp } };
});

after(async () => {
  attestations?.close();
  await iris?.stop();
  await relayEmulator?.stop();
  await database?.close();
  await postgres?.stop();
  await chains?.stop();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

describe('bridge legs: recorded outcomes, minimums, fee buffers, order freshness, provider outages, fill checks', { timeout: 300_000 }, () => {
  test('direct leg: a retry after the payout was mined returns the recorded payment, not BridgeTooExpensive', async () => {
    const accountIndex = nextIndex++;
    const p = plan({ accountIndex, destChainId: chain('hub').chainId, destToken: token('hub') });
    await faucetPay('hub', p.exitAccount!, BigInt(p.quotedOutputAmount));
    const bridge = bridgeActivities(relayDeps);
    await recordTransfer(p);

    const first = await inActivity(() => bridge.bridgeOut({ plan: p, generation: 1 }), [], p.routeId);
    assert.equal(first.kind, 'direct');
    assert.equal(await balanceOf('hub', p.exitAccount!), 0n, 'the exit account paid everything');
    // The activity is retried (say its result was lost with the worker): the balance is gone, the payment is recorded.
    const retried = await inActivity(() => bridge.bridgeOut({ plan: p, generation: 1 }), [], p.routeId);
    assert.deepEqual(retried, first);
    assert.equal(await balanceOf('hub', p.recipient), BigInt(p.quotedOutputAmount), 'paid exactly once');
    const delivery = await inActivity(() =>
      bridge.confirmDelivery({
        routeId: p.routeId,
        leg: 'out',
        chainId: p.hubChainId,
        token: p.hubToken,
        recipient: p.recipient,
        amount: p.quotedOutputAmount,
        txHashes: [first.requestId as Hex],
      }),
    );
    assert.equal(delivery.amount, p.quotedOutputAmount);
  });

  test('bridge-in: the order is held to Relay’s minimum output, and what actually arrived is carried forward', async () => {
    relaySlippageBps = 50n;
    try {
      const request = inboundRequest(USDC(20));
      const { order } = await inActivity(() => relayLegs(relayDeps, relayBridge).prepare(request));
      const { amountOut: expected, minAmountOut: minimum } = await relayBridge.quote({
        ...request,
        user: request.from.address,
        refundTo: request.from.address,
        useDepositAddress: false,
      });
      assert.ok(minimum !== undefined && minimum < expected);
      assert.equal(order.amountOut, minimum.toString(), `the order is held to its minimum ${minimum}, not the expected ${expected}`);
      const [recorded] = await base.db
        .select()
        .from(bridgeOrders)
        .where(and(eq(bridgeOrders.routeId, request.routeId), eq(bridgeOrders.leg, 'in')));
      assert.equal(recorded?.amountOut, order.amountOut);

      // A fill inside the slippage but below the expected output (as a cross-asset fill may be).
      const arrived = expected - 1234n;
      const fill = await faucetPay('hub', request.recipient, arrived);
      const delivery = await inActivity(() =>
        bridgeActivities(relayDeps).confirmDelivery({
          routeId: request.routeId,
          leg: 'in',
          chainId: request.destinationChainId,
          token: request.destinationCurrency,
          recipient: request.recipient,
          amount: order.amountOut,
          txHashes: [fill],
        }),
      );
      assert.deepEqual(delivery, { txHash: fill, amount: arrived.toString() }, 'the later steps get what arrived');
      const [booked] = await base.db
        .select()
        .from(ledgerEntries)
        .where(and(eq(ledgerEntries.routeId, request.routeId), eq(ledgerEntries.kind, 'arrived_on_hub')));
      assert.equal(booked?.amount, arrived.toString());
    } finally {
      relaySlippageBps = 0n;
    }
  });

  test('CCTP exact output: the burn covers the quote even when Circle takes the whole maxFee; a fee inside the buffer still pays the quote', async () => {
    // Circle's fee rose between the estimate and the attestation: the estimate says 0.9 bps, Iris charges 1 bps,
    // which is inside the estimate's 20 % buffer (maxFee 1.08 bps).
    const lowEstimate: BurnAndMintBridge = {
      ...cctp,
      async estimateFee(src, dst, amount) {
        const real = await cctp.estimateFee(src, dst, amount);
        const fee = feeForAmount(amount, '0.9');
        return { ...real, fee, maxFee: maxFeeFor(fee, 'fast') };
      },
    };
    const deps: ActivityDeps = { ...base, bridge: { mode: 'cctp', cctp: lowEstimate } };
    const { exit } = routeAccounts();
    const recipient = freshAddress();
    const quote = USDC(250);
    await faucetPay('hub', exit.address, USDC(251));
    const request = outboundRequest(exit, { amount: quote, recipient, available: USDC(251) });
    const legs = cctpLegs(deps, lowEstimate);
    const { order } = await inActivity(() => legs.prepare(request));
    const burn = BigInt(order.amountIn);
    const maxFee = burn - BigInt(order.amountOut);
    assert.equal(maxFee, maxFeeFor(feeForAmount(burn, '0.9'), 'fast'), 'the recorded maxFee is the estimate’s');
    assert.ok(burn - maxFee >= quote, `burn ${burn} − maxFee ${maxFee} covers the quote ${quote}`);
    const smaller = burn - 1n;
    assert.ok(smaller - maxFeeFor(feeForAmount(smaller, '0.9'), 'fast') < quote, 'and is the smallest burn that does');

    const started = await inActivity(() => legs.start(request));
    const minted = await inActivity(() =>
      legs.awaitArrival({
        routeId: request.routeId,
        leg: 'out',
        originChainId: request.originChainId,
        destinationChainId: request.destinationChainId,
        order: started,
      }),
    );
    const delivery = await inActivity(() =>
      bridgeActivities(deps).confirmDelivery({
        routeId: request.routeId,
        leg: 'out',
        chainId: request.destinationChainId,
        token: request.destinationCurrency,
        recipient,
        amount: quote.toString(),
        txHashes: minted,
      }),
    );
    const received = await balanceOf('destination', recipient);
    assert.equal(received, burn - feeForAmount(burn, '1'), 'Circle charged 1 bps');
    assert.ok(received >= quote, `the recipient got ${received}, at least the quote ${quote}`);
    assert.equal(delivery.amount, received.toString());
  });

  test('Relay: an order never funded is replaced by a fresh one; a funded one is reused', async () => {
    const request = inboundRequest(USDC(15));
    await faucetPay('source', request.deposit.address, request.amount);
    const legs = relayLegs(relayDeps, relayBridge);
    // Recorded, then the worker stopped before funding it (the quote expires at Relay meanwhile).
    const stale = await inActivity(() => legs.prepare(request));
    const funded = await inActivity(() => legs.start(request));
    assert.notEqual(funded.requestId, stale.order.requestId, 'the unfunded order was not funded');
    const setAside = await base.db
      .select()
      .from(bridgeOrders)
      .where(and(eq(bridgeOrders.routeId, request.routeId), like(bridgeOrders.leg, 'in~%')));
    assert.deepEqual(
      setAside.map((o) => o.requestId),
      [stale.order.requestId],
      'the stale order is kept, set aside',
    );

    // Funding signed: every retry returns the funded order.
    assert.deepEqual(await inActivity(() => legs.start(request)), funded);
    assert.deepEqual((await inActivity(() => legs.prepare(request))).order, funded);
    const fills = await inActivity(() =>
      legs.awaitArrival({
        routeId: request.routeId,
        leg: 'in',
        originChainId: request.originChainId,
        destinationChainId: request.destinationChainId,
        order: funded,
      }),
    );
    assert.equal(fills.length, 1);
    assert.equal(await balanceOf('hub', request.recipient), BigInt(funded.amountOut));
  });

  test('Relay: the first bridge-out order, funded by the pool withdrawal, is kept once that withdrawal is signed', async () => {
    const { exit } = routeAccounts();
    const request = outboundRequest(exit, {
      amount: USDC(8),
      recipient: freshAddress(),
      available: USDC(9),
      fundedBy: 'unshield',
    });
    const legs = relayLegs(relayDeps, relayBridge);
    const unsigned = await inActivity(() => legs.prepare(request));
    const fresh = await inActivity(() => legs.prepare(request));
    assert.notEqual(fresh.order.requestId, unsigned.order.requestId, 'no withdrawal signed yet: a fresh order');
    // The withdrawal's record (any signed transaction under the route's 'unshield' step stands for it here).
    await base.sender.send({
      routeId: request.routeId,
      step: 'unshield',
      chainId: request.originChainId,
      account: base.poolRelayer,
      to: base.poolRelayer.address,
      value: 0n,
    });
    assert.deepEqual(await inActivity(() => legs.prepare(request)), fresh, 'the order the withdrawal pays is kept');
  });

  test('bridge-in after a refund is sized from what the deposit account holds', async () => {
    const accountIndex = nextIndex++;
    const p = plan({ accountIndex });
    // A refund that came back short of the deposit (Relay keeps its gas costs on a refund).
    const refunded = BigInt(p.amount) - USDC(0.25);
    await faucetPay('source', p.depositAddress, refunded);
    await recordTransfer(p);
    const bridgeIn = (plan: RoutePlan, workflowId = plan.routeId) =>
      inActivity(() => bridgeActivities(relayDeps).bridgeIn({ plan, generation: 2 }), [], workflowId);
    // A plan that is not the recorded transfer, or runs in another workflow, moves nothing (started by hand in Temporal).
    await rejectsWithType(bridgeIn({ ...p, recipient: freshAddress() }), 'PlanNotRecorded', /not the transfer recorded for it/);
    await rejectsWithType(bridgeIn({ ...p, routeId: `legs-${randomUUID()}` }), 'PlanNotRecorded', /no such transfer/);
    await rejectsWithType(bridgeIn(p, `rt_forged`), 'PlanNotRecorded', /runs in workflow rt_forged/);
    assert.equal(await balanceOf('source', p.depositAddress), refunded, 'nothing moved');
    const order = await bridgeIn(p);
    assert.equal(order.amountIn, refunded.toString());
    assert.equal(await balanceOf('source', p.depositAddress), 0n);
    // The send from the deposit account is the transfer's bridge_in_tx_hash (the ledger's bridged_in entry).
    const [sent] = await base.db
      .select()
      .from(ledgerEntries)
      .where(and(eq(ledgerEntries.routeId, p.routeId), like(ledgerEntries.entryKey, 'bridged_in%')));
    const [row] = await base.db.select({ bridgeInTxHash: transfers.bridgeInTxHash }).from(transfers).where(eq(transfers.routeId, p.routeId));
    assert.match(sent?.txHash ?? '', /^0x[0-9a-f]{64}$/);
    assert.equal(row?.bridgeInTxHash, sent?.txHash);
  });

  test("the deposit watcher reports a deposit and records its transaction as the transfer's deposit_tx_hash", async () => {
    const p = plan({ accountIndex: nextIndex++ });
    await recordTransfer(p);
    const hash = await faucetPay('source', p.depositAddress, BigInt(p.amount));
    const observed: { routeId: string; balance: string }[] = [];
    const notifier: WorkflowNotifier = {
      depositObserved: async (routeId, { balance }) => {
        observed.push({ routeId, balance });
      },
      privacyObserved: async () => {},
    };
    await inActivity(() => depositWatcherActivities({ ...relayDeps, notifier }).watchDeposits({ chainId: p.sourceChainId, runForSeconds: 0 }));
    assert.deepEqual(
      observed.filter((o) => o.routeId === p.routeId),
      [{ routeId: p.routeId, balance: p.amount }],
    );
    const [row] = await base.db
      .select({ depositTxHash: transfers.depositTxHash, bridgeInTxHash: transfers.bridgeInTxHash })
      .from(transfers)
      .where(eq(transfers.routeId, p.routeId));
    assert.deepEqual(row, { depositTxHash: hash, bridgeInTxHash: null });
  });

  test('a Relay outage while waiting for a fill is waited out inside the activity, heartbeating', async () => {
    const request = inboundRequest(USDC(12));
    await faucetPay('source', request.deposit.address, request.amount);
    const legs = relayLegs(relayDeps, relayBridge);
    const order = await inActivity(() => legs.start(request));
    // A 1 s outage: four status lookups fail (retried after 0.1, 0.2, 0.4, 0.8 s), the fifth finds the fill.
    relayStatusDownUntil = Date.now() + 1_000;
    const heartbeats: unknown[] = [];
    const fills = await inActivity(
      () =>
        legs.awaitArrival({ routeId: request.routeId, leg: 'in', originChainId: request.originChainId, destinationChainId: request.destinationChainId, order }),
      heartbeats,
    );
    assert.equal(fills.length, 1);
    assert.ok(Date.now() >= relayStatusDownUntil, 'the fill was seen after the outage');
    assert.ok(
      heartbeats.some((h) => (h as { transientFailures?: number } | undefined)?.transientFailures),
      `heartbeats name the outage: ${JSON.stringify(heartbeats)}`,
    );
  });

  test('an Iris outage while waiting for an attestation is waited out inside the activity', async () => {
    const request = inboundRequest(USDC(30));
    await faucetPay('source', request.deposit.address, request.amount);
    const legs = cctpLegs(cctpDeps, cctp);
    const burn = await inActivity(() => legs.start(request));
    // Iris answers 500 to the next attestation lookups of burns into the hub.
    faults.set({ operation: 'bridge-in', mode: 'fail', count: 3 });
    try {
      const heartbeats: unknown[] = [];
      const minted = await inActivity(() => legs.awaitArrival(arrivalOf(request, burn)), heartbeats);
      assert.equal(minted.length, 1);
      assert.equal(faults.list().length, 0, 'every injected failure was met');
      assert.ok(
        heartbeats.some((h) => (h as { transientFailures?: number } | undefined)?.transientFailures === 3),
        JSON.stringify(heartbeats),
      );
      assert.ok((await balanceOf('hub', request.recipient)) >= BigInt(burn.amountOut));
    } finally {
      faults.clear();
    }
  });

  test('CCTP: a message past its expirationBlock on the destination is re-attested at Iris and minted once', async () => {
    // An Iris whose messages stay receivable for 30 destination blocks: a route parked longer finds its message expired.
    const shortIris = await startIrisEmulator({
      manifest: chains.manifest,
      port: 0,
      attesterPrivateKey: DEVNET_CCTP_ATTESTER_KEY,
      pendingMs: 100,
      expirationBlocks: 30n,
    });
    const shortClient = createIrisClient({ baseUrl: shortIris.url });
    const poller = createAttestationPoller({ iris: shortClient, initialIntervalMs: 100 });
    try {
      const bridge = createCctpBridge({
        iris: shortClient,
        attestations: poller,
        chains: chains.manifest.cctp!.chains.map((c) => ({ ...c, name: `devnet-${c.chainId}`, displayName: `Devnet ${c.chainId}` })),
        clients: base.chains,
        sender: base.sender,
        finality: 'fast',
      });
      const legs = cctpLegs({ ...base, bridge: { mode: 'cctp', cctp: bridge } }, bridge);
      const request = inboundRequest(USDC(12));
      await faucetPay('source', request.deposit.address, request.amount);
      const burn = await inActivity(() => legs.start(request));
      const first = await bridge.awaitAttestation(request.originChainId, burn.requestId as Hex);
      const expirationOf = (message: Hex) => parseBurnMessageBody(parseMessageHeader(message).body).expirationBlock;
      const hub = base.chains.publicClient(request.destinationChainId);
      // Parked meanwhile: the hub mines past the message's expirationBlock, and the old attestation cannot mint.
      await hub.request({ method: 'anvil_mine' as never, params: [toHex(40)] as never });
      assert.ok((await hub.getBlockNumber({ cacheTime: 0 })) >= expirationOf(first.message));
      const transmitter = chains.manifest.cctp!.chains.find((c) => c.chainId === request.destinationChainId)!.messageTransmitter;
      await assert.rejects(
        hub.simulateContract({
          address: transmitter,
          abi: messageTransmitterV2Abi,
          functionName: 'receiveMessage',
          args: [first.message, first.attestation],
          account: base.gasAccount,
        }),
        /Message expired and must be re-signed/,
      );

      const arrive = () => inActivity(() => legs.awaitArrival(arrivalOf(request, burn)));
      const minted = await arrive();
      assert.equal(minted.length, 1);
      const renewed = await bridge.attestation(request.originChainId, burn.requestId as Hex);
      assert.ok(renewed.message && expirationOf(renewed.message) > expirationOf(first.message), 'Iris signed it again, with a later expirationBlock');
      const received = await balanceOf('hub', request.recipient);
      assert.ok(received >= BigInt(burn.amountOut), `minted ${received}`);
      // A retry of the step finds its own mint: nothing more is minted.
      assert.deepEqual(await arrive(), minted);
      assert.equal(await balanceOf('hub', request.recipient), received);
    } finally {
      poller.close();
      await shortIris.stop();
    }
  });

  test('a fill counts once: another route cannot confirm it, nor a transfer mined before the order was recorded', async () => {
    const bridge = bridgeActivities(relayDeps);
    const recipient = freshAddress();
    const amount = USDC(5);
    const check = (routeId: string, txHashes: Hex[]) =>
      inActivity(() =>
        bridge.confirmDelivery({ routeId, leg: 'out', chainId: chain('hub').chainId, token: token('hub'), recipient, amount: amount.toString(), txHashes }),
      );

    const payment = await faucetPay('hub', recipient, amount);
    const first = `legs-${randomUUID()}`;
    await base.db.insert(bridgeOrders).values({
      routeId: first,
      leg: 'out',
      requestId: '0x01',
      depositAddress: freshAddress(),
      amountIn: '1',
      amountOut: '1',
      createdAt: new Date(Date.now() - 60_000),
    });
    assert.deepEqual(await check(first, [payment]), { txHash: payment, amount: amount.toString() });
    assert.deepEqual(await check(first, [payment]), { txHash: payment, amount: amount.toString() }, 'a retry of the same route confirms again');
    // A second route to the same recipient for the same amount, whose provider reports the first route's fill.
    await rejectsWithType(check(`legs-${randomUUID()}`, [payment]), 'DeliveryMismatch', /already booked by another route/);

    // An order recorded after the payment was mined (the provider reports an older transfer to the recipient).
    const later = `legs-${randomUUID()}`;
    const older = await faucetPay('hub', recipient, amount);
    await base.db.insert(bridgeOrders).values({
      routeId: later,
      leg: 'out',
      requestId: '0x02',
      depositAddress: freshAddress(),
      amountIn: '1',
      amountOut: '1',
      createdAt: new Date(Date.now() + 10 * 60_000),
    });
    await rejectsWithType(check(later, [older]), 'DeliveryMismatch', /before the order was recorded/);
    const booked = await base.db.select().from(ledgerEntries).where(eq(ledgerEntries.txHash, older));
    assert.deepEqual(booked, [], 'nothing was booked');
  });
});
