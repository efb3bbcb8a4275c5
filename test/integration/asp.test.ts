import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateMerkleProof, hashPrecommitment, type Secret } from '@0xbow/privacy-pools-core-sdk';
import { Hono } from 'hono';
import { createPublicClient, createWalletClient, erc20Abi, getAbiItem, http, maxUint256, parseEventLogs, type Address } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { entrypointAbi } from '../../devnet/artifacts/Entrypoint.ts';
import { privacyPoolAbi } from '../../devnet/artifacts/PrivacyPool.ts';
import { DEVNET_ACCOUNTS, startDevnetChains, type DevnetChains } from '../../devnet/chains.ts';
import type { PrivacyPoolsDeployment } from '../../devnet/manifest.ts';
import { freeChainPorts, freePort } from '../../devnet/ports.ts';
import { DEVNET_ASP_POSTMAN_KEY } from '../../devnet/privacyPools.ts';
import { startAspEmulator, type AspEmulator } from '../../devnet/emulators/asp/index.ts';
import { createFaultRegistry } from '../../devnet/emulators/faults.ts';
import { listen, type ListeningServer } from '../../devnet/emulators/http.ts';
import { AspError, AspResponseError, AspUnavailableError, createAspClient, type AspClient } from '../../src/providers/privacy-pools/asp.ts';

const APPROVAL_DELAY_MS = 300;
const DEPOSIT = 10_000_000n; // 10 USDC
const SNARK_SCALAR_FIELD = 21888242871839275222246405745257275088548364400416034343698204186575808495617n;

const stateDir = mkdtempSync(join(tmpdir(), 'asp-emulator-test-'));
const statePath = join(stateDir, 'asp.json');
const faucet = privateKeyToAccount(DEVNET_ACCOUNTS.faucet);
const faults = createFaultRegistry();
/** Failed iterations of the emulators' loops: none are expected against a healthy chain. */
const loopErrors: object[] = [];

let chains: DevnetChains | undefined;
let emulator: AspEmulator | undefined;
let client: AspClient;

function deployment(): PrivacyPoolsDeployment {
  assert.ok(chains, 'devnet chains are running');
  return chains.manifest.privacyPools;
}

function hubRpcUrl(): string {
  const hub = chains?.manifest.chains.find((c) => c.role === 'hub');
  assert.ok(hub, 'no hub chain');
  return hub.rpcUrl;
}

const publicClient = () => createPublicClient({ transport: http(hubRpcUrl()), pollingInterval: 20 });

function startEmulator(opts: { approvalDelayMs?: number; statePath?: string } = {}): Promise<AspEmulator> {
  const d = deployment();
  return startAspEmulator({
    chainId: d.chainId,
    rpcUrl: hubRpcUrl(),
    deployment: d,
    postmanPrivateKey: DEVNET_ASP_POSTMAN_KEY,
    approvalDelayMs: opts.approvalDelayMs ?? APPROVAL_DELAY_MS,
    reviewIntervalMs: 100,
    port: 0,
    statePath: opts.statePath ?? statePath,
    faults,
    pollIntervalMs: 100,
    log: (entry) => {
      if ((entry as { event?: string }).event === 'asp.error') loopErrors.push(entry);
    },
  });
}

const randomSecret = () => (BigInt(`0x${randomBytes(32).toString('hex')}`) % SNARK_SCALAR_FIELD) as Secret;

/** A real deposit through the Entrypoint, as the faucet; its label and commitment from the pool's Deposited event. */
async function deposit(): Promise<{ label: bigint; commitment: bigint }> {
  const d = deployment();
  const wallet = createWalletClient({ account: faucet, transport: http(hubRpcUrl()) });
  const precommitment = hashPrecommitment(randomSecret(), randomSecret());
  const hash = await wallet.writeContract({
    chain: null,
    address: d.entrypoint,
    abi: entrypointAbi,
    functionName: 'deposit',
    args: [d.asset, DEPOSIT, precommitment],
  });
  const receipt = await publicClient().waitForTransactionReceipt({ hash });
  assert.equal(receipt.status, 'success');
  const [deposited] = parseEventLogs({ abi: privacyPoolAbi, eventName: 'Deposited', logs: receipt.logs });
  assert.ok(deposited, 'the pool emitted Deposited');
  assert.equal(deposited.args._precommitmentHash, precommitment);
  return { label: deposited.args._label, commitment: deposited.args._commitment };
}

async function approveEntrypoint(): Promise<void> {
  const d = deployment();
  const wallet = createWalletClient({ account: faucet, transport: http(hubRpcUrl()) });
  const hash = await wallet.writeContract({ chain: null, address: d.asset, abi: erc20Abi, functionName: 'approve', args: [d.entrypoint, maxUint256] });
  assert.equal((await publicClient().waitForTransactionReceipt({ hash })).status, 'success');
}

async function until<T>(what: string, get: () => Promise<T | undefined>, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await get();
    if (value !== undefined) return value;
    if (Date.now() > deadline) assert.fail(`${what}: not within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

async function statusOf(label: bigint): Promise<string | undefined> {
  return (await client.reviewStatuses([label])).get(label);
}

/** The roots once the ASP has posted its newest one on chain. */
async function settledRoots() {
  return until('onchainMtRoot catches up with mtRoot', async () => {
    const roots = await client.roots();
    return roots.onchainMtRoot === roots.mtRoot ? roots : undefined;
  });
}

const latestRoot = () => publicClient().readContract({ address: deployment().entrypoint, abi: entrypointAbi, functionName: 'latestRoot' });

async function poolLeaves(): Promise<bigint[]> {
  const logs = await publicClient().getLogs({
    address: deployment().pool,
    event: getAbiItem({ abi: privacyPoolAbi, name: 'LeafInserted' }),
    fromBlock: BigInt(deployment().deployBlock),
    strict: true,
  });
  return logs.map((l) => l.args._leaf);
}

/** Runs `call` while fetch drops the X-Pool-Scope header, as a client that forgets it would. */
async function withoutScopeHeader<T>(call: () => Promise<T>): Promise<T> {
  const original = globalThis.fetch;
  globalThis.fetch = (input, init) => {
    const headers = new Headers(init?.headers);
    headers.delete('X-Pool-Scope');
    return original(input, { ...init, headers });
  };
  try {
    return await call();
  } finally {
    globalThis.fetch = original;
  }
}

before(
  async () => {
    chains = await startDevnetChains({ ports: await freeChainPorts() });
    await approveEntrypoint();
    emulator = await startEmulator();
    client = createAspClient({ baseUrl: emulator.url, chainId: deployment().chainId, scope: BigInt(deployment().scope) });
  },
  { timeout: 120_000 },
);

after(async () => {
  await emulator?.stop();
  await chains?.stop();
  rmSync(stateDir, { recursive: true, force: true });
});

describe('ASP emulator through the production client', { timeout: 180_000 }, () => {
  let first: { label: bigint; commitment: bigint };

  test('before the first approval there is no root on chain', { timeout: 10_000 }, async () => {
    const roots = await client.roots();
    assert.equal(roots.onchainMtRoot, null);
    assert.equal(roots.mtRoot, 0n);
    assert.ok(typeof roots.createdAt === 'string' && !Number.isNaN(Date.parse(roots.createdAt)), `createdAt ${roots.createdAt} is an ISO date`);
    assert.deepEqual((await client.leaves()).aspLeaves, []);
  });

  test('a deposit is pending, then approved, and its label joins aspLeaves', { timeout: 30_000 }, async () => {
    first = await deposit();
    const seen = await until('the ASP sees the deposit', () => statusOf(first.label));
    assert.equal(seen, 'pending');
    assert.ok(!(await client.leaves()).aspLeaves.includes(first.label), 'a pending label is not an ASP leaf');

    await until('approval', async () => ((await statusOf(first.label)) === 'approved' ? true : undefined));
    assert.ok((await client.leaves()).aspLeaves.includes(first.label));

    const raw = await fetch(`${emulator!.url}/${deployment().chainId}/public/deposits-by-label`, {
      headers: { 'X-Pool-Scope': deployment().scope, 'X-Labels': `${first.label},12345` },
    });
    const rows = (await raw.json()) as Array<Record<string, unknown>>;
    assert.equal(rows.length, 1, 'unknown labels are left out');
    assert.equal(rows[0]!.type, 'deposit');
    assert.equal(rows[0]!.label, first.label.toString());
    assert.equal(rows[0]!.amount, ((DEPOSIT * 9_950n) / 10_000n).toString(), 'the value after the 50 bps vetting fee');
    assert.equal((rows[0]!.address as string).toLowerCase(), faucet.address.toLowerCase());
    assert.equal(typeof rows[0]!.timestamp, 'number');
    assert.match(rows[0]!.txHash as string, /^0x[0-9a-f]{64}$/);
    assert.match(rows[0]!.precommitmentHash as string, /^[0-9]+$/);
  });

  test('onchainMtRoot is Entrypoint.latestRoot() and the LeanIMT root of aspLeaves', { timeout: 30_000 }, async () => {
    const roots = await settledRoots();
    const { aspLeaves } = await client.leaves();
    assert.equal(roots.onchainMtRoot, await latestRoot());
    assert.equal(roots.onchainMtRoot, generateMerkleProof(aspLeaves, first.label).root);

    const [, cid] = await publicClient().readContract({ address: deployment().entrypoint, abi: entrypointAbi, functionName: 'associationSets', args: [0n] });
    assert.match(cid, /^bafkrei[a-z2-7]{52}$/, 'a CIDv1 of valid length');
  });

  test("stateTreeLeaves are the pool's leaves, with the pool's currentRoot()", { timeout: 30_000 }, async () => {
    const { stateTreeLeaves } = await client.leaves();
    assert.deepEqual(stateTreeLeaves, await poolLeaves());
    const currentRoot = await publicClient().readContract({ address: deployment().pool, abi: privacyPoolAbi, functionName: 'currentRoot' });
    assert.equal(generateMerkleProof(stateTreeLeaves, first.commitment).root, currentRoot);
  });

  test('an asp-review fault declines the next deposit, whose label never enters aspLeaves', { timeout: 30_000 }, async () => {
    faults.set({ operation: 'asp-review', mode: 'reject', count: 1 });
    const declined = await deposit();
    const approved = await deposit();
    await until('both reviewed', async () => {
      const statuses = await client.reviewStatuses([declined.label, approved.label]);
      return [...statuses.values()].every((s) => s !== 'pending') && statuses.size === 2 ? statuses : undefined;
    });
    assert.equal(await statusOf(declined.label), 'declined');
    assert.equal(await statusOf(approved.label), 'approved');
    assert.deepEqual(faults.list(), [], 'the fault is used up');

    const roots = await settledRoots();
    const { aspLeaves } = await client.leaves();
    assert.deepEqual(aspLeaves, [first.label, approved.label]);
    assert.equal(roots.onchainMtRoot, await latestRoot());
    assert.equal(roots.onchainMtRoot, generateMerkleProof(aspLeaves, approved.label).root);
  });

  test('a missing X-Pool-Scope is a 400, an unknown scope or chain a 404: AspResponseError', { timeout: 10_000 }, async () => {
    const missing = await withoutScopeHeader(() => client.roots()).catch((err: unknown) => err);
    assert.ok(missing instanceof AspResponseError, String(missing));
    assert.equal(missing.status, 400);
    assert.match(missing.message, /X-Pool-Scope/);

    const raw = await fetch(`${emulator!.url}/${deployment().chainId}/public/mt-leaves`);
    assert.equal(raw.status, 400);
    assert.equal(typeof ((await raw.json()) as { error?: unknown }).error, 'string');

    const d = deployment();
    const otherScope = createAspClient({ baseUrl: emulator!.url, chainId: d.chainId, scope: BigInt(d.scope) + 1n });
    await assert.rejects(otherScope.leaves(), (err) => err instanceof AspResponseError && err.status === 404);
    const otherChain = createAspClient({ baseUrl: emulator!.url, chainId: d.chainId + 1, scope: BigInt(d.scope) });
    await assert.rejects(otherChain.roots(), (err) => err instanceof AspResponseError && err.status === 404);
    const hexScope = await fetch(`${emulator!.url}/${d.chainId}/public/mt-roots`, { headers: { 'X-Pool-Scope': `0x${BigInt(d.scope).toString(16)}` } });
    assert.equal(hexScope.status, 404, 'a hex scope matches no pool');
  });

  test('the state survives a restart with statePath; a file for another pool or chain is ignored', { timeout: 60_000 }, async () => {
    const before = { leaves: await client.leaves(), roots: await client.roots() };
    const reviewed = await client.reviewStatuses(before.leaves.aspLeaves);
    await emulator!.stop();

    // A long delay: every status the restarted emulator serves comes from the file, not from a new review.
    emulator = await startEmulator({ approvalDelayMs: 3_600_000 });
    client = createAspClient({ baseUrl: emulator.url, chainId: deployment().chainId, scope: BigInt(deployment().scope) });
    assert.deepEqual(await client.leaves(), before.leaves);
    assert.deepEqual(await client.roots(), before.roots);
    assert.deepEqual(await client.reviewStatuses(before.leaves.aspLeaves), reviewed);
    const saved = JSON.parse(readFileSync(statePath, 'utf8')) as { deposits: Array<{ reviewStatus: string }> };
    assert.deepEqual(saved.deposits.map((d) => d.reviewStatus).sort(), ['approved', 'approved', 'declined']);

    const later = await deposit();
    assert.equal(await until('the restarted ASP sees a new deposit', () => statusOf(later.label)), 'pending');

    // Written for another pool; written for another chain with the same addresses (a fresh devnet).
    type SavedState = { pool: { pool: Address }; scanned: { hash: string } };
    const variants: Array<[string, (saved: SavedState) => void]> = [
      ['another pool', (saved) => (saved.pool.pool = '0x000000000000000000000000000000000000dEaD')],
      ['another chain', (saved) => (saved.scanned.hash = `0x${'ab'.repeat(32)}`)],
    ];
    for (const [name, change] of variants) {
      const otherPath = join(stateDir, `${name.replaceAll(' ', '-')}.json`);
      const saved = JSON.parse(readFileSync(statePath, 'utf8')) as SavedState;
      change(saved);
      writeFileSync(otherPath, JSON.stringify(saved));
      const fresh = await startEmulator({ approvalDelayMs: 3_600_000, statePath: otherPath });
      try {
        const freshClient = createAspClient({ baseUrl: fresh.url, chainId: deployment().chainId, scope: BigInt(deployment().scope) });
        await until(`${name}: the ASP rescans the pool`, async () => ((await freshClient.reviewStatuses([later.label])).size === 1 ? true : undefined));
        const statuses = await freshClient.reviewStatuses([first.label, later.label]);
        assert.deepEqual([...statuses.values()], ['pending', 'pending'], `${name}: the file's reviews are not used`);
        assert.deepEqual((await freshClient.leaves()).aspLeaves, []);
      } finally {
        await fresh.stop();
      }
    }
    assert.deepEqual(loopErrors, []);
  });
});

describe('ASP client errors', { timeout: 30_000 }, () => {
  let stub: ListeningServer | undefined;
  let silent: Server | undefined;
  const sockets = new Set<Socket>();

  before(async () => {
    const app = new Hono();
    app.get('/1/public/mt-roots', (c) => c.json({ error: 'Too Many Requests' }, 429));
    app.get('/2/public/mt-roots', (c) => c.json({ message: 'Forbidden' }, 403));
    app.get('/3/public/mt-roots', (c) => c.text('upstream down', 503));
    app.get('/4/public/mt-leaves', (c) => c.json({ aspLeaves: ['0x12'], stateTreeLeaves: [] }));
    app.get('/5/public/mt-leaves', (c) => c.text('<html>not json</html>'));
    app.get('/6/public/mt-roots', (c) => c.json({ mtRoot: '7', createdAt: 1_700_000_000, onchainMtRoot: '7' }));
    stub = await listen(app, 0);
    // Accepts connections and never answers.
    silent = createServer((socket) => sockets.add(socket));
    await new Promise<void>((resolve) => silent!.listen(0, '127.0.0.1', resolve));
  });

  after(async () => {
    await stub?.close();
    for (const socket of sockets) socket.destroy();
    await new Promise((resolve) => silent?.close(resolve));
  });

  const at = (baseUrl: string, chainId: number, timeoutMs?: number) => createAspClient({ baseUrl, chainId, scope: 42n, timeoutMs });

  test('429 and 403 say back off and retry, 5xx retry later: AspUnavailableError', { timeout: 10_000 }, async () => {
    for (const [chainId, status] of [
      [1, 429],
      [2, 403],
      [3, 503],
    ] as const) {
      const err = await at(stub!.url, chainId)
        .roots()
        .catch((e: unknown) => e);
      assert.ok(err instanceof AspUnavailableError && err instanceof AspError, String(err));
      assert.equal(err.status, status);
      assert.match(err.message, status === 503 ? /retry later/ : /back off and retry/);
    }
  });

  test('a malformed body is an AspResponseError', { timeout: 10_000 }, async () => {
    await assert.rejects(at(stub!.url, 4).leaves(), (err) => err instanceof AspResponseError && /aspLeaves\.0/.test(err.message));
    await assert.rejects(at(stub!.url, 5).leaves(), (err) => err instanceof AspResponseError && /not JSON/.test(err.message));
  });

  test('a numeric createdAt is accepted as sent', { timeout: 10_000 }, async () => {
    assert.deepEqual(await at(stub!.url, 6).roots(), { mtRoot: 7n, createdAt: 1_700_000_000, onchainMtRoot: 7n });
  });

  test('an unreachable or silent ASP is AspUnavailableError, naming only the origin', { timeout: 10_000 }, async () => {
    const origin = `http://127.0.0.1:${await freePort()}`;
    const refused = await at(`${origin}/key-in-path`, 1)
      .leaves()
      .catch((e: unknown) => e);
    assert.ok(refused instanceof AspUnavailableError, String(refused));
    assert.ok(refused.message.includes(origin), refused.message);
    assert.ok(!refused.message.includes('key-in-path'), refused.message);

    const { port } = silent!.address() as { port: number };
    const timedOut = await at(`http://127.0.0.1:${port}`, 1, 200)
      .roots()
      .catch((e: unknown) => e);
    assert.ok(timedOut instanceof AspUnavailableError, String(timedOut));
    assert.match(timedOut.message, /no answer within 200 ms/);
  });
});
