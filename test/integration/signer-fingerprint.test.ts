import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { english, generateMnemonic } from 'viem/accounts';
import { createRouteAddressBook, createRouteKeyring, MAX_ACCOUNT_INDEX } from '../../src/accounts/routeAccounts.ts';
import { checkSignerFingerprint, signerFingerprint } from '../../src/accounts/signerFingerprint.ts';
import { startApi } from '../../src/api/startApi.ts';
import { ConfigError, loadConfig } from '../../src/config.ts';
import { connectDatabase, migrateDatabase, type DatabaseHandle } from '../../src/db/client.ts';
import { signerFingerprints } from '../../src/db/schema.ts';
import { DEVNET_ACCOUNTS } from '../../devnet/chains.ts';
import { freePorts } from '../../devnet/ports.ts';
import { startLocalPostgres, type LocalPostgres } from '../../devnet/postgres.ts';
import { createLogger } from '../../src/logger.ts';
import { createApiContext } from '../../src/runtime.ts';

const MNEMONIC_A = generateMnemonic(english);
const MNEMONIC_B = generateMnemonic(english);

let dataDir: string;
let pg: LocalPostgres;
let database: DatabaseHandle;
let env: Record<string, string>;

before(
  async () => {
    dataDir = await mkdtemp(path.join(tmpdir(), 'signer-fingerprint-'));
    const [port, deadPort] = (await freePorts(2)) as [number, number];
    // Ephemeral: a copy of the cluster initdb'd once (not an initdb of its own), stopped without a checkpoint; dataDir goes in after().
    pg = await startLocalPostgres({ dataDir, port, database: 'signer_fingerprint', ephemeral: true });
    await migrateDatabase(pg.url);
    database = connectDatabase(pg.url, { max: 2 });
    // Enough configuration for the API and the worker to get as far as their start checks; nothing listens on deadPort.
    env = {
      DATABASE_URL: pg.url,
      HUB_CHAIN_ID: '1',
      CHAIN_RPC_URLS: JSON.stringify({ 1: `http://127.0.0.1:${deadPort}` }),
      TEMPORAL_ADDRESS: `127.0.0.1:${deadPort}`,
      PORT: '0',
      WORKER_HTTP_PORT: '0',
      TEMPORAL_METRICS_PORT: '0',
      RELAY_API_URL: `http://127.0.0.1:${deadPort}`,
      PRIVACY_POOLS_ASP_URL: `http://127.0.0.1:${deadPort}`,
      GAS_ACCOUNT_PRIVATE_KEY: DEVNET_ACCOUNTS.gas,
      POOL_RELAYER_PRIVATE_KEY: DEVNET_ACCOUNTS.poolRelayer,
      PRIVACY_POOLS_ENTRYPOINT: '0x0000000000000000000000000000000000000001',
      SIGNER_MNEMONIC: MNEMONIC_A,
      WEBHOOK_SIGNING_SECRET: 'w'.repeat(64),
      // History encryption is not what these starts check.
      PAYLOAD_CODEC: 'off',
    };
  },
  { timeout: 120_000 },
);

after(
  async () => {
    await database?.close();
    await pg?.stop();
    await rm(dataDir, { recursive: true, force: true });
  },
  { timeout: 60_000 },
);

/** The API's environment for a mnemonic's xpubs (no key). */
function apiEnv(mnemonic: string, overrides: Partial<Record<'deposit' | 'hub' | 'exit', string>> = {}): Record<string, string> {
  const { SIGNER_MNEMONIC: _mnemonic, GAS_ACCOUNT_PRIVATE_KEY: _gas, POOL_RELAYER_PRIVATE_KEY: _relayer, ...rest } = env;
  const xpubs = { ...createRouteKeyring(mnemonic).xpubs(), ...overrides };
  return { ...rest, DEPOSIT_ACCOUNT_XPUB: xpubs.deposit, HUB_ACCOUNT_XPUB: xpubs.hub };
}

describe('signer fingerprint', { timeout: 60_000 }, () => {
  test("a database with only the original fingerprint (deposit address of index 0) stays valid; the hub and exit rows join it; the API's xpubs pass", async () => {
    const keyring = createRouteKeyring(MNEMONIC_A);
    // As a deployment from before the xpubs left it.
    await database.db.insert(signerFingerprints).values({ name: 'route-keyring', address: keyring.routeAccounts(0).deposit.address });
    await checkSignerFingerprint(database.db, keyring, 'worker');
    const rows = await database.db.select().from(signerFingerprints);
    assert.deepEqual(Object.fromEntries(rows.map((r) => [r.name, r.address])), {
      'route-keyring': keyring.routeAccounts(0).deposit.address,
      'route-keyring/hub': keyring.routeAccounts(0).hub.address,
      'route-keyring/exit': keyring.routeAccounts(0).exit.address,
    });
    assert.equal(rows.find((r) => r.name === 'route-keyring')!.address, signerFingerprint(keyring));
    assert.ok(!JSON.stringify(rows).includes(MNEMONIC_A));
    await checkSignerFingerprint(database.db, createRouteAddressBook(createRouteKeyring(` ${MNEMONIC_A}  `).xpubs()), 'api');
    await checkSignerFingerprint(database.db, keyring, 'worker');
    assert.equal((await database.db.select().from(signerFingerprints)).length, 3);
  });

  test("an API with another signer's xpubs is refused with a ConfigError that says what to do, and without any secret", async () => {
    const error = await checkSignerFingerprint(database.db, createRouteAddressBook(createRouteKeyring(MNEMONIC_B).xpubs()), 'api').then(
      () => assert.fail("another signer's xpubs were accepted"),
      (e: unknown) => e,
    );
    assert.ok(error instanceof ConfigError, String(error));
    assert.match(error.message, /the deposit xpub of this api \(DEPOSIT_ACCOUNT_XPUB\) is not the signer's this database's transfers were created with/);
    assert.match(error.message, new RegExp(createRouteKeyring(MNEMONIC_A).routeAccounts(0).deposit.address));
    assert.match(error.message, /npm run signer:token -- show on the signer.s host \(or signer:xpubs where its mnemonic is\)/);
    assert.match(error.message, /docs\/operations\.md/);
    assert.ok(!error.message.includes(MNEMONIC_B) && !error.message.includes(MNEMONIC_A));
  });

  test("one wrong role is enough: the right deposit xpub with another signer's hub xpub is refused", async () => {
    const wrongHub = createRouteKeyring(MNEMONIC_B).xpubs().hub;
    const addresses = createRouteAddressBook({ ...createRouteKeyring(MNEMONIC_A).xpubs(), hub: wrongHub });
    await assert.rejects(
      checkSignerFingerprint(database.db, addresses, 'api'),
      (e: unknown) => e instanceof ConfigError && /the hub xpub of this api \(HUB_ACCOUNT_XPUB\)/.test(e.message),
    );
  });

  test("startApi refuses to start (before serving anything) with another signer's xpubs", async () => {
    const service = createApiContext(loadConfig(apiEnv(MNEMONIC_B), 'api'));
    try {
      await assert.rejects(startApi(service, createLogger({ level: 'error' })), (e: unknown) => e instanceof ConfigError && /xpub of this api/.test(e.message));
    } finally {
      await service.close();
    }
  });

  test('the worker process (src/worker.ts, development keys) exits 1 with the message', { timeout: 60_000 }, async () => {
    const result = await new Promise<{ code: number | null; output: string }>((resolve) => {
      const child = execFile(
        process.execPath,
        ['--import', 'tsx', 'src/worker.ts'],
        { env: { ...process.env, ...env, SIGNER_MNEMONIC: MNEMONIC_B, LOG_LEVEL: 'info' }, timeout: 50_000 },
        (_error, stdout, stderr) => resolve({ code: child.exitCode, output: `${stdout}${stderr}` }),
      );
    });
    assert.equal(result.code, 1, result.output);
    assert.match(
      result.output,
      /the signer of this worker \(SIGNER_URL, or SIGNER_MNEMONIC in development\) is not the one this database's transfers were created with/,
    );
    assert.ok(!result.output.includes(MNEMONIC_B));
  });

  test('route account indexes stop at the last non-hardened BIP-32 index, with a clear error', () => {
    const keyring = createRouteKeyring(MNEMONIC_A);
    assert.ok(keyring.routeAccounts(MAX_ACCOUNT_INDEX).deposit.address);
    assert.throws(() => keyring.routeAccounts(MAX_ACCOUNT_INDEX + 1), /account index 2147483648 cannot be derived: it must be an integer from 0 to 2147483647/);
  });
});
