import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { generateDepositSecrets, generateWithdrawalSecrets, type Hash } from '@0xbow/privacy-pools-core-sdk';
import { parseEther, recoverTransactionAddress, serializeTransaction, type Hex, type TransactionSerializableEIP1559 } from 'viem';
import { english, generateMnemonic, HDKey, privateKeyToAccount } from 'viem/accounts';
import {
  createRouteAddressBook,
  createRouteKeyring,
  MAX_ACCOUNT_INDEX,
  parseXpub,
  ROUTE_ACCOUNT_ROLES,
  roleAccountPath,
} from '../../src/accounts/routeAccounts.ts';
import { API_FORBIDDEN_SECRETS, ConfigError, describeConfig, loadConfig } from '../../src/config.ts';
import { DEVNET_ACCOUNTS } from '../../devnet/chains.ts';
import { createLogger } from '../../src/logger.ts';
import type { HttpServer } from '../../src/observability/http.ts';
import { signerAccounts } from '../../src/signer/accounts.ts';
import { loadSignerConfig } from '../../src/signer/config.ts';
import { createLocalSigner } from '../../src/signer/local.ts';
import { createRemoteSigner, SignerRequestError } from '../../src/signer/remote.ts';
import { startSignerServer } from '../../src/signer/signerApi.ts';

const MNEMONIC = generateMnemonic(english);
const TOKEN = 'signer-test-token-0123456789abcdef-0123456789';
const keyring = createRouteKeyring(MNEMONIC);
const keys = { mnemonic: MNEMONIC, gasPrivateKey: DEVNET_ACCOUNTS.gas, poolRelayerPrivateKey: DEVNET_ACCOUNTS.poolRelayer };

/** Enough of an environment for loadConfig to get to the key checks. */
const BASE_ENV = {
  DATABASE_URL: 'postgres://localhost/none',
  HUB_CHAIN_ID: '1',
  CHAIN_RPC_URLS: '{"1":"http://127.0.0.1:1"}',
  PRIVACY_POOLS_ENTRYPOINT: '0x0000000000000000000000000000000000000001',
  PAYLOAD_CODEC: 'off',
  WEBHOOK_SIGNING_SECRET: 'w'.repeat(32),
};
const xpubEnv = () => {
  const xpubs = keyring.xpubs();
  return { DEPOSIT_ACCOUNT_XPUB: xpubs.deposit, HUB_ACCOUNT_XPUB: xpubs.hub };
};
const SECRET_VALUES: Record<(typeof API_FORBIDDEN_SECRETS)[number], string> = {
  SIGNER_MNEMONIC: MNEMONIC,
  GAS_ACCOUNT_PRIVATE_KEY: DEVNET_ACCOUNTS.gas,
  POOL_RELAYER_PRIVATE_KEY: DEVNET_ACCOUNTS.poolRelayer,
  SIGNER_AUTH_TOKEN: TOKEN,
};

describe('route addresses from xpubs', () => {
  test('equal the mnemonic-derived accounts for every role at several indexes, the largest included', () => {
    const book = createRouteAddressBook(keyring.xpubs());
    for (const index of [0, 1, 2, 17, 1000, 123_456, MAX_ACCOUNT_INDEX]) {
      const fromMnemonic = keyring.routeAccounts(index);
      const fromXpubs = book.routeAddresses(index);
      for (const role of ROUTE_ACCOUNT_ROLES) assert.equal(fromXpubs[role], fromMnemonic[role].address, `${role} ${index}`);
    }
    assert.throws(() => book.routeAddresses(MAX_ACCOUNT_INDEX + 1), /account index 2147483648 cannot be derived/);
  });

  test("each xpub is the public key of its hardened account m/44'/60'/r' and no private one is accepted", () => {
    const xpubs = keyring.xpubs();
    assert.deepEqual(ROUTE_ACCOUNT_ROLES.map(roleAccountPath), ["m/44'/60'/1'", "m/44'/60'/2'", "m/44'/60'/3'"]);
    assert.equal(new Set(Object.values(xpubs)).size, 3);
    for (const xpub of Object.values(xpubs)) assert.equal(parseXpub(xpub).privateKey, null);
    const xprv = HDKey.fromMasterSeed(new Uint8Array(64).fill(7)).derive("m/44'/60'/1'").privateExtendedKey;
    assert.throws(() => parseXpub(xprv), /extended public key starting with "xpub"/);
  });
});

describe('configuration by component', () => {
  test('the API refuses each private key and the signer token, naming the variable and never its value', () => {
    for (const name of API_FORBIDDEN_SECRETS) {
      const error = (() => {
        try {
          loadConfig({ ...BASE_ENV, ...xpubEnv(), [name]: SECRET_VALUES[name] }, 'api');
        } catch (e) {
          return e;
        }
        return assert.fail(`the API accepted ${name}`);
      })();
      assert.ok(error instanceof ConfigError);
      assert.match(
        error.message,
        new RegExp(`the API holds no private key: remove ${name} from its environment; give it the xpubs DEPOSIT_ACCOUNT_XPUB, HUB_ACCOUNT_XPUB`),
      );
      assert.ok(!error.message.includes(SECRET_VALUES[name]));
    }
  });

  test('the API needs the deposit and hub xpubs, refuses the exit one, and never prints them', () => {
    const { HUB_ACCOUNT_XPUB: _hub, ...withoutHub } = xpubEnv();
    assert.throws(() => loadConfig({ ...BASE_ENV, ...withoutHub }, 'api'), /HUB_ACCOUNT_XPUB must be set/);
    const config = loadConfig({ ...BASE_ENV, ...xpubEnv() }, 'api');
    assert.equal(config.DEPOSIT_ACCOUNT_XPUB, keyring.xpubs().deposit);
    assert.equal(config.SIGNER_MNEMONIC, undefined);
    const printed = JSON.stringify(describeConfig(config));
    for (const xpub of Object.values(keyring.xpubs())) assert.ok(!printed.includes(xpub));
    assert.throws(
      () => loadConfig({ ...BASE_ENV, ...xpubEnv(), HUB_ACCOUNT_XPUB: 'xpubnotone' }, 'api'),
      /HUB_ACCOUNT_XPUB: must be a BIP-32 extended public key/,
    );
    // The exit accounts receive the withdrawals: their xpub next to the deposit one would link every route.
    assert.throws(() => loadConfig({ ...BASE_ENV, ...xpubEnv(), EXIT_ACCOUNT_XPUB: keyring.xpubs().exit }, 'api'), /remove EXIT_ACCOUNT_XPUB from the API/);
  });

  test('the worker signs through the signer process or, in development, local keys: one of the two, complete', () => {
    const local = { SIGNER_MNEMONIC: MNEMONIC, GAS_ACCOUNT_PRIVATE_KEY: DEVNET_ACCOUNTS.gas, POOL_RELAYER_PRIVATE_KEY: DEVNET_ACCOUNTS.poolRelayer };
    const remote = { SIGNER_URL: 'http://127.0.0.1:3100', SIGNER_AUTH_TOKEN: TOKEN };
    assert.equal(loadConfig({ ...BASE_ENV, ...remote }, 'worker').SIGNER_URL, 'http://127.0.0.1:3100');
    assert.equal(loadConfig({ ...BASE_ENV, ...local }, 'worker').SIGNER_MNEMONIC, MNEMONIC);
    assert.throws(() => loadConfig({ ...BASE_ENV, ...remote, ...local }, 'worker'), /either through the signer process .* or with local keys/);
    assert.throws(() => loadConfig({ ...BASE_ENV, SIGNER_URL: remote.SIGNER_URL }, 'worker'), /SIGNER_URL and SIGNER_AUTH_TOKEN must both be set/);
    assert.throws(() => loadConfig({ ...BASE_ENV, SIGNER_MNEMONIC: MNEMONIC }, 'worker'), /the worker needs a signer/);
    assert.throws(() => loadConfig({ ...BASE_ENV, ...remote, SIGNER_AUTH_TOKEN: 'short' }, 'worker'), /SIGNER_AUTH_TOKEN: must be at least 32 characters/);
  });

  test('the signer process needs its keys and a token; its errors never quote them', () => {
    const env = {
      SIGNER_MNEMONIC: MNEMONIC,
      GAS_ACCOUNT_PRIVATE_KEY: DEVNET_ACCOUNTS.gas,
      POOL_RELAYER_PRIVATE_KEY: DEVNET_ACCOUNTS.poolRelayer,
      SIGNER_AUTH_TOKEN: TOKEN,
      SIGNER_DATABASE_URL: 'postgres://route_signer@127.0.0.1/private_route',
      SIGNER_AUDIT_LOG: '/var/lib/private-route/signer-audit.log',
      PRIVACY_POOLS_ENTRYPOINT: '0x6818809EefCe719E480a7526D76bD3e561526b46',
    };
    const config = loadSignerConfig(env);
    assert.equal(config.SIGNER_HOST, '127.0.0.1');
    assert.equal(config.SIGNER_POLICY, 'enforce');
    // The policy is on by default and needs its settings; off is refused on mainnet.
    assert.throws(
      () => loadSignerConfig({ ...env, SIGNER_DATABASE_URL: undefined, SIGNER_AUDIT_LOG: undefined }),
      /needs SIGNER_DATABASE_URL, SIGNER_AUDIT_LOG/,
    );
    assert.equal(loadSignerConfig({ ...env, SIGNER_POLICY: 'off', SIGNER_DATABASE_URL: undefined }).SIGNER_POLICY, 'off');
    assert.throws(() => loadSignerConfig({ ...env, SIGNER_POLICY: 'off', NETWORK: 'mainnet' }), /SIGNER_POLICY=off is refused with NETWORK=mainnet/);
    assert.deepEqual(loadSignerConfig({ ...env, SIGNER_TOP_UP_CAP_WEI: '{"8453":"1000"}' }).SIGNER_TOP_UP_CAP_WEI, { default: 0n, byChain: { '8453': 1000n } });
    assert.throws(() => loadSignerConfig({ ...env, SIGNER_RATE_LIMITS: '{"gas":-1}' }), /SIGNER_RATE_LIMITS: must be JSON/);
    assert.throws(() => loadSignerConfig({ ...env, SIGNER_AUTH_TOKEN: undefined }), /SIGNER_AUTH_TOKEN/);
    assert.throws(
      () => loadSignerConfig({ ...env, GAS_ACCOUNT_PRIVATE_KEY: DEVNET_ACCOUNTS.gas.slice(0, 40) }),
      (e: unknown) =>
        e instanceof ConfigError && /GAS_ACCOUNT_PRIVATE_KEY: must be a 0x-prefixed/.test(e.message) && !e.message.includes(DEVNET_ACCOUNTS.gas.slice(0, 40)),
    );
  });
});

describe('signer process request API', { timeout: 30_000 }, () => {
  let server: HttpServer;
  const logLines: string[] = [];
  before(async () => {
    server = await startSignerServer(createLocalSigner(keys), {
      authToken: TOKEN,
      host: '127.0.0.1',
      port: 0,
      logger: createLogger({ level: 'debug', write: (line) => logLines.push(line) }),
    });
  });
  after(async () => {
    await server?.stop();
  });

  const call = async (path: string, init: { method?: string; token?: string | null; body?: string } = {}) => {
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (init.token !== null) headers.authorization = `Bearer ${init.token ?? TOKEN}`;
    const response = await fetch(`${server.url}${path}`, { method: init.method ?? 'POST', headers, body: init.body });
    return { status: response.status, text: await response.text() };
  };
  const tx = (): TransactionSerializableEIP1559 => ({
    type: 'eip1559',
    chainId: 31337,
    nonce: 3,
    to: '0x00000000000000000000000000000000000000aa',
    value: parseEther('0.01'),
    gas: 21_000n,
    maxFeePerGas: 2_000_000_000n,
    maxPriorityFeePerGas: 1_000_000n,
  });

  test('a missing or wrong token is 401 on every route, before anything else is read', async () => {
    const body = JSON.stringify({ account: { role: 'gas' }, transaction: serializeTransaction(tx()) });
    for (const token of [null, '', 'wrong', TOKEN.slice(0, -1), `${TOKEN}x`]) {
      for (const [method, path] of [
        ['POST', '/v1/sign-transaction'],
        ['GET', '/v1/public-keys'],
        ['POST', '/v1/note-secrets'],
        ['GET', '/nowhere'],
      ] as const) {
        const answer = await call(path, { method, token, body: method === 'POST' ? body : undefined });
        assert.equal(answer.status, 401, `${method} ${path} with ${token}`);
        assert.match(answer.text, /"success":false/);
      }
    }
  });

  test('/healthz answers without a token and says nothing but that it serves', async () => {
    for (const token of [null, 'wrong', TOKEN]) {
      const answer = await call('/healthz', { method: 'GET', token });
      assert.equal(answer.status, 200);
      assert.deepEqual(JSON.parse(answer.text), { status: 'ok' });
    }
  });

  test('malformed requests are 400 and unknown routes 404, in the envelope', async () => {
    const good = serializeTransaction(tx());
    const bad: unknown[] = [
      'not json',
      {},
      { account: { role: 'treasury' }, transaction: good },
      { account: { role: 'deposit' }, transaction: good },
      { account: { role: 'deposit', index: -1 }, transaction: good },
      { account: { role: 'hub', index: 2 ** 31 }, transaction: good },
      { account: { role: 'gas', index: 1 }, transaction: good },
      { account: { role: 'gas' }, transaction: 'deadbeef' },
      { account: { role: 'gas' }, transaction: '0x02zz' },
      { account: { role: 'gas' }, transaction: '0x0102' },
      { account: { role: 'gas' }, transaction: good, extra: 1 },
      // Pre-EIP-155 (no chainId): replayable on every chain, refused.
      { account: { role: 'gas' }, transaction: serializeTransaction({ type: 'legacy', nonce: 1, gasPrice: 1n, gas: 21_000n, to: tx().to, value: 1n }) },
    ];
    for (const body of bad) {
      const answer = await call('/v1/sign-transaction', { body: typeof body === 'string' ? body : JSON.stringify(body) });
      assert.equal(answer.status, 400, `${JSON.stringify(body)}: ${answer.text}`);
      assert.match(answer.text, /^\{"success":false,"error":"/);
    }
    for (const body of [
      { kind: 'deposit', scope: '12' },
      { kind: 'withdrawal', label: '-1', index: '0' },
      { kind: 'master', index: '0' },
      { kind: 'deposit', scope: '1e5', index: '0' },
    ]) {
      assert.equal((await call('/v1/note-secrets', { body: JSON.stringify(body) })).status, 400, JSON.stringify(body));
    }
    assert.equal((await call('/v1/export-mnemonic', { method: 'GET' })).status, 404);
    assert.equal((await call('/v1/public-keys', { method: 'POST', body: '{}' })).status, 404);
  });

  test("signs as the account asked for: the signed transaction recovers to its address; note secrets are the SDK's", async () => {
    const signer = createRemoteSigner({ url: server.url, authToken: TOKEN });
    const publicKeys = await signer.publicKeys();
    assert.deepEqual(publicKeys.xpubs, keyring.xpubs());
    assert.equal(publicKeys.gasAddress, privateKeyToAccount(DEVNET_ACCOUNTS.gas).address);
    assert.equal(publicKeys.poolRelayerAddress, privateKeyToAccount(DEVNET_ACCOUNTS.poolRelayer).address);

    const accounts = signerAccounts(signer, publicKeys);
    const checks = [
      { account: accounts.keyring.routeAccounts(5).deposit, expected: keyring.routeAccounts(5).deposit.address },
      { account: accounts.keyring.routeAccounts(5).hub, expected: keyring.routeAccounts(5).hub.address },
      { account: accounts.keyring.routeAccounts(MAX_ACCOUNT_INDEX).exit, expected: keyring.routeAccounts(MAX_ACCOUNT_INDEX).exit.address },
      { account: accounts.gasAccount, expected: publicKeys.gasAddress },
      { account: accounts.poolRelayer, expected: publicKeys.poolRelayerAddress },
    ];
    for (const { account, expected } of checks) {
      assert.equal(account.address, expected);
      const signed = await account.signTransaction(tx());
      assert.equal(await recoverTransactionAddress({ serializedTransaction: signed as Hex & `0x02${string}` }), expected);
      // The same signature the key itself makes (RFC 6979: deterministic).
    }
    assert.equal(await accounts.keyring.routeAccounts(7).hub.signTransaction(tx()), await keyring.routeAccounts(7).hub.signTransaction(tx()));

    const masterKeys = keyring.poolMasterKeys();
    const scope = 123456789n;
    const deposit = generateDepositSecrets(masterKeys, scope as Hash, 9n);
    assert.deepEqual(await signer.depositSecrets(scope, 9n), { nullifier: deposit.nullifier, secret: deposit.secret });
    const withdrawal = generateWithdrawalSecrets(masterKeys, 987n as Hash, 0n);
    assert.deepEqual(await signer.withdrawalSecrets(987n, 0n), { nullifier: withdrawal.nullifier, secret: withdrawal.secret });

    await assert.rejects(
      createRemoteSigner({ url: server.url, authToken: 'wrong' }).publicKeys(),
      (e: unknown) => e instanceof SignerRequestError && e.status === 401 && /SIGNER_AUTH_TOKEN of the worker and the signer differ/.test(e.message),
    );
  });

  test('no answer or log line carries the mnemonic, a private key, the master keys or the token', async () => {
    const answers = [
      (await call('/v1/public-keys', { method: 'GET' })).text,
      (await call('/v1/sign-transaction', { body: JSON.stringify({ account: { role: 'gas' }, transaction: serializeTransaction(tx()) }) })).text,
      (await call('/v1/sign-transaction', { body: '{"account":{"role":"hub","index":1},"transaction":"0x0102"}' })).text,
      (await call('/v1/sign-transaction', { token: 'wrong', body: '{}' })).text,
    ].join('\n');
    const masterKeys = keyring.poolMasterKeys();
    const secrets = [
      MNEMONIC,
      DEVNET_ACCOUNTS.gas.slice(2),
      DEVNET_ACCOUNTS.poolRelayer.slice(2),
      TOKEN,
      String(masterKeys.masterNullifier),
      String(masterKeys.masterSecret),
    ];
    const everything = `${answers}\n${logLines.join('\n')}`;
    assert.ok(
      logLines.some((line) => line.includes('signed a transaction')),
      'the signer logs what it signed',
    );
    for (const secret of secrets) assert.ok(!everything.includes(secret), 'a secret reached an answer or the log');
  });
});
