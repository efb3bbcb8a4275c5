import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { parseEther, recoverTransactionAddress, serializeTransaction, type TransactionSerializableEIP1559 } from 'viem';
import { english, generateMnemonic } from 'viem/accounts';
import { DEVNET_ACCOUNTS } from '../../devnet/chains.ts';
import { softHsmToken } from '../../devnet/softhsm.ts';
import { createRouteAddressBook, MAX_ACCOUNT_INDEX, ROUTE_ACCOUNT_ROLES } from '../../src/accounts/routeAccounts.ts';
import { ConfigError } from '../../src/config.ts';
import { loadSignerConfig } from '../../src/signer/config.ts';
import { createLocalSigner } from '../../src/signer/local.ts';
import { initialiseToken } from '../../src/signer/pkcs11/setup.ts';
import { openPkcs11Token, type Pkcs11Token } from '../../src/signer/pkcs11/token.ts';
import { createTokenSigner, TOKEN_LABELS } from '../../src/signer/pkcs11/tokenSigner.ts';
import type { Signer, SignerAccount } from '../../src/signer/signer.ts';

// SoftHSM2 reads its configuration once per process (node --test runs each file in its own): one folder, two tokens.
const dir = mkdtempSync(path.join(tmpdir(), 'signer-token-'));
const imported = softHsmToken(path.join(dir, 'imported'));
process.env.SOFTHSM2_CONF = imported.env.SOFTHSM2_CONF;
const MNEMONIC = generateMnemonic(english);
const keys = { mnemonic: MNEMONIC, gasPrivateKey: DEVNET_ACCOUNTS.gas, poolRelayerPrivateKey: DEVNET_ACCOUNTS.poolRelayer };
const settings = (env: Record<string, string>) => ({ module: env.SIGNER_PKCS11_MODULE!, tokenLabel: env.SIGNER_PKCS11_TOKEN!, pin: env.SIGNER_PKCS11_PIN! });

const tx = (nonce: number): TransactionSerializableEIP1559 => ({
  chainId: 31337,
  type: 'eip1559',
  nonce,
  to: '0x000000000000000000000000000000000000dEaD',
  value: parseEther('0.01'),
  gas: 21_000n,
  maxFeePerGas: 2_000_000_000n,
  maxPriorityFeePerGas: 1_000_000_000n,
});
const ACCOUNTS: SignerAccount[] = [
  { role: 'gas' },
  { role: 'poolRelayer' },
  ...ROUTE_ACCOUNT_ROLES.flatMap((role) => [1, 2, 977, MAX_ACCOUNT_INDEX].map((index) => ({ role, index }))),
];

describe('keys in a PKCS#11 token (SoftHSM2)', { timeout: 120_000 }, () => {
  let token: Pkcs11Token;
  let fromToken: Signer;
  const fromEnvironment = createLocalSigner(keys);

  before(() => {
    // As `npm run signer:token -- init --import` does, into a token of its own.
    token = openPkcs11Token(settings(imported.env));
    initialiseToken(token, keys);
    fromToken = createTokenSigner(token);
  });
  after(() => {
    token?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test('an imported mnemonic gives the same accounts, addresses and note secrets as the keys in the environment', async () => {
    const [a, b] = [await fromToken.publicKeys(), await fromEnvironment.publicKeys()];
    assert.equal(a.gasAddress, b.gasAddress);
    assert.equal(a.poolRelayerAddress, b.poolRelayerAddress);
    const [bookA, bookB] = [createRouteAddressBook(a.xpubs), createRouteAddressBook(b.xpubs)];
    for (const index of [0, 1, 977, MAX_ACCOUNT_INDEX]) assert.deepEqual(bookA.routeAddresses(index), bookB.routeAddresses(index));
    assert.deepEqual(await fromToken.depositSecrets(123n, 4n), await fromEnvironment.depositSecrets(123n, 4n));
    assert.deepEqual(await fromToken.withdrawalSecrets(456n, 0n), await fromEnvironment.withdrawalSecrets(456n, 0n));
  });

  test('every account signs inside the token: each signed transaction recovers to its own address', async () => {
    const { xpubs, gasAddress, poolRelayerAddress } = await fromToken.publicKeys();
    const book = createRouteAddressBook(xpubs);
    for (const [i, account] of ACCOUNTS.entries()) {
      const expected =
        account.role === 'gas' ? gasAddress : account.role === 'poolRelayer' ? poolRelayerAddress : book.routeAddresses(account.index)[account.role];
      const signed = await fromToken.signTransaction(account, serializeTransaction(tx(i)));
      assert.equal(await recoverTransactionAddress({ serializedTransaction: signed as `0x02${string}` }), expected, JSON.stringify(account));
    }
  });

  test('no private key or seed can be read out of the token, and keys are never replaced', () => {
    // One PKCS#11 initialisation per process: the signer's session closes while this one looks.
    token.close();
    const pkcs11js = createRequire(import.meta.url)('pkcs11js');
    const p11 = new pkcs11js.PKCS11();
    p11.load(imported.env.SIGNER_PKCS11_MODULE);
    p11.C_Initialize();
    try {
      const slot = p11.C_GetSlotList(true).find((s: Buffer) => p11.C_GetTokenInfo(s).label.trim() === imported.env.SIGNER_PKCS11_TOKEN);
      const session = p11.C_OpenSession(slot, pkcs11js.CKF_SERIAL_SESSION);
      p11.C_Login(session, pkcs11js.CKU_USER, imported.env.SIGNER_PKCS11_PIN);
      for (const [cls, label] of [
        [pkcs11js.CKO_PRIVATE_KEY, TOKEN_LABELS.roleKey('deposit')],
        [pkcs11js.CKO_PRIVATE_KEY, TOKEN_LABELS.gas],
        [pkcs11js.CKO_SECRET_KEY, TOKEN_LABELS.poolSeed],
      ] as const) {
        p11.C_FindObjectsInit(session, [
          { type: pkcs11js.CKA_CLASS, value: cls },
          { type: pkcs11js.CKA_LABEL, value: label },
        ]);
        const [handle] = p11.C_FindObjects(session, 1);
        p11.C_FindObjectsFinal(session);
        assert.ok(handle, label);
        assert.throws(() => p11.C_GetAttributeValue(session, handle, [{ type: pkcs11js.CKA_VALUE }]), /CKR_ATTRIBUTE_SENSITIVE/, label);
        const [sensitive, extractable] = p11.C_GetAttributeValue(session, handle, [{ type: pkcs11js.CKA_SENSITIVE }, { type: pkcs11js.CKA_EXTRACTABLE }]);
        assert.deepEqual([sensitive.value[0], extractable.value[0]], [1, 0], label);
      }
    } finally {
      p11.C_Finalize();
    }
    token = openPkcs11Token(settings(imported.env));
    assert.throws(() => initialiseToken(token), /already holds private-route\/role\/deposit.*keys are never replaced/);
  });

  test('a token initialised without --import generates every key inside it: other addresses, still signing', async () => {
    const generatedDir = path.join(dir, 'generated');
    const generated = softHsmToken(generatedDir);
    // A second token in the same SoftHSM2 configuration (one library per process), under its own label.
    execFileSync('softhsm2-util', ['--init-token', '--free', '--label', 'generated', '--so-pin', '12345678', '--pin', generated.env.SIGNER_PKCS11_PIN!], {
      env: { ...process.env, SOFTHSM2_CONF: imported.env.SOFTHSM2_CONF },
      stdio: 'ignore',
    });
    // This process's library was initialised before the slot existed: read it from a child, as the signer would.
    const script = `
      import { openPkcs11Token } from './src/signer/pkcs11/token.ts';
      import { initialiseToken } from './src/signer/pkcs11/setup.ts';
      import { createTokenSigner } from './src/signer/pkcs11/tokenSigner.ts';
      import { serializeTransaction, recoverTransactionAddress } from 'viem';
      const token = openPkcs11Token(${JSON.stringify({ ...settings(generated.env), tokenLabel: 'generated' })});
      initialiseToken(token);
      const signer = createTokenSigner(token);
      const keys = await signer.publicKeys();
      const signed = await signer.signTransaction({ role: 'gas' }, serializeTransaction({ chainId: 1, type: 'eip1559', nonce: 0, to: keys.poolRelayerAddress, value: 1n, gas: 21000n, maxFeePerGas: 2n, maxPriorityFeePerGas: 1n }));
      console.log(JSON.stringify({ keys, recovered: await recoverTransactionAddress({ serializedTransaction: signed }) }));
      token.close();`;
    const out = execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      env: { ...process.env, SOFTHSM2_CONF: imported.env.SOFTHSM2_CONF },
      encoding: 'utf8',
    });
    const { keys: generatedKeys, recovered } = JSON.parse(out) as { keys: Awaited<ReturnType<Signer['publicKeys']>>; recovered: string };
    const own = await fromToken.publicKeys();
    assert.equal(recovered, generatedKeys.gasAddress);
    assert.notEqual(generatedKeys.gasAddress, own.gasAddress);
    assert.notEqual(generatedKeys.xpubs.deposit, own.xpubs.deposit);
  });
});

describe('the signer configuration of keys', () => {
  const base = { SIGNER_AUTH_TOKEN: 't'.repeat(32), SIGNER_POLICY: 'off' };
  const token = { SIGNER_KEYS: 'pkcs11', SIGNER_PKCS11_TOKEN: 'private-route', SIGNER_PKCS11_PIN: '12345678' };
  test('keys in the environment are refused with NETWORK=mainnet; a token is not', () => {
    const env = { ...base, SIGNER_MNEMONIC: MNEMONIC, GAS_ACCOUNT_PRIVATE_KEY: DEVNET_ACCOUNTS.gas, POOL_RELAYER_PRIVATE_KEY: DEVNET_ACCOUNTS.poolRelayer };
    const policy = {
      SIGNER_POLICY: 'enforce',
      SIGNER_DATABASE_URL: 'postgres://x/y',
      SIGNER_AUDIT_LOG: '/tmp/a',
      PRIVACY_POOLS_ENTRYPOINT: '0x0000000000000000000000000000000000000001',
    };
    assert.throws(
      () => loadSignerConfig({ ...env, ...policy, NETWORK: 'mainnet' }),
      (e) => e instanceof ConfigError && /refused with NETWORK=mainnet: keep them in a PKCS#11 token/.test(e.message),
    );
    assert.equal(loadSignerConfig({ ...env, NETWORK: 'devnet' }).SIGNER_KEYS, 'env');
    assert.equal(loadSignerConfig({ ...base, ...token, ...policy, NETWORK: 'mainnet' }).SIGNER_KEYS, 'pkcs11');
  });
  test('a token with a key left in the environment, or without its label and PIN, is refused, naming variables only', () => {
    assert.throws(
      () => loadSignerConfig({ ...base, ...token, SIGNER_MNEMONIC: MNEMONIC }),
      (e) => e instanceof ConfigError && /remove SIGNER_MNEMONIC/.test(e.message) && !e.message.includes(MNEMONIC.split(' ').slice(0, 2).join(' ')),
    );
    assert.throws(
      () => loadSignerConfig({ ...base, SIGNER_KEYS: 'pkcs11' }),
      (e) => e instanceof ConfigError && /needs SIGNER_PKCS11_TOKEN, SIGNER_PKCS11_PIN/.test(e.message),
    );
  });
});
