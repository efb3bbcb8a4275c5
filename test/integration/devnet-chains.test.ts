import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createPublicClient, createWalletClient, encodePacked, http, keccak256, parseEventLogs, toHex, type Address, type Hex } from 'viem';
import { mnemonicToAccount, privateKeyToAccount } from 'viem/accounts';
import { generateMerkleProof, getCommitment, hashPrecommitment, type Secret } from '@0xbow/privacy-pools-core-sdk';
import { entrypointAbi } from '../../devnet/artifacts/Entrypoint.ts';
import { privacyPoolAbi } from '../../devnet/artifacts/PrivacyPool.ts';
import { testTokenAbi } from '../../devnet/artifacts/TestToken.ts';
import { DEFAULT_DEVNET_CHAIN_IDS, DEVNET_ACCOUNTS, startDevnetChains, type DevnetChains } from '../../devnet/chains.ts';
import { freeChainPorts } from '../../devnet/ports.ts';
import { lostBlocksMessage, missingRecordedTransactions } from '../../devnet/chainRecords.ts';
import { connectDatabase } from '../../src/db/client.ts';
import { txIntents } from '../../src/db/schema.ts';
import { startTestPostgres } from '../support/database.ts';
import type { ChainRole, DevnetChain } from '../../devnet/manifest.ts';

const stateDir = mkdtempSync(join(tmpdir(), 'devnet-chains-test-'));
let chains: DevnetChains | undefined;

const faucet = privateKeyToAccount(DEVNET_ACCOUNTS.faucet);
const solver = privateKeyToAccount(DEVNET_ACCOUNTS.relaySolver);
const SNARK_FIELD = 21888242871839275222246405745257275088548364400416034343698204186575808495617n;

function manifest() {
  assert.ok(chains, 'chains are running');
  return chains.manifest;
}

function chain(role: ChainRole): DevnetChain {
  const found = manifest().chains.find((c) => c.role === role);
  assert.ok(found, `manifest has the ${role} chain`);
  return found;
}

function tokenAddress(role: ChainRole, symbol: string): Address {
  const token = chain(role).tokens.find((t) => t.symbol === symbol);
  assert.ok(token, `${symbol} on ${role}`);
  return token.address;
}

function publicClient(role: ChainRole) {
  // A short polling interval: anvil mines instantly, and viem's 4 s default keeps the process alive.
  return createPublicClient({ transport: http(chain(role).rpcUrl), pollingInterval: 50 });
}

function hubWallet(privateKey: Hex) {
  return createWalletClient({ account: privateKeyToAccount(privateKey), transport: http(chain('hub').rpcUrl) });
}

async function balanceOf(role: ChainRole, symbol: string, owner: Address): Promise<bigint> {
  return publicClient(role).readContract({
    address: tokenAddress(role, symbol),
    abi: testTokenAbi,
    functionName: 'balanceOf',
    args: [owner],
  });
}

/** Fails the test unless the sent transaction is mined successfully. */
async function mined(hash: Promise<Hex>): Promise<void> {
  const receipt = await publicClient('hub').waitForTransactionReceipt({ hash: await hash });
  assert.equal(receipt.status, 'success');
}

before(async () => {
  const startedAt = performance.now();
  chains = await startDevnetChains({ ports: await freeChainPorts(), stateDir });
  console.log(`devnet chains started in ${Math.round(performance.now() - startedAt)} ms`);
});

after(async () => {
  await chains?.stop();
  rmSync(stateDir, { recursive: true, force: true });
});

test('devnet accounts are anvil default accounts 0-4', () => {
  const keys = [DEVNET_ACCOUNTS.faucet, DEVNET_ACCOUNTS.gas, DEVNET_ACCOUNTS.relaySolver, DEVNET_ACCOUNTS.poolRelayer, DEVNET_ACCOUNTS.treasury];
  keys.forEach((key, i) => {
    const expected = mnemonicToAccount('test test test test test test test test test test test junk', {
      addressIndex: i,
    }).address;
    assert.equal(privateKeyToAccount(key).address, expected);
  });
  assert.equal(manifest().faucetPrivateKey, DEVNET_ACCOUNTS.faucet);
});

test('chains answer with their chain ids and names', async () => {
  const expected = [
    { role: 'source', name: 'devnet-source', displayName: 'Devnet Source' },
    { role: 'hub', name: 'devnet-hub', displayName: 'Devnet Hub' },
    { role: 'destination', name: 'devnet-destination', displayName: 'Devnet Destination' },
  ] as const;
  for (const e of expected) {
    const c = chain(e.role);
    assert.equal(c.chainId, DEFAULT_DEVNET_CHAIN_IDS[e.role]);
    assert.equal(c.name, e.name);
    assert.equal(c.displayName, e.displayName);
    assert.equal(await publicClient(e.role).getChainId(), c.chainId);
  }
});

test('USDC and WETH are deployed and funded on every chain', async () => {
  const expected = [
    { symbol: 'USDC', name: 'USD Coin', decimals: 6, faucet: 1_000_000_000n, solver: 10_000_000n },
    { symbol: 'WETH', name: 'Wrapped Ether', decimals: 18, faucet: 1_000_000n, solver: 10_000n },
  ];
  for (const role of ['source', 'hub', 'destination'] as const) {
    const client = publicClient(role);
    for (const e of expected) {
      const token = chain(role).tokens.find((t) => t.symbol === e.symbol);
      assert.deepEqual(token && { symbol: token.symbol, name: token.name, decimals: token.decimals }, { symbol: e.symbol, name: e.name, decimals: e.decimals });
      const read = <F extends 'symbol' | 'name' | 'decimals'>(functionName: F) =>
        client.readContract({ address: token!.address, abi: testTokenAbi, functionName });
      assert.equal(await read('symbol'), e.symbol);
      assert.equal(await read('name'), e.name);
      assert.equal(await read('decimals'), e.decimals);

      const unit = 10n ** BigInt(e.decimals);
      assert.equal(await balanceOf(role, e.symbol, faucet.address), e.faucet * unit);
      assert.equal(await balanceOf(role, e.symbol, solver.address), e.solver * unit);
    }
  }
});

test('Privacy Pools: the Entrypoint registers the hub USDC pool with mainnet fees, and the ASP postman holds its role', async () => {
  const pools = manifest().privacyPools;
  const hub = publicClient('hub');
  assert.equal(pools.chainId, chain('hub').chainId);
  assert.equal(pools.asset, tokenAddress('hub', 'USDC'));
  const [pool, minimumDepositAmount, vettingFeeBps, maxRelayFeeBps] = await hub.readContract({
    address: pools.entrypoint,
    abi: entrypointAbi,
    functionName: 'assetConfig',
    args: [pools.asset],
  });
  assert.deepEqual([pool, minimumDepositAmount, vettingFeeBps, maxRelayFeeBps], [pools.pool, 1_000_000n, 50n, 100n]);
  // SCOPE = keccak256(pool ‖ chain id ‖ asset) mod the SNARK field, as the protocol defines it
  const scope = BigInt(keccak256(encodePacked(['address', 'uint256', 'address'], [pools.pool, BigInt(pools.chainId), pools.asset]))) % SNARK_FIELD;
  assert.equal(await hub.readContract({ address: pools.pool, abi: privacyPoolAbi, functionName: 'SCOPE' }), scope);
  assert.equal(pools.scope, scope.toString());
  assert.equal(await hub.readContract({ address: pools.entrypoint, abi: entrypointAbi, functionName: 'scopeToPool', args: [scope] }), pools.pool);
  assert.equal(
    await hub.readContract({ address: pools.entrypoint, abi: entrypointAbi, functionName: 'hasRole', args: [keccak256(toHex('ASP_POSTMAN')), pools.postman] }),
    true,
  );
  await assert.rejects(hub.readContract({ address: pools.entrypoint, abi: entrypointAbi, functionName: 'latestRoot' }), /NoRootsAvailable/);
});

test('a deposit pays the vetting fee and inserts Poseidon(value, label, precommitment) into the state tree', async () => {
  const pools = manifest().privacyPools;
  const hub = publicClient('hub');
  const wallet = hubWallet(DEVNET_ACCOUNTS.faucet);
  const precommitment = hashPrecommitment(11n as Secret, 22n as Secret);
  const usdc = pools.asset;
  await mined(wallet.writeContract({ chain: null, address: usdc, abi: testTokenAbi, functionName: 'approve', args: [pools.entrypoint, 10n ** 12n] }));
  const entrypointBefore = await balanceOf('hub', 'USDC', pools.entrypoint);
  const hash = await wallet.writeContract({
    chain: null,
    address: pools.entrypoint,
    abi: entrypointAbi,
    functionName: 'deposit',
    args: [usdc, 100_000_000n, precommitment],
  });
  const receipt = await hub.waitForTransactionReceipt({ hash });
  const [deposited] = parseEventLogs({ abi: privacyPoolAbi, eventName: 'Deposited', logs: receipt.logs });
  assert.ok(deposited);
  const { _value: value, _label: label, _commitment: commitment, _depositor: depositor } = deposited.args;
  assert.equal(value, 99_500_000n, '50 bps vetting fee, rounded down');
  assert.equal(depositor, faucet.address);
  assert.equal((await balanceOf('hub', 'USDC', pools.entrypoint)) - entrypointBefore, 500_000n, 'the fee stays at the Entrypoint');
  assert.equal(await balanceOf('hub', 'USDC', pools.pool), 99_500_000n);
  const nonce = await hub.readContract({ address: pools.pool, abi: privacyPoolAbi, functionName: 'nonce' });
  assert.equal(label, BigInt(keccak256(encodePacked(['uint256', 'uint256'], [BigInt(pools.scope), nonce]))) % SNARK_FIELD);
  assert.equal(commitment, getCommitment(value, label, 11n as Secret, 22n as Secret).hash);
  assert.equal(
    await hub.readContract({ address: pools.pool, abi: privacyPoolAbi, functionName: 'currentRoot' }),
    generateMerkleProof([commitment], commitment).root,
  );

  // the same precommitment twice, below the minimum, the pool called directly, a root from anyone but the postman
  await assert.rejects(
    wallet.writeContract({ chain: null, address: pools.entrypoint, abi: entrypointAbi, functionName: 'deposit', args: [usdc, 5_000_000n, precommitment] }),
    /PrecommitmentAlreadyUsed/,
  );
  await assert.rejects(
    wallet.writeContract({ chain: null, address: pools.entrypoint, abi: entrypointAbi, functionName: 'deposit', args: [usdc, 999_999n, precommitment + 1n] }),
    /MinimumDepositAmount/,
  );
  await assert.rejects(
    wallet.writeContract({ chain: null, address: pools.pool, abi: privacyPoolAbi, functionName: 'deposit', args: [faucet.address, 1n, 3n] }),
    /OnlyEntrypoint/,
  );
  await assert.rejects(
    wallet.writeContract({
      chain: null,
      address: pools.entrypoint,
      abi: entrypointAbi,
      functionName: 'updateRoot',
      args: [1n, 'bafkreihdwdcefgh4dqkjv67uzcmw7ojee6xedzdetojuzjevtenxquvyku'],
    }),
    /AccessControlUnauthorizedAccount/,
  );
});

test('restarting with the same stateDir keeps contracts and balances without redeploying', async () => {
  const before = manifest();
  const snapshot = async () => ({
    // Unchanged faucet nonces show that nothing was redeployed.
    faucetNonces: await Promise.all(
      (['source', 'hub', 'destination'] as const).map((role) => publicClient(role).getTransactionCount({ address: faucet.address })),
    ),
    solverWethOnDestination: await balanceOf('destination', 'WETH', solver.address),
    poolRoot: await publicClient('hub').readContract({ address: before.privacyPools.pool, abi: privacyPoolAbi, functionName: 'currentRoot' }),
    pooled: await balanceOf('hub', 'USDC', before.privacyPools.pool),
  });
  const stateBefore = await snapshot();
  assert.ok(stateBefore.pooled > 0n);

  await chains!.stop();
  chains = await startDevnetChains({ ports: await freeChainPorts(), stateDir });

  const withoutRpcUrls = (m: typeof before) => ({ ...m, chains: m.chains.map((c) => ({ ...c, rpcUrl: '' })) });
  assert.deepEqual(withoutRpcUrls(manifest()), withoutRpcUrls(before));
  assert.notDeepEqual(
    manifest().chains.map((c) => c.rpcUrl),
    before.chains.map((c) => c.rpcUrl),
  );
  assert.deepEqual(await snapshot(), stateBefore);
});

test('chains killed outright come back at their last save; the records of what they lost are found, the rest are not', { timeout: 120_000 }, async () => {
  const database = await startTestPostgres('devnet-chains-records');
  const db = connectDatabase(database.url, { max: 1 });
  try {
    const hub = () => chain('hub');
    const send = async () => {
      const hash = await hubWallet(DEVNET_ACCOUNTS.faucet).sendTransaction({ to: solver.address, value: 1n, chain: null });
      await mined(Promise.resolve(hash));
      return hash;
    };
    const record = (txHash: Hex, nonce: number) =>
      db.db
        .insert(txIntents)
        .values({
          routeId: 'rt_records',
          step: `step-${nonce}`,
          chainId: hub().chainId,
          fromAddress: faucet.address,
          nonce,
          txHash,
          rawTx: '0x',
          status: 'mined',
          minedTxHash: txHash,
        })
        .returning({ id: txIntents.id });
    // Mined before a clean stop (saved), then one more after it.
    const saved = await send();
    await record(saved, 1);
    await chains!.stop();
    const children: ChildProcess[] = [];
    const registry = { track: (_name: string, child: ChildProcess | { pid: number }) => void children.push(child as ChildProcess), forget() {}, close() {} };
    chains = await startDevnetChains({ ports: await freeChainPorts(), stateDir, processes: registry });
    const lost = await send();
    const [lostRecord] = await record(lost, 2);
    assert.deepEqual(await missingRecordedTransactions(db.db, manifest().chains), [], 'both sends are on the running chains');

    // SIGKILL: anvil has no chance to save; the stack's next start finds the chains at their last save.
    await Promise.all(children.map((child) => new Promise((resolve) => child.once('exit', resolve).kill('SIGKILL'))));
    chains = await startDevnetChains({ ports: await freeChainPorts(), stateDir });

    const missing = await missingRecordedTransactions(db.db, manifest().chains);
    assert.deepEqual(
      missing.map((m) => [m.chain.chainId, m.intentId, m.txHash]),
      [[hub().chainId, lostRecord!.id, lost]],
    );
    const message = lostBlocksMessage(missing, '.data');
    assert.match(message, /devnet-hub \(chain \d+\) no longer hold 1 recorded send/);
    assert.match(message, /remove \.data \(or set DATA_DIR to a new folder\) and run npm start again/);
  } finally {
    await db.close();
    await database.stop();
  }
});
