import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { english, generateMnemonic } from 'viem/accounts';
import { createRouteKeyring, MAX_ACCOUNT_INDEX } from '../src/accounts/routeAccounts.ts';
import { checkSignerFingerprint, signerFingerprint } from '../src/accounts/signerFingerprint.ts';
import { startApi } from '../src/api/server.ts';
import { ConfigError, loadConfig } from '../src/config.ts';
import { connectDatabase, migrateDatabase, type DatabaseHandle } from '../src/db/client.ts';
import { signerFingerprints } from '../src/db/schema.ts';
import { DEVNET_ACCOUNTS } from '../src/devnet/chains.ts';
import { freePorts } from '../src/devnet/ports.ts';
import { startLocalPostgres, type LocalPostgres } from '../src/devnet/postgres.ts';
import { createLogger } from '../src/logger.ts';
import { createServiceContext } from '../src/runtime.ts';

const MNEMONIC_A = generateMnemonic(english);
const MNEMONIC_B = generateMnemonic(english);

let dataDir: string;
let pg: LocalPostgres;
let database: DatabaseHandle;
let env: Record<string, string>;

before(async () => {
  dataDir = await mkdtemp(path.join(tmpdir(), 'signer-fingerprint-'));
  const [port, deadPort] = (await freePorts(2)) as [number, number];
  pg = await startLocalPostgres({ dataDir, port, database: 'signer_fingerprint' });
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
  };
}, { timeout: 120_000 });

after(async () => {
  await database?.close();
  await pg?.stop();
  await rm(dataDir, { recursive: true, force: true });
}, { timeout: 60_000 });

describe('signer fingerprint', { timeout: 60_000 }, () => {
  test('the first start records the address of index 0 (never a route account, never the secret); the same mnemonic passes again', async () => {
    const keyring = createRouteKeyring(MNEMONIC_A);
    await checkSignerFingerprint(database.db, keyring, 'worker');
    const rows = await database.db.select().from(signerFingerprints);
    assert.equal(rows.length, 1);
    assert.equal(rows[0]!.address, keyring.routeAccounts(0).deposit.address);
    assert.equal(rows[0]!.address, signerFingerprint(keyring));
    assert.ok(!JSON.stringify(rows).includes(MNEMONIC_A));
    await checkSignerFingerprint(database.db, createRouteKeyring(` ${MNEMONIC_A}  `), 'api');
    await checkSignerFingerprint(database.db, keyring, 'worker');
    assert.equal((await database.db.select().from(signerFingerprints)).length, 1);
  });

  test('another mnemonic is refused with a ConfigError that says what to do, and without the secret', async () => {
    const error = await checkSignerFingerprint(database.db, createRouteKeyring(MNEMONIC_B), 'api').then(
      () => assert.fail('a different SIGNER_MNEMONIC was accepted'),
      (e: unknown) => e,
    );
    assert.ok(error instanceof ConfigError, String(error));
    assert.match(error.message, /SIGNER_MNEMONIC of this api is not the one this database's transfers were created with/);
    assert.match(error.message, new RegExp(createRouteKeyring(MNEMONIC_A).routeAccounts(0).deposit.address));
    assert.match(error.message, /docs\/operations\.md/);
    assert.ok(!error.message.includes(MNEMONIC_B) && !error.message.includes(MNEMONIC_A));
  });

  test('startApi refuses to start (before serving anything) with another mnemonic', async () => {
    const service = createServiceContext(loadConfig({ ...env, SIGNER_MNEMONIC: MNEMONIC_B }));
    try {
      await assert.rejects(startApi(service, createLogger({ level: 'error' })), (e: unknown) => e instanceof ConfigError && /SIGNER_MNEMONIC of this api/.test(e.message));
    } finally {
      await service.close();
    }
  });

  test('the worker process (src/worker.ts) exits 1 with the message', { timeout: 60_000 }, async () => {
    const result = await new Promise<{ code: number | null; output: string }>((resolve) => {
      const child = execFile(
        process.execPath,
        ['--import', 'tsx', 'src/worker.ts'],
        { env: { ...process.env, ...env, SIGNER_MNEMONIC: MNEMONIC_B, LOG_LEVEL: 'info' }, timeout: 50_000 },
        (_error, stdout, stderr) => resolve({ code: child.exitCode, output: `${stdout}${stderr}` }),
      );
    });
    assert.equal(result.code, 1, result.output);
    assert.match(result.output, /SIGNER_MNEMONIC of this worker is not the one this database's transfers were created with/);
    assert.ok(!result.output.includes(MNEMONIC_B));
  });

  test('route account indexes stop at the last non-hardened BIP-32 index, with a clear error', () => {
    const keyring = createRouteKeyring(MNEMONIC_A);
    assert.ok(keyring.routeAccounts(MAX_ACCOUNT_INDEX).deposit.address);
    assert.throws(() => keyring.routeAccounts(MAX_ACCOUNT_INDEX + 1), /account index 2147483648 cannot be derived: it must be an integer from 0 to 2147483647/);
  });
});
