import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import {
  type Address,
  type Hex,
  encodeAbiParameters,
  encodeFunctionData,
  erc20Abi,
  getAddress,
  pad,
  recoverTransactionAddress,
  serializeTransaction,
  zeroAddress,
} from 'viem';
import { DEVNET_ACCOUNTS } from '../../devnet/chains.ts';
import { createRouteKeyring } from '../../src/accounts/routeAccounts.ts';
import { createLogger } from '../../src/logger.ts';
import type { HttpServer } from '../../src/observability/http.ts';
import { messageTransmitterV2Abi, tokenMessengerV2Abi } from '../../src/providers/cctp/abi.ts';
import { entrypointAbi, poolAbi, relayDataParameters } from '../../src/providers/privacy-pools/abi.ts';
import { loadSignerConfig } from '../../src/signer/config.ts';
import { openAuditLog, verifyAuditLines } from '../../src/signer/policy/auditLog.ts';
import { type Call, readTransaction } from '../../src/signer/policy/calls.ts';
import { type RouteAmounts, UNCAPPED, capOf } from '../../src/signer/policy/caps.ts';
import type { RouteRecords } from '../../src/signer/policy/routeFacts.ts';
import { type PolicyContracts, type RouteFacts, decideTransaction } from '../../src/signer/policy/rules.ts';
import { createSpendingPolicy } from '../../src/signer/policy/spendingPolicy.ts';
import { createLocalSigner } from '../../src/signer/local.ts';
import { SignerRefusedError, SignerRequestError, createRemoteSigner } from '../../src/signer/remote.ts';
import type { SignerAccount } from '../../src/signer/signer.ts';
import { startSignerServer } from '../../src/signer/signerApi.ts';

const MNEMONIC = 'test test test test test test test test test test test junk';
const keyring = createRouteKeyring(MNEMONIC);
const at = (n: number) => getAddress(`0x${n.toString(16).padStart(40, '0')}`);
const USDC = at(0xa1);
const ENTRYPOINT = at(0xe1);
const MESSENGER = at(0xc1);
const TRANSMITTER = at(0xc2);
const POOL = at(0xb1);
const RECIPIENT = at(0x11);
const ORDER = at(0x22);
const STRANGER = at(0x66);
const gas = at(0x9a);
const relayer = at(0x9b);
const own = keyring.routeAddresses(7);

const contracts: PolicyContracts = {
  entrypoints: [ENTRYPOINT],
  tokenMessengers: [MESSENGER],
  messageTransmitters: [TRANSMITTER],
  gasAccount: gas,
  poolRelayer: relayer,
  topUpCap: () => 10n ** 17n,
  txFeeCap: () => 10n ** 16n,
};
const route: RouteFacts = {
  routeId: 'rt_7',
  accountIndex: 7,
  own,
  payees: [RECIPIENT, ORDER],
  capOf: (_chainId, token) => (token === USDC ? 1_000_000n : undefined),
  precommitments: [77n],
  nullifierHashes: [5n],
};
/** A route of native ETH in (Relay's zero address): its cap of the native currency is 10 wei. */
const nativeRoute: RouteFacts = { ...route, capOf: (_chainId, token) => (token === zeroAddress ? 10n : undefined) };
const burn = (change: Partial<Extract<Call, { kind: 'burn' }>> = {}): Call => ({
  kind: 'burn',
  messenger: MESSENGER,
  token: USDC,
  amount: 9n,
  mintRecipient: RECIPIENT,
  mintRecipientPadded: true,
  anyCaller: true,
  ...change,
});
const poolDeposit = (precommitment = 77n): Call => ({ kind: 'poolDeposit', entrypoint: ENTRYPOINT, asset: USDC, amount: 9n, precommitment });

const transfer = (to: Address, amount: bigint): Call => ({ kind: 'transfer', token: USDC, to, amount });
const relayCall = (recipient: Address, feeRecipient = relayer, nullifierHash = 5n): Call => ({
  kind: 'relay',
  entrypoint: ENTRYPOINT,
  processooor: ENTRYPOINT,
  recipient,
  feeRecipient,
  nullifierHash,
});

describe('the spending policy: rules', () => {
  const cases: [string, SignerAccount, Call, RouteFacts | undefined, string | true][] = [
    ['deposit account pays a planned bridge order', { role: 'deposit', index: 7 }, transfer(ORDER, 1_000_000n), route, true],
    ['deposit account pays its own hub account', { role: 'deposit', index: 7 }, transfer(own.hub, 5n), route, true],
    ['a token sent to an address no route planned', { role: 'deposit', index: 7 }, transfer(STRANGER, 5n), route, 'payee-not-planned'],
    ['more than the route records', { role: 'exit', index: 7 }, transfer(RECIPIENT, 1_000_001n), route, 'above-cap'],
    [
      'a token the route never recorded',
      { role: 'exit', index: 7 },
      { kind: 'transfer', token: STRANGER, to: RECIPIENT, amount: 1n },
      route,
      'no-recorded-amount',
    ],
    ['an account of no route', { role: 'hub', index: 8 }, transfer(RECIPIENT, 1n), undefined, 'unknown-route-account'],
    ['approve the Entrypoint', { role: 'hub', index: 7 }, { kind: 'approve', token: USDC, spender: ENTRYPOINT, amount: 10n }, route, true],
    ['approve a stranger', { role: 'hub', index: 7 }, { kind: 'approve', token: USDC, spender: STRANGER, amount: 10n }, route, 'spender-not-allowed'],
    ['burn to the recipient', { role: 'exit', index: 7 }, burn(), route, true],
    ['burn to a stranger', { role: 'exit', index: 7 }, burn({ mintRecipient: STRANGER }), route, 'payee-not-planned'],
    ['burn on another contract', { role: 'exit', index: 7 }, burn({ messenger: STRANGER }), route, 'contract-not-allowed'],
    ['burn that names who may mint', { role: 'exit', index: 7 }, burn({ anyCaller: false }), route, 'burn-not-plain'],
    ['burn to a recipient that is no EVM address', { role: 'exit', index: 7 }, burn({ mintRecipientPadded: false }), route, 'burn-not-plain'],
    ['pool deposit from the hub account', { role: 'hub', index: 7 }, poolDeposit(), route, true],
    ['pool deposit with a precommitment the signer never derived', { role: 'hub', index: 7 }, poolDeposit(78n), route, 'precommitment-not-the-routes'],
    ['pool deposit from the deposit account', { role: 'deposit', index: 7 }, poolDeposit(), route, 'call-not-allowed'],
    ['ragequit from the hub account', { role: 'hub', index: 7 }, { kind: 'ragequit', pool: POOL }, route, true],
    ['native value from a route account', { role: 'exit', index: 7 }, { kind: 'native', to: RECIPIENT, value: 1n }, route, 'call-not-allowed'],
    [
      'native value from the deposit account of a route of an ERC-20',
      { role: 'deposit', index: 7 },
      { kind: 'native', to: RECIPIENT, value: 1n },
      route,
      'no-recorded-amount',
    ],
    [
      'native value from the deposit account of a native route to its order',
      { role: 'deposit', index: 7 },
      { kind: 'native', to: ORDER, value: 10n },
      nativeRoute,
      true,
    ],
    ['native value from it above the cap', { role: 'deposit', index: 7 }, { kind: 'native', to: ORDER, value: 11n }, nativeRoute, 'above-cap'],
    ['native value from it to a stranger', { role: 'deposit', index: 7 }, { kind: 'native', to: STRANGER, value: 1n }, nativeRoute, 'payee-not-planned'],
    [
      'native value from the exit account of a native route',
      { role: 'exit', index: 7 },
      { kind: 'native', to: ORDER, value: 1n },
      nativeRoute,
      'call-not-allowed',
    ],
    ['an unknown function', { role: 'exit', index: 7 }, { kind: 'other', to: USDC, selector: '0x23b872dd', value: 0n }, route, 'call-not-allowed'],
    ['a cancel (0-value self-send)', { role: 'exit', index: 7 }, { kind: 'cancel' }, route, true],
    ['gas top-up of a route account', { role: 'gas' }, { kind: 'native', to: own.deposit, value: 10n ** 16n }, route, true],
    ['gas top-up above the cap', { role: 'gas' }, { kind: 'native', to: own.deposit, value: 10n ** 18n }, route, 'top-up-above-cap'],
    ['gas to a stranger', { role: 'gas' }, { kind: 'native', to: STRANGER, value: 1n }, undefined, 'top-up-not-to-route-account'],
    ["gas to a route's recipient (not its own account)", { role: 'gas' }, { kind: 'native', to: RECIPIENT, value: 1n }, route, 'top-up-not-to-route-account'],
    ['gas account calls a token', { role: 'gas' }, transfer(RECIPIENT, 1n), undefined, 'call-not-allowed'],
    ['gas account mints a burn', { role: 'gas' }, { kind: 'mint', transmitter: TRANSMITTER }, undefined, true],
    ['relay to a planned order', { role: 'poolRelayer' }, relayCall(ORDER), route, true],
    ['relay to an exit account', { role: 'poolRelayer' }, relayCall(own.exit), route, true],
    ['relay to a stranger', { role: 'poolRelayer' }, relayCall(STRANGER), undefined, 'payee-not-planned'],
    ['relay fee to another account', { role: 'poolRelayer' }, relayCall(ORDER, STRANGER), route, 'relay-fee-recipient'],
    ["relay spending another note than the paid route's", { role: 'poolRelayer' }, relayCall(ORDER, relayer, 6n), route, 'withdrawal-not-the-routes'],
    ['relay by the gas account', { role: 'gas' }, relayCall(ORDER), route, 'call-not-allowed'],
  ];
  for (const [name, account, call, facts, expected] of cases) {
    test(name, () => {
      const verdict = decideTransaction({ account, chainId: 1, call, maxFee: 10n ** 15n }, facts, contracts);
      if (expected === true) assert.deepEqual(verdict.allow, true, JSON.stringify(verdict));
      else assert.equal(verdict.allow === false && verdict.rule, expected);
    });
  }
  test('an income sweep: only to the configured treasury, only of a change note whose secrets the signer gave', () => {
    const TREASURY = at(0x77);
    const withTreasury: PolicyContracts = { ...contracts, incomeTreasury: TREASURY };
    const decide = (call: Call, spendsChangeNote: boolean | undefined, c = withTreasury) =>
      decideTransaction(
        { account: { role: 'poolRelayer', index: 1 }, chainId: 1, call, maxFee: 10n ** 15n },
        undefined,
        c,
        spendsChangeNote === undefined ? undefined : { spendsChangeNote },
      );
    assert.equal(decide(relayCall(TREASURY), true).allow, true);
    const refusedRule = (verdict: ReturnType<typeof decide>) => verdict.allow === false && verdict.rule;
    assert.equal(refusedRule(decide(relayCall(TREASURY), false)), 'sweep-not-a-change-note');
    assert.equal(refusedRule(decide(relayCall(TREASURY), undefined)), 'sweep-not-a-change-note');
    assert.equal(refusedRule(decide(relayCall(TREASURY, STRANGER), true)), 'relay-fee-recipient');
    // No treasury configured: the treasury is a stranger like any other.
    assert.equal(refusedRule(decide(relayCall(TREASURY), true, contracts)), 'payee-not-planned');
    assert.equal(refusedRule(decide(relayCall(STRANGER), true)), 'payee-not-planned');
  });
  test("a chain the signer does not serve is refused; without a list, any chain; mainnet lists its profile's chains", () => {
    const served: PolicyContracts = { ...contracts, chainIds: [1, 8453] };
    const on = (chainId: number, c = served) => decideTransaction({ account: { role: 'gas' }, chainId, call: { kind: 'cancel' }, maxFee: 0n }, undefined, c);
    assert.equal(on(8453).allow, true);
    const refused = on(56);
    assert.equal(refused.allow === false && refused.rule, 'chain-not-served');
    assert.equal(on(56, contracts).allow, true);
    const mainnetEnv = {
      NETWORK: 'mainnet',
      SIGNER_KEYS: 'pkcs11',
      SIGNER_PKCS11_TOKEN: 't',
      SIGNER_PKCS11_PIN: '12345678',
      SIGNER_AUTH_TOKEN: 'x'.repeat(32),
      SIGNER_DATABASE_URL: 'postgres://x/y',
      SIGNER_AUDIT_LOG: '/tmp/audit.log',
      PRIVACY_POOLS_ENTRYPOINT: ENTRYPOINT,
    };
    const mainnet = loadSignerConfig(mainnetEnv);
    assert.ok(mainnet.SIGNER_CHAIN_IDS?.includes(1) && mainnet.SIGNER_CHAIN_IDS.includes(8453), JSON.stringify(mainnet.SIGNER_CHAIN_IDS));
    const named = loadSignerConfig({ ...mainnetEnv, SIGNER_CHAIN_IDS: '8453, 42161' });
    assert.deepEqual(named.SIGNER_CHAIN_IDS, [8453, 42161]);
  });
  test('a transaction without a chain id is refused', () => {
    const verdict = decideTransaction({ account: { role: 'gas' }, chainId: undefined, call: { kind: 'cancel' }, maxFee: 0n }, undefined, contracts);
    assert.equal(verdict.allow === false && verdict.rule, 'no-chain-id');
  });
  test('fees are value: even a cancel that may pay more than the fee cap is refused', () => {
    const verdict = decideTransaction({ account: { role: 'gas' }, chainId: 1, call: { kind: 'cancel' }, maxFee: 10n ** 16n + 1n }, undefined, contracts);
    assert.equal(verdict.allow === false && verdict.rule, 'fee-above-cap');
    assert.equal(decideTransaction({ account: { role: 'gas' }, chainId: 1, call: { kind: 'cancel' }, maxFee: 10n ** 16n }, undefined, contracts).allow, true);
  });
});

describe('the spending policy: reading a transaction', () => {
  const from = own.exit;
  const tx = (to: Address, data?: Hex, value = 0n) =>
    serializeTransaction({ chainId: 31337, type: 'eip1559', to, data, value, nonce: 0, gas: 100_000n, maxFeePerGas: 1n, maxPriorityFeePerGas: 1n });
  const relayData = encodeAbiParameters(relayDataParameters, [{ recipient: ORDER, feeRecipient: relayer, relayFeeBPS: 10n }]);
  const proof = {
    pA: [1n, 2n],
    pB: [
      [1n, 2n],
      [3n, 4n],
    ],
    pC: [1n, 2n],
    pubSignals: [1n, 2n, 3n, 4n, 5n, 6n, 7n, 8n],
  } as const;
  const cases: [string, Hex, Partial<Call> & { kind: Call['kind'] }][] = [
    [
      'transfer',
      tx(USDC, encodeFunctionData({ abi: erc20Abi, functionName: 'transfer', args: [RECIPIENT, 5n] })),
      { kind: 'transfer', to: RECIPIENT, amount: 5n },
    ],
    ['approve', tx(USDC, encodeFunctionData({ abi: erc20Abi, functionName: 'approve', args: [ENTRYPOINT, 5n] })), { kind: 'approve', spender: ENTRYPOINT }],
    [
      'depositForBurn',
      tx(MESSENGER, encodeFunctionData({ abi: tokenMessengerV2Abi, functionName: 'depositForBurn', args: [9n, 6, pad(RECIPIENT), USDC, pad('0x'), 1n, 1000] })),
      { kind: 'burn', mintRecipient: RECIPIENT, amount: 9n, token: USDC, mintRecipientPadded: true, anyCaller: true },
    ],
    [
      'receiveMessage',
      tx(TRANSMITTER, encodeFunctionData({ abi: messageTransmitterV2Abi, functionName: 'receiveMessage', args: ['0x01', '0x02'] })),
      { kind: 'mint' },
    ],
    [
      'Entrypoint.deposit',
      tx(ENTRYPOINT, encodeFunctionData({ abi: entrypointAbi, functionName: 'deposit', args: [USDC, 9n, 1n] })),
      { kind: 'poolDeposit', asset: USDC, amount: 9n },
    ],
    [
      'Entrypoint.relay',
      tx(ENTRYPOINT, encodeFunctionData({ abi: entrypointAbi, functionName: 'relay', args: [{ processooor: ENTRYPOINT, data: relayData }, proof, 1n] })),
      { kind: 'relay', recipient: ORDER, feeRecipient: relayer, nullifierHash: 2n },
    ],
    [
      'ragequit',
      tx(POOL, encodeFunctionData({ abi: poolAbi, functionName: 'ragequit', args: [{ ...proof, pubSignals: [1n, 2n, 3n, 4n] }] })),
      { kind: 'ragequit', pool: POOL },
    ],
    ['a cancel', tx(from), { kind: 'cancel' }],
    ['native value', tx(RECIPIENT, undefined, 5n), { kind: 'native', to: RECIPIENT, value: 5n }],
    [
      'transferFrom',
      tx(USDC, encodeFunctionData({ abi: erc20Abi, functionName: 'transferFrom', args: [RECIPIENT, STRANGER, 5n] })),
      { kind: 'other', selector: '0x23b872dd' },
    ],
    ['a call with value', tx(USDC, encodeFunctionData({ abi: erc20Abi, functionName: 'transfer', args: [RECIPIENT, 5n] }), 1n), { kind: 'other', value: 1n }],
  ];
  test('a set-code (EIP-7702) transaction is never one of the calls, even as a self-send', () => {
    const setCode = serializeTransaction({
      chainId: 31337,
      type: 'eip7702',
      to: from,
      nonce: 0,
      gas: 100_000n,
      maxFeePerGas: 1n,
      maxPriorityFeePerGas: 1n,
      authorizationList: [{ address: STRANGER, chainId: 31337, nonce: 1, r: pad('0x01'), s: pad('0x02'), yParity: 0 }],
    });
    assert.equal(readTransaction(setCode, from).call.kind, 'other');
  });
  for (const [name, serialized, expected] of cases) {
    test(name, () => {
      const read = readTransaction(serialized, from);
      assert.equal(read.chainId, 31337);
      for (const [key, value] of Object.entries(expected)) assert.deepEqual((read.call as Record<string, unknown>)[key], value, `${name}: ${key}`);
    });
  }
});

describe('the spending policy: caps from the quote and the records', () => {
  const HUB_USDC = at(0xa2);
  const DEST_WETH = at(0xa3);
  const base: RouteAmounts = {
    sourceChainId: 1,
    hubChainId: 2,
    destChainId: 3,
    tokens: { source: USDC, hub: HUB_USDC, dest: DEST_WETH },
    decimals: { source: 6, hub: 6, dest: 18 },
    symbols: { source: 'USDC', hub: 'USDC', dest: 'WETH' },
    amount: 250_000_000n,
    quotedOutputAmount: 10n ** 17n,
    funded: 251_000_000n,
    orders: [{ leg: 'out', amountIn: 248_000_000n, amountOut: 99n * 10n ** 15n }],
    ledger: [{ chainId: 2, token: HUB_USDC, amount: 249_000_000n }],
    strays: [at(0x5a)],
  };
  const cases: [string, number, Address, bigint | undefined][] = [
    ['source token: what funded it, above the quote', 1, USDC, 251_000_000n],
    ['hub token: the same asset on another chain counts', 2, HUB_USDC, 251_000_000n],
    ['destination token of another asset: its own amounts only', 3, DEST_WETH, 10n ** 17n],
    ['a stray token: the payee rule alone', 1, at(0x5a), UNCAPPED],
    ['a token on a chain the route does not use', 4, USDC, undefined],
  ];
  for (const [name, chainId, token, expected] of cases) test(name, () => assert.equal(capOf(base, chainId, token), expected));
  test('decimals scale within one asset', () => {
    assert.equal(capOf({ ...base, decimals: { source: 6, hub: 18, dest: 18 }, funded: 0n, ledger: [], orders: [] }, 2, HUB_USDC), 250n * 10n ** 18n);
  });
});

describe('the audit log', () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'signer-audit-'));
  });
  after(() => rm(dir, { recursive: true, force: true }));

  test('chains every entry to the one before; an edit, a dropped line or a swap is found; a reopened log continues the chain', async () => {
    const file = path.join(dir, 'audit.log');
    const log = await openAuditLog(file);
    await Promise.all([1, 2, 3].map((n) => log.append({ verdict: 'signed', request: 'sign-transaction', account: `exit account ${n}`, chainId: 1 })));
    await log.close();
    const again = await openAuditLog(file);
    await again.append({ verdict: 'refused', request: 'sign-transaction', rule: 'payee-not-planned', reason: 'x' });
    await again.close();
    const lines = (await readFile(file, 'utf8')).trim().split('\n');
    assert.equal(lines.length, 4);
    assert.deepEqual(verifyAuditLines(lines), { ok: true, entries: 4 });
    assert.deepEqual(
      lines.map((l) => (JSON.parse(l) as { seq: number }).seq),
      [1, 2, 3, 4],
    );

    const edited = [...lines];
    edited[1] = edited[1]!.replace('exit account', 'hub account');
    assert.match(String((verifyAuditLines(edited) as { problem: string }).problem), /line 2 .* was changed/);
    assert.equal(verifyAuditLines([lines[0]!, lines[2]!, lines[3]!]).ok, false);
    assert.equal(verifyAuditLines([lines[1]!, lines[0]!, lines[2]!, lines[3]!]).ok, false);

    // A log whose last line is cut off (a crash inside a write) is not continued blindly.
    await writeFile(file, `${lines.join('\n')}\n{"seq":5,"at"`);
    await assert.rejects(openAuditLog(file), /does not end in a whole entry/);
  });

  test("one signer per audit log: a running one holds it; a dead one's lock is taken over; closing releases it", async () => {
    const file = path.join(dir, 'locked.log');
    // Another running signer (a process whose command line names it) holds the lock.
    const other = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60_000)', 'signer'], { stdio: 'ignore' });
    try {
      await writeFile(`${file}.lock`, String(other.pid));
      await assert.rejects(openAuditLog(file), new RegExp(`another signer \\(pid ${other.pid}\\) writes the audit log`));
    } finally {
      other.kill('SIGKILL');
      await new Promise((resolve) => other.once('exit', resolve));
    }
    // Killed: its lock is stale, and the next signer takes it over.
    const log = await openAuditLog(file);
    assert.equal((await readFile(`${file}.lock`, 'utf8')).trim(), String(process.pid));
    await log.close();
    await assert.rejects(readFile(`${file}.lock`, 'utf8'), /ENOENT/);
  });
});

describe('the signer process with its policy', { timeout: 30_000 }, () => {
  const TOKEN = 'signer-policy-test-token-0123456789abcdef';
  let server: HttpServer;
  let dir: string;
  const local = createLocalSigner({ mnemonic: MNEMONIC, gasPrivateKey: DEVNET_ACCOUNTS.gas, poolRelayerPrivateKey: DEVNET_ACCOUNTS.poolRelayer });
  const records: RouteRecords = {
    routeOfIndex: async (index) => (index === 7 ? route : undefined),
    routeOfAddress: async (address) => ([...Object.values(own), RECIPIENT, ORDER].includes(address) ? route : undefined),
    routesOfAddress: async (address) => ([...Object.values(own), RECIPIENT, ORDER].includes(address) ? [route] : []),
    noteWithLabel: async (label) => (label === 42n ? { routeId: 'rt_7' } : undefined),
    changeNoteAt: async (label, generation) => (label === 42n && generation === 1 ? { routeId: 'rt_7' } : undefined),
    close: async () => {},
  };
  before(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'signer-policy-'));
    const audit = await openAuditLog(path.join(dir, 'audit.log'));
    const policy = createSpendingPolicy({
      records,
      audit,
      contracts,
      rateLimits: { noteSecrets: 4 },
      now: () => 0,
      noteKeysOf: async (scope, index) => ({ precommitment: scope * 1000n + index, nullifierHash: scope * 1000n + index + 500_000n }),
    });
    server = await startSignerServer(local, { authToken: TOKEN, logger: createLogger({ level: 'error' }), host: '127.0.0.1', port: 0, policy });
  });
  after(async () => {
    await server?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  test('refuses off-plan requests with a typed error, signs planned ones, and logs both in a chain that verifies', async () => {
    const remote = createRemoteSigner({ url: server.url, authToken: TOKEN });
    const unsigned = (to: Address) =>
      serializeTransaction({
        chainId: 31337,
        type: 'eip1559',
        to: USDC,
        data: encodeFunctionData({ abi: erc20Abi, functionName: 'transfer', args: [to, 5n] }),
        nonce: 0,
        gas: 100_000n,
        maxFeePerGas: 1n,
        maxPriorityFeePerGas: 1n,
      });
    const exit7: SignerAccount = { role: 'exit', index: 7 };
    assert.match(await remote.signTransaction(exit7, unsigned(RECIPIENT)), /^0x02/);
    const refusal = await remote.signTransaction(exit7, unsigned(STRANGER)).catch((e: unknown) => e);
    assert.ok(refusal instanceof SignerRefusedError, String(refusal));
    assert.equal(refusal.rule, 'payee-not-planned');
    // Another route's account, a contract outside the allowlist, another route's note.
    assert.equal(
      ((await remote.signTransaction({ role: 'exit', index: 8 }, unsigned(RECIPIENT)).catch((e) => e)) as SignerRefusedError).rule,
      'unknown-route-account',
    );
    const approveStranger = serializeTransaction({
      chainId: 31337,
      type: 'eip1559',
      to: USDC,
      data: encodeFunctionData({ abi: erc20Abi, functionName: 'approve', args: [STRANGER, 5n] }),
      nonce: 0,
      gas: 100_000n,
      maxFeePerGas: 1n,
      maxPriorityFeePerGas: 1n,
    });
    assert.equal(
      ((await remote.signTransaction({ role: 'hub', index: 7 }, approveStranger).catch((e) => e)) as SignerRefusedError).rule,
      'spender-not-allowed',
    );
    assert.equal(((await remote.depositSecrets(1n, 8n).catch((e) => e)) as SignerRefusedError).rule, 'note-of-no-route');
    assert.equal(((await remote.withdrawalSecrets(41n, 0n).catch((e) => e)) as SignerRefusedError).rule, 'note-of-no-route');
    // Before the signer derived the route's note secrets it cannot tell its precommitment: not ready (503, retried), no refusal.
    const early = serializeTransaction({
      chainId: 31337,
      type: 'eip1559',
      to: ENTRYPOINT,
      data: encodeFunctionData({ abi: entrypointAbi, functionName: 'deposit', args: [USDC, 9n, 1007n] }),
      nonce: 0,
      gas: 100_000n,
      maxFeePerGas: 1n,
      maxPriorityFeePerGas: 1n,
    });
    const notReady = await remote.signTransaction({ role: 'hub', index: 7 }, early).catch((e: unknown) => e);
    assert.ok(notReady instanceof SignerRequestError && !(notReady instanceof SignerRefusedError) && notReady.status === 503, String(notReady));
    await remote.depositSecrets(1n, 7n);
    await remote.withdrawalSecrets(42n, 0n);
    // The hub's pool deposit: only with the precommitment of the secrets just handed out for its index (here 1 × 1000 + 7).
    const poolDeposit = (precommitment: bigint) =>
      serializeTransaction({
        chainId: 31337,
        type: 'eip1559',
        to: ENTRYPOINT,
        data: encodeFunctionData({ abi: entrypointAbi, functionName: 'deposit', args: [USDC, 9n, precommitment] }),
        nonce: 0,
        gas: 100_000n,
        maxFeePerGas: 1n,
        maxPriorityFeePerGas: 1n,
      });
    assert.match(await remote.signTransaction({ role: 'hub', index: 7 }, poolDeposit(1007n)), /^0x02/);
    // The relayer's withdrawal to route 7's bridge order: only spending route 7's own note (nullifier hash 501007 here).
    const relay = (nullifierHash: bigint) =>
      serializeTransaction({
        chainId: 31337,
        type: 'eip1559',
        to: ENTRYPOINT,
        data: encodeFunctionData({
          abi: entrypointAbi,
          functionName: 'relay',
          args: [
            { processooor: ENTRYPOINT, data: encodeAbiParameters(relayDataParameters, [{ recipient: ORDER, feeRecipient: relayer, relayFeeBPS: 10n }]) },
            {
              pA: [1n, 2n],
              pB: [
                [1n, 2n],
                [3n, 4n],
              ],
              pC: [1n, 2n],
              pubSignals: [1n, nullifierHash, 3n, 4n, 5n, 6n, 7n, 8n],
            },
            1n,
          ],
        }),
        nonce: 0,
        gas: 100_000n,
        maxFeePerGas: 1n,
        maxPriorityFeePerGas: 1n,
      });
    assert.match(await remote.signTransaction({ role: 'poolRelayer' }, relay(501_007n)), /^0x02/);
    // Another of the relayer's sending accounts: the same rules, its own address; one the signer does not have is a 400.
    const { poolRelayerAddresses } = await local.publicKeys();
    assert.equal(
      await recoverTransactionAddress({
        serializedTransaction: (await remote.signTransaction({ role: 'poolRelayer', index: 2 }, relay(501_007n))) as `0x02${string}`,
      }),
      poolRelayerAddresses[2],
    );
    assert.match(
      String(await remote.signTransaction({ role: 'poolRelayer', index: 3 }, relay(501_007n)).catch((e) => e)),
      /invalid request: the signer has 3 relay senders; 3 is none of them/,
    );
    assert.equal(
      ((await remote.signTransaction({ role: 'poolRelayer' }, relay(501_008n)).catch((e) => e)) as SignerRefusedError).rule,
      'withdrawal-not-the-routes',
    );
    assert.equal(
      ((await remote.signTransaction({ role: 'hub', index: 7 }, poolDeposit(1008n)).catch((e) => e)) as SignerRefusedError).rule,
      'precommitment-not-the-routes',
    );
    // The fifth note-secrets request this minute: above the rate limit of 4.
    assert.equal(((await remote.depositSecrets(1n, 7n).catch((e) => e)) as SignerRefusedError).rule, 'rate-limited');

    const lines = (await readFile(path.join(dir, 'audit.log'), 'utf8')).trim().split('\n');
    assert.deepEqual(verifyAuditLines(lines), { ok: true, entries: 14 });
    const verdicts = lines.map((l) => JSON.parse(l) as { verdict: string; rule?: string });
    assert.deepEqual(
      verdicts.map((v) => v.rule ?? v.verdict),
      [
        'signed',
        'payee-not-planned',
        'unknown-route-account',
        'spender-not-allowed',
        'note-of-no-route',
        'note-of-no-route',
        'answered',
        'answered',
        'signed',
        'signed',
        'signed',
        'withdrawal-not-the-routes',
        'precommitment-not-the-routes',
        'rate-limited',
      ],
    );
    // No secret in the log: no signature, no note secret, no token.
    const text = lines.join('\n');
    assert.doesNotMatch(text, new RegExp(TOKEN));
    assert.doesNotMatch(text, /"(signedTransaction|nullifier|secret)"/);
  });
});
