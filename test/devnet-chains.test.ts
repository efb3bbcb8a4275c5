import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  createPublicClient,
  createWalletClient,
  http,
  keccak256,
  parseEther,
  toHex,
  type Address,
  type Hex,
} from 'viem';
import { generatePrivateKey, mnemonicToAccount, privateKeyToAccount } from 'viem/accounts';
import { devnetPrivacyPoolAbi } from '../src/devnet/artifacts/DevnetPrivacyPool.ts';
import { testTokenAbi } from '../src/devnet/artifacts/TestToken.ts';
import {
  DEFAULT_DEVNET_CHAIN_IDS,
  DEVNET_ACCOUNTS,
  startDevnetChains,
  type DevnetChains,
} from '../src/devnet/chains.ts';
import { freeChainPorts } from '../src/devnet/ports.ts';
import type { ChainRole, DevnetChain } from '../src/devnet/manifest.ts';


const stateDir = mkdtempSync(join(tmpdir(), 'devnet-chains-test-'));
let chains: DevnetChains | undefined;

const faucet = privateKeyToAccount(DEVNET_ACCOUNTS.faucet);
const solver = privateKeyToAccount(DEVNET_ACCOUNTS.relaySolver);
const operator = privateKeyToAccount(DEVNET_ACCOUNTS.poolOperator);
const treasury = privateKeyToAccount(DEVNET_ACCOUNTS.treasury).address;
const userKey = generatePrivateKey();
const user = privateKeyToAccount(userKey);
const recipient = privateKeyToAccount(generatePrivateKey()).address;
const commitment = keccak256(toHex('devnet-chains-test-note'));

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
  const keys = [
    DEVNET_ACCOUNTS.faucet,
    DEVNET_ACCOUNTS.gas,
    DEVNET_ACCOUNTS.relaySolver,
    DEVNET_ACCOUNTS.poolOperator,
    DEVNET_ACCOUNTS.treasury,
  ];
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
      assert.deepEqual(
        token && { symbol: token.symbol, name: token.name, decimals: token.decimals },
        { symbol: e.symbol, name: e.name, decimals: e.decimals },
      );
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

test('privacy pool is configured with Railgun fees', async () => {
  const pool = manifest().privacyPool;
  assert.equal(pool.chainId, chain('hub').chainId);
  assert.equal(pool.shieldFeeBps, 25);
  assert.equal(pool.unshieldFeeBps, 25);
  const read = <F extends 'operator' | 'treasury' | 'shieldFeeBps' | 'unshieldFeeBps'>(functionName: F) =>
    publicClient('hub').readContract({ address: pool.address, abi: devnetPrivacyPoolAbi, functionName });
  assert.equal(await read('operator'), operator.address);
  assert.equal(await read('treasury'), treasury);
  assert.equal(await read('shieldFeeBps'), 25);
  assert.equal(await read('unshieldFeeBps'), 25);
});

test('shield then unshield moves exactly the fee-rule amounts', async () => {
  const pool = manifest().privacyPool.address;
  const usdc = tokenAddress('hub', 'USDC');
  const amount = 123_456_789n; // 123.456789 USDC, chosen so that both fees round down
  const shieldFee = (amount * 25n) / 10_000n;
  const noteValue = amount - shieldFee;
  const unshieldFee = (noteValue * 25n) / 10_000n;
  assert.equal(shieldFee, 308_641n);
  assert.equal(unshieldFee, 307_870n);

  const fromFaucet = hubWallet(DEVNET_ACCOUNTS.faucet);
  await mined(fromFaucet.sendTransaction({ to: user.address, value: parseEther('1'), chain: null }));
  await mined(
    fromFaucet.writeContract({
      address: usdc,
      abi: testTokenAbi,
      functionName: 'transfer',
      args: [user.address, amount],
      chain: null,
    }),
  );

  const treasuryBefore = await balanceOf('hub', 'USDC', treasury);
  const fromUser = hubWallet(userKey);
  await mined(
    fromUser.writeContract({ address: usdc, abi: testTokenAbi, functionName: 'approve', args: [pool, amount], chain: null }),
  );
  await mined(
    fromUser.writeContract({
      address: pool,
      abi: devnetPrivacyPoolAbi,
      functionName: 'shield',
      args: [usdc, amount, commitment],
      chain: null,
    }),
  );

  const readNote = () =>
    publicClient('hub').readContract({ address: pool, abi: devnetPrivacyPoolAbi, functionName: 'notes', args: [commitment] });
  assert.deepEqual(await readNote(), [usdc, noteValue, false]);
  assert.equal(await balanceOf('hub', 'USDC', user.address), 0n);
  assert.equal(await balanceOf('hub', 'USDC', pool), noteValue);
  assert.equal(await balanceOf('hub', 'USDC', treasury), treasuryBefore + shieldFee);

  await mined(
    hubWallet(DEVNET_ACCOUNTS.poolOperator).writeContract({
      address: pool,
      abi: devnetPrivacyPoolAbi,
      functionName: 'unshield',
      args: [commitment, recipient],
      chain: null,
    }),
  );
  assert.deepEqual(await readNote(), [usdc, noteValue, true]);
  assert.equal(await balanceOf('hub', 'USDC', recipient), noteValue - unshieldFee);
  assert.equal(await balanceOf('hub', 'USDC', pool), 0n);
  assert.equal(await balanceOf('hub', 'USDC', treasury), treasuryBefore + shieldFee + unshieldFee);
});

test('pool rejects reused commitments, zero amounts, non-operators and double spends', async () => {
  const pool = manifest().privacyPool.address;
  const usdc = tokenAddress('hub', 'USDC');
  const fromFaucet = hubWallet(DEVNET_ACCOUNTS.faucet);
  const shield = (amount: bigint, note: Hex) =>
    fromFaucet.writeContract({
      address: pool,
      abi: devnetPrivacyPoolAbi,
      functionName: 'shield',
      args: [usdc, amount, note],
      chain: null,
    });
  const unshield = (privateKey: Hex, note: Hex) =>
    hubWallet(privateKey).writeContract({
      address: pool,
      abi: devnetPrivacyPoolAbi,
      functionName: 'unshield',
      args: [note, recipient],
      chain: null,
    });

  await mined(
    fromFaucet.writeContract({ address: usdc, abi: testTokenAbi, functionName: 'approve', args: [pool, 10_000_000n], chain: null }),
  );
  await assert.rejects(shield(1_000_000n, commitment), /CommitmentUsed/);
  await assert.rejects(shield(0n, keccak256(toHex('zero'))), /ZeroAmount/);

  const freshNote = keccak256(toHex('devnet-chains-test-second-note'));
  await mined(shield(1_000_000n, freshNote));
  await assert.rejects(unshield(DEVNET_ACCOUNTS.faucet, freshNote), /NotOperator/);
  await assert.rejects(unshield(DEVNET_ACCOUNTS.poolOperator, keccak256(toHex('unknown'))), /UnknownNote/);
  await assert.rejects(unshield(DEVNET_ACCOUNTS.poolOperator, commitment), /NoteSpent/);
});

test('restarting with the same stateDir keeps contracts and balances without redeploying', async () => {
  const before = manifest();
  const snapshot = async () => ({
    // Unchanged faucet nonces show that nothing was redeployed.
    faucetNonces: await Promise.all(
      (['source', 'hub', 'destination'] as const).map((role) =>
        publicClient(role).getTransactionCount({ address: faucet.address }),
      ),
    ),
    recipient: await balanceOf('hub', 'USDC', recipient),
    treasury: await balanceOf('hub', 'USDC', treasury),
    solverWethOnDestination: await balanceOf('destination', 'WETH', solver.address),
    note: await publicClient('hub').readContract({
      address: before.privacyPool.address,
      abi: devnetPrivacyPoolAbi,
      functionName: 'notes',
      args: [commitment],
    }),
  });
  const stateBefore = await snapshot();
  assert.ok(stateBefore.recipient > 0n);

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
