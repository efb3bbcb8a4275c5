import assert from 'node:assert/strict';
import { after, afterEach, before, describe, test } from 'node:test';
import { and, eq, isNull } from 'drizzle-orm';
import { type Address, createWalletClient, erc20Abi, getAbiItem, getAddress, type Hex, http, parseEventLogs, toHex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { changeNotes, ledgerEntries, poolNotes, transfers, txIntents } from '../../src/db/schema.ts';
import { gridAmountAtMost } from '../../src/income/sweepPlan.ts';
import { entrypointAbi as entrypointArtifactAbi } from '../../devnet/artifacts/Entrypoint.ts';
import { privacyPoolAbi as privacyPoolArtifactAbi } from '../../devnet/artifacts/PrivacyPool.ts';
import { entrypointAbi, poolAbi } from '../../src/providers/privacy-pools/abi.ts';
import { PoolNoteSpentError } from '../../src/providers/privacy-pools/adapter.ts';
import { startTestStack, waitFor, type TestStack, type TransferView } from '../support/testStack.ts';
import { DEFAULT_DEVNET_CHAIN_IDS } from '../../devnet/chains.ts';

/**
 * The privacy pool on the real local stack: Privacy Pools contracts verifying real Groth16 proofs of the
 * production circuits, the ASP emulator, and the production adapter.
 */
let stack: TestStack;
const TREASURY = privateKeyToAccount(generatePrivateKey()).address;

before(async () => {
  stack = await startTestStack({
    env: {
      STEP_MAX_ATTEMPTS: '2',
      STEP_TIME_BUDGET_SECONDS: '60',
      PRIVACY_EXIT_EPOCH_SECONDS: '2',
      // Long enough that a waiting route's peers reach the pool under CI's load (30 s, 40 s, then 60 s, once each left
      // one alone: two bridge-ins behind the whole suite's other stacks, the browser and native-ETH stacks among them).
      PRIVACY_MAX_WAIT_SECONDS: '90',
      // At least the longest wait and two exit epochs (the configuration checks it).
      PUBLIC_STATUS_HOLD_SECONDS: '100',
      // A short exit lottery: these tests are about who counts, not about the order routes leave in.
      PRIVACY_EXIT_MEAN_MIN_SECONDS: '2',
      PRIVACY_EXIT_MEAN_MAX_SECONDS: '6',
      PRIVACY_EXIT_FLUSH_SECONDS: '30',
      // Each create below comes from a client of its own (X-Forwarded-For), as different users would.
      TRUST_PROXY_HOPS: '1',
      // Withdrawals wait while the hub asks more than 50 gwei per gas (anvil asks about 1).
      FEE_CEILING_GWEI: JSON.stringify({ [DEFAULT_DEVNET_CHAIN_IDS.hub]: '50' }),
      // Income sweeps at once, of any amount, in batches of two routes (production: days later, grid of 0.01 USDC, 8 routes).
      INCOME_TREASURY_ADDRESS: TREASURY,
      INCOME_SWEEP_MIN_AGE_HOURS: '0',
      INCOME_SWEEP_MIN_BATCH: '2',
      INCOME_SWEEP_GRID_UNIT: '1',
      INCOME_SWEEP_MIN_AMOUNT: '1',
    },
  });
});
after(async () => stack?.close());
afterEach(() => stack.relay.faults.clear());

type Transfer = TransferView;

const chainId = (role: string) => stack.manifest.chains.find((c) => c.role === role)!.chainId;
const freshAddress = () => privateKeyToAccount(generatePrivateKey()).address;
const read = async (routeId: string) => (await stack.api<Transfer>('GET', `/api/private-route/${routeId}`)).body.data!;
const until = (routeId: string, what: string, ok: (t: Transfer) => boolean, timeoutMs = 90_000) =>
  waitFor(
    `${routeId}: ${what}`,
    async () => {
      const t = await read(routeId);
      return ok(t) ? t : undefined;
    },
    timeoutMs,
  );
const finished = (t: Transfer) => t.status === 'COMPLETED' || t.status === 'FAILED';

let clients = 0;
/** A create from a client of its own: the anonymity set counts one route per client (src/privacy/anonymitySet.ts). */
async function create(amount: string, extra: Record<string, unknown> = {}): Promise<Transfer & { recipient: Address }> {
  const recipient = freshAddress();
  clients += 1;
  const client = { 'x-forwarded-for': `10.0.${Math.floor(clients / 250)}.${(clients % 250) + 1}` };
  const { status, body } = await stack.api<Transfer>(
    'POST',
    '/api/private-route',
    {
      sourceChainId: chainId('source'),
      destChainId: chainId('destination'),
      amount,
      userDestinationAddress: recipient,
      ...extra,
    },
    client,
  );
  assert.equal(status, 200, JSON.stringify(body));
  return { ...body.data!, recipient };
}

async function fundAndWait(t: Transfer, what: string, ok: (t: Transfer) => boolean) {
  await stack.fund(t.depositAddress, 'USDC', BigInt(t.amount));
  return until(t.routeId, what, ok);
}

const withdrawalsOf = async (txHash: Hex) =>
  parseEventLogs({ abi: entrypointAbi, eventName: 'WithdrawalRelayed', logs: (await stack.chainClient('hub').getTransactionReceipt({ hash: txHash })).logs });

/** The source chain as a user's wallet sees it: a new account the faucet gave `amount` of USDC (and gas). */
async function sourceWallet(amount: bigint, key: Hex = generatePrivateKey()) {
  const source = stack.manifest.chains.find((c) => c.role === 'source')!;
  const transport = http(source.rpcUrl);
  const account = privateKeyToAccount(key);
  await stack.chainClient('source').request({ method: 'anvil_setBalance' as never, params: [account.address, toHex(10n ** 17n)] as never });
  const faucet = createWalletClient({ account: privateKeyToAccount(stack.manifest.faucetPrivateKey), transport });
  const usdc = stack.token('source', 'USDC');
  if (amount > 0n) {
    const hash = await faucet.writeContract({ chain: null, address: usdc, abi: erc20Abi, functionName: 'transfer', args: [account.address, amount] });
    await stack.chainClient('source').waitForTransactionReceipt({ hash });
  }
  const wallet = createWalletClient({ account, transport });
  /** The user's USDC transfer to `to` (explicit gas and nonce let it be sent before the block is mined). */
  const send = (to: Address, value: bigint, tx: { gas?: bigint; nonce?: number } = {}) =>
    wallet.writeContract({ chain: null, address: usdc, abi: erc20Abi, functionName: 'transfer', args: [to, value], ...tx });
  return { account, wallet, usdc, send };
}

/** Mines what `send` sends in one block of the source chain (automine paused meanwhile); the receipts, in order. */
async function inOneBlock(send: () => Promise<Hex[]>) {
  const client = stack.chainClient('source');
  await client.request({ method: 'evm_setAutomine' as never, params: [false] as never });
  let hashes: Hex[];
  try {
    hashes = await send();
    await client.request({ method: 'evm_mine' as never, params: [] as never });
  } finally {
    await client.request({ method: 'evm_setAutomine' as never, params: [true] as never });
  }
  return Promise.all(hashes.map((hash) => client.waitForTransactionReceipt({ hash })));
}

describe('Privacy Pools on the local stack', { timeout: 600_000 }, () => {
  test('the adapter and the local contracts speak the protocol: the SDK’s bundled ABIs, but for the proxy machinery', async () => {
    const { IEntrypointABI } = await import('../../node_modules/@0xbow/privacy-pools-core-sdk/src/abi/IEntrypoint.ts');
    const { IPrivacyPoolABI } = await import('../../node_modules/@0xbow/privacy-pools-core-sdk/src/abi/IPrivacyPool.ts');
    type Item = { type: string; name?: string; inputs?: readonly Param[] };
    type Param = { type: string; components?: readonly Param[] };
    const type = (p: Param): string => (p.type.startsWith('tuple') ? `(${p.components!.map(type).join(',')})${p.type.slice(5)}` : p.type);
    const signature = (item: Item) => `${item.type} ${item.name}(${(item.inputs ?? []).map(type).join(',')})`;
    const signatures = (abi: readonly unknown[]) => new Set((abi as Item[]).filter((i) => i.type !== 'constructor').map(signature));
    const missing = (theirs: Set<string>, ours: Set<string>) => [...theirs].filter((s) => !ours.has(s)).sort();

    const sdkEntrypoint = signatures(IEntrypointABI);
    const sdkPool = signatures(IPrivacyPoolABI);
    // The adapter uses only what the protocol has.
    assert.deepEqual(missing(signatures(entrypointAbi), sdkEntrypoint), []);
    assert.deepEqual(missing(signatures(poolAbi), sdkPool), []);
    // The local contracts have all of it but the UUPS proxy machinery (deployed without a proxy), native
    // assets (ERC-20 pools only) and errors our code paths never raise.
    assert.deepEqual(missing(sdkEntrypoint, signatures(entrypointArtifactAbi)), [
      'error AddressEmptyCode(address)',
      'error ERC1967InvalidImplementation(address)',
      'error ERC1967NonPayable()',
      'error FailedCall()',
      'error InvalidInitialization()',
      'error NativeAssetTransferFailed()',
      'error NotInitializing()',
      'error UUPSUnauthorizedCallContext()',
      'error UUPSUnsupportedProxiableUUID(bytes32)',
      'event Initialized(uint64)',
      'event RoleAdminChanged(bytes32,bytes32,bytes32)',
      'event Upgraded(address)',
      'function UPGRADE_INTERFACE_VERSION()',
      'function initialize(address,address)',
      'function proxiableUUID()',
      'function upgradeToAndCall(address,bytes)',
      'receive undefined()',
    ]);
    assert.deepEqual(missing(sdkPool, signatures(privacyPoolArtifactAbi)), ['error NotYetRagequitteable()', 'error ScopeMismatch()']);
  });

  test("a transfer leaves the pool unlinkably: relayed by the relayer's sending accounts, straight to the bridge order, with its privacy report", async () => {
    const t = await create('40');
    const done = await fundAndWait(t, 'completed', finished);
    assert.equal(done.status, 'COMPLETED', done.error ?? '');
    assert.equal(await stack.balanceOf('destination', 'USDC', t.recipient), BigInt(t.quotedOutputAmount));
    assert.ok(done.privacy && done.privacy.anonymitySet >= 1 && done.privacy.waitedSeconds >= 1, JSON.stringify(done.privacy));

    const ledger = await stack.service.db.select().from(ledgerEntries).where(eq(ledgerEntries.routeId, t.routeId));
    const entry = (kind: string) => ledger.find((e) => e.kind === kind)!;
    const [deposit] = parseEventLogs({
      abi: poolAbi,
      eventName: 'Deposited',
      logs: (await stack.chainClient('hub').getTransactionReceipt({ hash: entry('shielded').txHash as Hex })).logs,
    });
    const withdrawalTx = await stack.chainClient('hub').getTransaction({ hash: entry('unshielded').txHash as Hex });
    const [withdrawal] = await withdrawalsOf(withdrawalTx.hash);
    assert.ok(deposit && withdrawal);
    const relaySenders = stack.service.activityDeps.relaySenders.map((account) => account.address.toLowerCase());
    assert.equal(deposit.args._depositor, t.hubAccount, 'the hub account deposits');
    assert.ok(
      relaySenders.includes(withdrawalTx.from.toLowerCase()),
      "one of the relayer's sending accounts submits the withdrawal, not an account of the route",
    );
    assert.notEqual(withdrawal.args._recipient, t.hubAccount);
    const [order] = await stack.service.db
      .select()
      .from(ledgerEntries)
      .where(eq(ledgerEntries.routeId, t.routeId))
      .then((rows) => rows.filter((e) => e.kind === 'bridged_out'));
    assert.equal(order?.txHash, withdrawalTx.hash, 'the withdrawal itself funds the bridge-out order: no exit account in deposit-address mode');
    const deposited = BigInt(deposit.args._commitment);
    const withdrawnLogs = parseEventLogs({ abi: poolAbi, logs: (await stack.chainClient('hub').getTransactionReceipt({ hash: withdrawalTx.hash })).logs });
    assert.ok(
      withdrawnLogs.every((log) => !('_commitment' in log.args) || (log.args as { _commitment: bigint })._commitment !== deposited),
      'the withdrawal carries no identifier of the deposit',
    );
    // The deposit's sender, as the chain shows it, is recorded and kept in the class as a pseudonym (one sender, one client).
    const [row] = await stack.service.db
      .select({ sender: transfers.depositSender, tx: transfers.depositTxHash })
      .from(transfers)
      .where(eq(transfers.routeId, t.routeId));
    const sent = await stack.chainClient('source').getTransaction({ hash: row!.tx as Hex });
    assert.equal(row!.sender, getAddress(sent.from), 'the sender of the deposit transaction');
    const [note] = await stack.service.db.select({ senderTag: poolNotes.senderTag }).from(poolNotes).where(eq(poolNotes.routeId, t.routeId));
    assert.match(note!.senderTag ?? '', /^[0-9a-f]{32}$/, 'the note keeps the sender as a pseudonym of its class');
  });

  test('a withdrawal whose broadcast failed after it was signed and recorded is settled, never sent twice; the nullifier refuses a second one', async () => {
    const t = await create('35');
    // The hub node rejects the first relay transaction: as if the worker died between record and broadcast.
    assert.equal((await stack.routectl('devnet', 'fault', 'set', 'unshield', '--count', '1')).code, 0);
    const done = await fundAndWait(t, 'completed', finished);
    assert.equal(done.status, 'COMPLETED', done.error ?? '');
    assert.equal(await stack.balanceOf('destination', 'USDC', t.recipient), BigInt(t.quotedOutputAmount));

    const intents = await stack.service.db.select().from(txIntents).where(eq(txIntents.routeId, t.routeId));
    const withdrawals = intents.filter((i) => i.step.startsWith('unshield'));
    assert.deepEqual(
      withdrawals.map((i) => i.step),
      ['unshield'],
      'one signed withdrawal, re-broadcast as recorded',
    );
    assert.equal((await withdrawalsOf(withdrawals[0]!.txHash as Hex)).length, 1);

    // Another attempt at the same note, with no record of this one: the adapter sees the spent nullifier...
    const [note] = await stack.service.db.select().from(poolNotes).where(eq(poolNotes.routeId, t.routeId));
    const [{ accountIndex }] = (await stack.service.db
      .select({ accountIndex: transfers.accountIndex })
      .from(transfers)
      .where(eq(transfers.routeId, t.routeId))) as [{ accountIndex: number }];
    const ref = {
      asset: note!.asset as Address,
      label: note!.label,
      commitment: note!.commitment,
      value: BigInt(note!.value),
      txHash: note!.txHash as Hex,
      blockNumber: BigInt(note!.blockNumber),
      timestamp: 0,
    };
    await assert.rejects(
      stack.service.activityDeps.pool.withdraw({
        routeId: 'rt_replay_probe',
        note: ref,
        noteIndex: accountIndex,
        destination: async () => ({ to: freshAddress(), amount: 1_000_000n }),
      }),
      PoolNoteSpentError,
    );
    assert.equal(await stack.service.activityDeps.pool.unspent(ref, accountIndex), 0n);
    // ...and the pool refuses the recorded proof a second time.
    const recorded = await stack.chainClient('hub').getTransaction({ hash: withdrawals[0]!.txHash as Hex });
    await assert.rejects(
      stack.chainClient('hub').call({ to: recorded.to!, data: recorded.input, account: freshAddress() }),
      /NullifierAlreadySpent|0x0d5bc2f0|revert/i,
    );
  });

  test('an ASP rejection parks the transfer SHIELDED; `fail` ragequits the note back to the hub account and lists it', async () => {
    const t = await create('25');
    assert.equal((await stack.routectl('devnet', 'fault', 'set', 'asp-review', '--count', '1')).code, 0);
    const parked = await fundAndWait(t, 'parked', (x) => x.needsAttention || finished(x));
    assert.equal(parked.status, 'SHIELDED');
    const shown = await stack.routectl('show', t.routeId);
    assert.match(shown.stdout, /parked at privacy-wait/);
    assert.match(shown.stdout, /ASP rejected the deposit/);

    const [note] = await stack.service.db.select().from(poolNotes).where(eq(poolNotes.routeId, t.routeId));
    assert.equal(await stack.balanceOf('hub', 'USDC', t.hubAccount), 0n, 'the funds are in the pool');
    const failed = await stack.routectl('fail', t.routeId, '--reason', 'deposit rejected by the ASP');
    assert.equal(failed.code, 0, failed.stderr);
    const done = await until(t.routeId, 'failed', finished);
    assert.equal(done.status, 'FAILED');
    assert.match(done.error!, /ragequit/);
    assert.equal(await stack.balanceOf('hub', 'USDC', t.hubAccount), BigInt(note!.value), 'the whole note is back at the hub account');
    assert.match(failed.stdout, new RegExp(`holds ${note!.value} of .* at hub ${t.hubAccount}`));
    const [ragequit] = await stack.service.db
      .select()
      .from(ledgerEntries)
      .where(eq(ledgerEntries.routeId, t.routeId))
      .then((rows) => rows.filter((e) => e.kind === 'ragequit'));
    const events = parseEventLogs({
      abi: [getAbiItem({ abi: poolAbi, name: 'Ragequit' })],
      logs: (await stack.chainClient('hub').getTransactionReceipt({ hash: ragequit!.txHash as Hex })).logs,
    });
    assert.equal(events[0]?.args._ragequitter, t.hubAccount);
    assert.equal(events[0]?.args._label, BigInt(note!.label));
  });

  test('a route waits in the pool for its minimum anonymity set, and leaves after the longest wait without it', async () => {
    assert.equal(
      (
        await stack.api('POST', '/api/private-route', {
          sourceChainId: chainId('source'),
          destChainId: chainId('destination'),
          amount: '10',
          userDestinationAddress: freshAddress(),
          minAnonymitySet: 1000,
        })
      ).status,
      400,
    );

    // Nobody else of its class will come (the last part below): it waits its longest wait meanwhile.
    const lonely = await create('77.7', { minAnonymitySet: 5 });
    await stack.fund(lonely.depositAddress, 'USDC', BigInt(lonely.amount));

    const first = await create('55', { minAnonymitySet: 2 });
    assert.equal(first.minAnonymitySet, 2);
    // Its peers are created now (unfunded): their quotes do not eat into its longest wait (90 s here). They wait for a
    // set of 2 too: a peer that left alone, before the other was approved, could only have spent its own note (settled,
    // honestly), and under CI's load two approvals are seconds apart.
    const peers = [await create('55', { minAnonymitySet: 2 }), await create('55', { minAnonymitySet: 2 })];
    await fundAndWait(first, 'shielded', (x) => x.status === 'SHIELDED');
    // Alone in its class, it stays SHIELDED past the exit lottery's mean (2–6 s here)...
    await new Promise((r) => setTimeout(r, 3_000));
    assert.equal((await read(first.routeId)).status, 'SHIELDED');
    // ...until two deposits of its class from two other clients are in the pool (one would not do: its client may
    // be the observer, who knows its own route).
    for (const peer of peers) await stack.fund(peer.depositAddress, 'USDC', BigInt(peer.amount));
    const [a, ...others] = await Promise.all([first, ...peers].map((t) => until(t.routeId, 'completed', finished, 150_000)));
    for (const t of [a!, ...others]) assert.equal(t.status, 'COMPLETED', t.error ?? '');
    assert.ok(a!.privacy!.anonymitySet >= 2 && !a!.privacy!.leftAtMaxWait, `first left with ${JSON.stringify(a!.privacy)}`);

    // Nobody else of its class within the longest wait (90 s here): it leaves with what it has, and says so.
    const done = await until(lonely.routeId, 'completed', finished, 180_000);
    assert.equal(done.status, 'COMPLETED', done.error ?? '');
    assert.deepEqual({ set: done.privacy!.anonymitySet, leftAtMaxWait: done.privacy!.leftAtMaxWait }, { set: 1, leftAtMaxWait: true });
    assert.ok(done.privacy!.waitedSeconds >= 60, `left after ${done.privacy!.waitedSeconds} s`);
  });

  /** The pool-side amounts of a route: what its deposit put in (after the vetting fee) and what its withdrawal took out. */
  async function poolAmounts(routeId: string) {
    const ledger = await stack.service.db.select().from(ledgerEntries).where(eq(ledgerEntries.routeId, routeId));
    const tx = (kind: string) => ledger.find((e) => e.kind === kind)!.txHash as Hex;
    const [withdrawal] = await withdrawalsOf(tx('unshielded'));
    const [deposit] = parseEventLogs({
      abi: poolAbi,
      eventName: 'Deposited',
      logs: (await stack.chainClient('hub').getTransactionReceipt({ hash: tx('shielded') })).logs,
    });
    const sender = (await stack.chainClient('hub').getTransaction({ hash: tx('unshielded') })).from.toLowerCase();
    return { deposited: deposit!.args._value, withdrawn: withdrawal!.args._amount, sender };
  }

  test('routes of different inputs in one amount class pay identical amounts, withdraw identical amounts and report the same set', async () => {
    // Inputs a few cents apart: find three whose quotes land in one class.
    const byClass = new Map<string, string[]>();
    for (let cents = 6350; cents <= 6450; cents += 5) {
      const amount = (cents / 100).toFixed(2);
      const { body } = await stack.api<Transfer>('POST', '/api/private-route/quote', {
        sourceChainId: chainId('source'),
        destChainId: chainId('destination'),
        amount,
      });
      byClass.set(body.data!.quotedOutputAmount, [...(byClass.get(body.data!.quotedOutputAmount) ?? []), amount]);
    }
    const [, inputs] = [...byClass].find(([, amounts]) => amounts.length >= 3)!;
    const routes = await Promise.all(inputs.slice(0, 3).map((amount) => create(amount, { minAnonymitySet: 2 })));
    assert.equal(new Set(routes.map((t) => t.amount)).size, 3, 'three different inputs');
    assert.equal(new Set(routes.map((t) => t.quotedOutputAmount)).size, 1, 'one payout');
    for (const t of routes) await stack.fund(t.depositAddress, 'USDC', BigInt(t.amount));
    const done = await Promise.all(routes.map((t) => until(t.routeId, 'completed', finished)));
    for (const [i, t] of done.entries()) {
      assert.equal(t.status, 'COMPLETED', t.error ?? '');
      assert.equal(await stack.balanceOf('destination', 'USDC', routes[i]!.recipient), BigInt(t.quotedOutputAmount));
    }
    const amounts = await Promise.all(routes.map((t) => poolAmounts(t.routeId)));
    // The relayer's sending accounts take turns: three withdrawals in a row do not all leave from one account.
    assert.ok(new Set(amounts.map((a) => a.sender)).size >= 2, `withdrawals sent by ${amounts.map((a) => a.sender).join(', ')}`);
    assert.equal(new Set(amounts.map((a) => a.deposited)).size, 3, 'the deposits show the different inputs');
    assert.equal(new Set(amounts.map((a) => a.withdrawn)).size, 1, 'the withdrawals are identical');
    assert.deepEqual(
      done.map((t) => t.privacy),
      done.map((t) => ({ anonymitySet: 2, waitedSeconds: t.privacy!.waitedSeconds, leftAtMaxWait: false })),
      'each of the three: any one of the others may be the observer, which leaves two',
    );
  });

  test('a deposit the ASP rejected is not counted: three routes waiting for a set of 3 leave after the longest wait with 2', async () => {
    const rejected = await create('75');
    assert.equal((await stack.routectl('devnet', 'fault', 'set', 'asp-review', '--count', '1')).code, 0);
    await fundAndWait(rejected, 'parked', (x) => x.needsAttention);
    const routes = await Promise.all([1, 2, 3].map(() => create('75', { minAnonymitySet: 3 })));
    for (const t of routes) await stack.fund(t.depositAddress, 'USDC', BigInt(t.amount));
    const done = await Promise.all(routes.map((t) => until(t.routeId, 'completed', finished, 150_000)));
    for (const t of done) {
      assert.equal(t.status, 'COMPLETED', t.error ?? '');
      assert.deepEqual({ set: t.privacy!.anonymitySet, leftAtMaxWait: t.privacy!.leftAtMaxWait }, { set: 2, leftAtMaxWait: true }, JSON.stringify(t.privacy));
      assert.ok(t.privacy!.waitedSeconds >= 90);
    }
    assert.equal((await stack.routectl('fail', rejected.routeId, '--reason', 'rejected by the ASP')).code, 0);
    assert.equal((await until(rejected.routeId, 'failed', finished)).status, 'FAILED');
  });

  test('a counted peer that ragequits later lowers the sets that counted it', async () => {
    // A peer stuck at its withdrawal (the hub node refuses it) stays in the pool, approved and counted...
    const stuck = await create('86');
    assert.equal((await stack.routectl('devnet', 'fault', 'set', 'unshield')).code, 0);
    await fundAndWait(stuck, 'parked', (x) => x.needsAttention);
    stack.relay.faults.clear();
    const routes = [await create('86', { minAnonymitySet: 2 }), await create('86', { minAnonymitySet: 2 })];
    for (const t of routes) await stack.fund(t.depositAddress, 'USDC', BigInt(t.amount));
    const done = await Promise.all(routes.map((t) => until(t.routeId, 'completed', finished)));
    for (const t of done) assert.deepEqual([t.status, t.privacy!.anonymitySet], ['COMPLETED', 2], t.error ?? JSON.stringify(t.privacy));
    // ...until an operator ends it: its ragequit shows it was never the note either of them spent.
    assert.equal((await stack.routectl('fail', stuck.routeId, '--reason', 'the withdrawal keeps failing')).code, 0);
    const failed = await until(stuck.routeId, 'failed', finished);
    assert.match(failed.error ?? '', /ragequit/);
    for (const t of routes) assert.equal((await read(t.routeId)).privacy!.anonymitySet, 1, 'counted again without the ragequit peer');
  });
  test('zero-value transferFrom pokes naming one address, around every deposit of a class, change no route’s sender, set or deposit transaction', async () => {
    const routes = await Promise.all(['41', '41', '41'].map((amount) => create(amount, { minAnonymitySet: 2 })));
    // Anyone can emit Transfer(X → deposit, 0) with transferFrom and no allowance; X is the same for every route.
    const forger = await sourceWallet(0n);
    const named = freshAddress();
    const poke = (to: Address) =>
      forger.wallet.writeContract({ chain: null, address: forger.usdc, abi: erc20Abi, functionName: 'transferFrom', args: [named, to, 0n], gas: 100_000n });
    const funded: Array<{ sender: Address; txHash: Hex }> = [];
    for (const t of routes) {
      const user = await sourceWallet(BigInt(t.amount));
      const receipts = await inOneBlock(async () => {
        const before = await poke(t.depositAddress);
        const deposit = await user.send(t.depositAddress, BigInt(t.amount), { gas: 100_000n, nonce: 0 });
        return [before, deposit, await poke(t.depositAddress)];
      });
      assert.ok(
        receipts.every((r) => r.status === 'success' && r.blockNumber === receipts[0]!.blockNumber),
        'both pokes and the deposit, in one block',
      );
      funded.push({ sender: user.account.address, txHash: receipts[1]!.transactionHash });
    }
    const done = await Promise.all(routes.map((t) => until(t.routeId, 'completed', finished)));
    for (const [i, t] of done.entries()) {
      assert.equal(t.status, 'COMPLETED', t.error ?? '');
      const [row] = await stack.service.db
        .select({ sender: transfers.depositSender, txHash: transfers.depositTxHash })
        .from(transfers)
        .where(eq(transfers.routeId, t.routeId));
      assert.equal(row!.txHash, funded[i]!.txHash, 'the user’s own transfer, not a poke');
      assert.equal(row!.sender, funded[i]!.sender, 'the address that paid, not the one a poke named');
      // Merged into one client by the forged sender, the three would each count 1 and leave at the longest wait; three
      // clients leave each two (any one of the others may be the observer).
      assert.deepEqual(t.privacy && { set: t.privacy.anonymitySet, atMaxWait: t.privacy.leftAtMaxWait }, { set: 2, atMaxWait: false });
    }
  });

  test('a route funded from its own recipient is refunded to it before the pool and fails ADDRESS_REUSE_REFUSED', async () => {
    const key = generatePrivateKey();
    const user = await sourceWallet(0n, key);
    const t = await create('33', { userDestinationAddress: user.account.address });
    await sourceWallet(BigInt(t.amount), key);
    const hash = await user.send(t.depositAddress, BigInt(t.amount));
    await stack.chainClient('source').waitForTransactionReceipt({ hash });
    const done = await until(t.routeId, 'failed', finished);
    assert.equal(done.status, 'FAILED');
    assert.match(done.error ?? '', /^ADDRESS_REUSE_REFUSED: the deposit came from the recipient/);
    assert.equal(await stack.balanceOf('source', 'USDC', user.account.address), BigInt(t.amount), 'the whole deposit went back to where it came from');
    assert.equal(await stack.balanceOf('destination', 'USDC', user.account.address), 0n, 'nothing paid out');
    const notes = await stack.service.db.select().from(poolNotes).where(eq(poolNotes.routeId, t.routeId));
    assert.equal(notes.length, 0, 'it never entered the pool, so it is nobody’s peer');
    const ledger = await stack.service.db.select().from(ledgerEntries).where(eq(ledgerEntries.routeId, t.routeId));
    assert.deepEqual(
      ledger.map((e) => e.kind),
      ['refunded'],
      'no bridge-in',
    );
  });

  test('a gas spike on the hub defers the withdrawal (nothing proved or sent); it leaves once the fee falls, paid exactly', async () => {
    const hub = stack.chainClient('hub');
    const deferred = async () => {
      const text = await (await fetch(`${stack.workerUrl}/metrics`)).text();
      const line = text.split('\n').find((l) => l.startsWith(`private_route_sends_deferred_total{chain_id="${chainId('hub')}",step="unshield"}`));
      return line ? Number(line.split(' ').at(-1)) : 0;
    };
    assert.ok(stack.workerUrl, 'the worker serves its metrics');
    const before = await deferred();
    // Quoted and created at ordinary fees; then the hub's base fee jumps to 1000 gwei (each of the route's own blocks
    // lowers it by at most 12.5 %), before the route can reach its withdrawal.
    const t = await create('27', { minAnonymitySet: 1 });
    await hub.request({ method: 'anvil_setNextBlockBaseFeePerGas' as never, params: [toHex(1_000n * 10n ** 9n)] as never });
    await hub.request({ method: 'evm_mine' as never, params: [] as never });
    await fundAndWait(t, 'in the pool', (x) => x.status === 'SHIELDED' || finished(x));
    await waitFor('a deferred withdrawal', async () => ((await deferred()) > before ? true : undefined), 60_000);
    assert.equal((await read(t.routeId)).status, 'SHIELDED', 'still in the pool');
    const intents = await stack.service.db.select().from(txIntents).where(eq(txIntents.routeId, t.routeId));
    assert.ok(!intents.some((i) => i.step.startsWith('unshield')), 'no withdrawal signed while the fee is above the ceiling');

    await hub.request({ method: 'anvil_setNextBlockBaseFeePerGas' as never, params: [toHex(10n ** 9n)] as never });
    await hub.request({ method: 'evm_mine' as never, params: [] as never });
    const done = await until(t.routeId, 'completed once the fee fell', finished, 120_000);
    assert.equal(done.status, 'COMPLETED', done.error ?? '');
    assert.equal(await stack.balanceOf('destination', 'USDC', t.recipient), BigInt(t.quotedOutputAmount), 'paid exactly the quote');
  });

  test('income: a sweep takes a grid amount of every due change note to the treasury, through the relayer; the rest stays, booked', async () => {
    const due = await stack.service.db.select().from(changeNotes).where(isNull(changeNotes.sweptAt));
    const worth = due.filter((n) => BigInt(n.value) > 0n);
    assert.ok(worth.length >= 2, `${worth.length} change notes with value`);
    for (const note of due) {
      // The change a route's withdrawal left: its note's value less what the withdrawal took.
      const [parent] = await stack.service.db.select().from(poolNotes).where(eq(poolNotes.routeId, note.routeId));
      assert.ok(parent && BigInt(note.value) < BigInt(parent.value), `${note.routeId}: ${note.value} of ${parent?.value}`);
    }
    const swept = await stack.routectl('income', 'sweep', '--reason', 'the weekly collection', '--spread-hours', '0');
    assert.equal(swept.code, 0, swept.stderr);
    assert.match(swept.stdout, new RegExp(`${worth.length} of ${worth.length} due swept`));

    const hub = stack.chainClient('hub');
    const usdc = stack.manifest.chains.find((c) => c.role === 'hub')!.tokens.find((t) => t.symbol === 'USDC')!.address;
    let delivered = 0n;
    for (const note of worth) {
      const [spent] = await stack.service.db
        .select()
        .from(changeNotes)
        .where(and(eq(changeNotes.routeId, note.routeId), eq(changeNotes.generation, note.generation)));
      const amount = BigInt(spent!.sweptAmount!);
      assert.equal(amount, gridAmountAtMost(BigInt(note.value), 1n), 'the largest grid amount of the note');
      const [rest] = await stack.service.db
        .select()
        .from(changeNotes)
        .where(and(eq(changeNotes.routeId, note.routeId), eq(changeNotes.generation, note.generation + 1)));
      assert.equal(BigInt(rest!.value), BigInt(note.value) - amount, 'the rest is the next change note');
      const tx = await hub.getTransaction({ hash: spent!.sweptTxHash as Hex });
      assert.ok(
        stack.service.activityDeps.relaySenders.some((a) => a.address.toLowerCase() === tx.from.toLowerCase()),
        'sent by a relay sender',
      );
      const [withdrawal] = await withdrawalsOf(tx.hash);
      assert.equal(withdrawal!.args._recipient, TREASURY);
      const ledger = await stack.service.db.select().from(ledgerEntries).where(eq(ledgerEntries.routeId, note.routeId));
      const booked = ledger.find((e) => e.kind === 'income_swept');
      assert.equal(booked?.txHash, tx.hash);
      delivered += BigInt(booked!.amount);
    }
    assert.equal(
      await hub.readContract({ address: usdc, abi: erc20Abi, functionName: 'balanceOf', args: [TREASURY] }),
      delivered,
      'the treasury got what the ledger says',
    );
  });
});
