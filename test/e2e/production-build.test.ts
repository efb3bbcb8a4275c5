/**
 * The service as an operator deploys it: `npm run build`, a Temporal namespace that does not exist yet, Postgres roles
 * from deploy/postgres/roles.sql, and the production processes started from dist/ with plain `node` (not the
 * all-in-one local stack): a signer with its keys generated in a PKCS#11 token (SoftHSM2), workers with the signer's URL, APIs with the xpubs only under
 * the API's database role. Two APIs and two workers share one Temporal and one Postgres; one worker is killed with
 * SIGKILL while routes are in flight, and every route still completes, paid exactly once.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import postgres from 'postgres';
import { createPublicClient, erc20Abi, http, toHex, type Address } from 'viem';
import { english, generateMnemonic, generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { softHsmToken } from '../../devnet/softhsm.ts';
import { sendAsNewUser } from '../../devnet/newSender.ts';
import { freePorts } from '../../devnet/ports.ts';
import { signerPolicyEnv, startLocalInfrastructure, type LocalInfrastructure } from '../../devnet/stack.ts';
import { createLogger } from '../../src/logger.ts';
import { createRemoteSigner } from '../../src/signer/remote.ts';
import { waitFor } from '../support/testStack.ts';

const repoRoot = fileURLToPath(new URL('../..', import.meta.url));
const NAMESPACE = 'private-route-first-deployment';

interface ServiceProcess {
  name: string;
  child: ChildProcess;
  output: () => string;
  /** Milliseconds from spawn until it logged that it serves; its resident memory then (MiB). */
  ready: Promise<{ startMs: number; rssMiB: number }>;
  exited: Promise<number | null>;
}

const running: ServiceProcess[] = [];

/**
 * How the processes start: from the build (`npm run start:*`), or with PRODUCTION_TEST_FROM=sources the way they
 * started before there was one (TypeScript through tsx), to compare start time and memory (docs/performance.md).
 */
const fromSources = process.env.PRODUCTION_TEST_FROM === 'sources';

/** Starts `node dist/src/<entry>.js` with exactly `env` (plus PATH); ready when it logs `readyMessage`. */
/** A one-shot command of the build (or of the sources), its standard output when it succeeds. */
async function runFromBuild(entry: string, args: string[], env: Record<string, string>): Promise<string> {
  const script = fromSources
    ? ['--import', './src/loader/register.mjs', path.join(repoRoot, 'src', `${entry}.ts`)]
    : [path.join(repoRoot, 'dist', 'src', `${entry}.js`)];
  return new Promise((resolve, reject) =>
    execFile(
      process.execPath,
      [...script, ...args],
      { cwd: repoRoot, env: { PATH: process.env.PATH ?? '', ...env }, timeout: 60_000 },
      (error, stdout, stderr) => (error ? reject(new Error(`${entry} ${args.join(' ')} failed: ${stderr}`)) : resolve(stdout)),
    ),
  );
}

function startFromBuild(name: string, entry: string, env: Record<string, string>, readyMessage: string): ServiceProcess {
  const started = Date.now();
  const args = fromSources
    ? ['--import', './src/loader/register.mjs', path.join(repoRoot, 'src', `${entry}.ts`)]
    : ['--enable-source-maps', path.join(repoRoot, 'dist', 'src', `${entry}.js`)];
  const child = spawn(process.execPath, args, {
    cwd: repoRoot,
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const ready = new Promise<{ startMs: number; rssMiB: number }>((resolve, reject) => {
    const keep = (chunk: Buffer) => {
      output = (output + chunk.toString()).slice(-20_000);
      if (output.includes(`"msg":"${readyMessage}"`)) {
        const startMs = Date.now() - started;
        const rss = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'))?.[1];
        resolve({ startMs, rssMiB: Math.round(Number(rss) / 1024) });
      }
    };
    child.stdout?.on('data', keep);
    child.stderr?.on('data', keep);
    void exited.then((code) => reject(new Error(`${name} exited (${code}) before it served:\n${output}`)));
  });
  ready.catch(() => {});
  const service = { name, child, output: () => output, ready, exited };
  running.push(service);
  return service;
}

/** Runs `node <args>` with exactly `env` (plus PATH). */
function run(args: string[], env: Record<string, string>): Promise<{ code: number; output: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, args, { cwd: repoRoot, env: { PATH: process.env.PATH ?? '', ...env }, timeout: 240_000 }, (error, stdout, stderr) =>
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, output: `${stdout}${stderr}` }),
    );
  });
}

let dataDir: string;
let infrastructure: LocalInfrastructure;
let ports: number[];
const figures: string[] = [];

/** The native prover processes a process started (children of any of its threads). */
function nativeProversOf(pid: number): number[] {
  const children: number[] = [];
  for (const task of readdirSync(`/proc/${pid}/task`)) {
    for (const child of readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8').split(' ').filter(Boolean)) {
      if (readFileSync(`/proc/${child}/comm`, { encoding: 'utf8', flag: 'r' }).trim() === 'groth16-prover') children.push(Number(child));
    }
  }
  return children;
}

function isAlive(pid: number): boolean {
  try {
    // A zombie still has a /proc entry: alive means not yet reaped and not a zombie.
    return !/^State:\s+Z/m.test(readFileSync(`/proc/${pid}/status`, 'utf8'));
  } catch {
    return false;
  }
}

before(async () => {
  dataDir = await mkdtemp(path.join(tmpdir(), 'private-route-production-'));
  ports = await freePorts(16);
  const [api, temporal, temporalUi, postgresPort, relay, source, hub, destination] = ports as [number, number, number, number, number, number, number, number];
  // npm run build, while the chains and servers start: the two share nothing.
  const [build, started] = await Promise.allSettled([
    run(['--import', 'tsx', 'scripts/build.ts'], {}),
    startLocalInfrastructure({
      dataDir,
      ports: { api, temporal, temporalUi, postgres: postgresPort, relay, source, hub, destination },
      ephemeral: true,
      temporalRegistrations: false,
      env: { DATABASE_URL: process.env.TEST_DATABASE_URL, TEMPORAL_NAMESPACE: NAMESPACE, RATE_LIMIT_PER_MINUTE: '0' },
      logger: createLogger({ level: 'warn' }),
    }),
  ]);
  if (started.status === 'fulfilled') infrastructure = started.value;
  else throw started.reason;
  assert.equal(
    build.status === 'fulfilled' && build.value.code,
    0,
    `npm run build failed:\n${build.status === 'fulfilled' ? build.value.output : String(build.reason)}`,
  );
});

after(async () => {
  for (const service of running) if (service.child.exitCode === null && service.child.signalCode === null) service.child.kill('SIGTERM');
  await Promise.all(running.map((service) => Promise.race([service.exited, new Promise((r) => setTimeout(r, 20_000))])));
  for (const service of running) service.child.kill('SIGKILL');
  await infrastructure?.stop();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
  if (figures.length > 0)
    process.stdout.write(`# production processes (${fromSources ? 'from the sources through tsx' : 'from dist/'}): ${figures.join('; ')}\n`);
});

describe('a first deployment from the build', { timeout: 600_000 }, () => {
  test('a fresh namespace, routectl setup, roles, then two APIs and two workers from dist/: every route completes once, a worker SIGKILLed mid-flight', async () => {
    const { configEnv, manifest } = infrastructure;
    const superuserUrl = configEnv.DATABASE_URL!;
    const temporalEnv = {
      TEMPORAL_ADDRESS: configEnv.TEMPORAL_ADDRESS!,
      TEMPORAL_NAMESPACE: NAMESPACE,
      PAYLOAD_CODEC_KEYS: configEnv.PAYLOAD_CODEC_KEYS!,
      PAYLOAD_CODEC_KEY_ID: configEnv.PAYLOAD_CODEC_KEY_ID!,
    };

    // The database roles as documented: the API logs in as a member of private_route_api, the signer's policy as one
    // of private_route_signer (read-only).
    const admin = postgres(superuserUrl, { max: 1, onnotice: () => {} });
    const apiPassword = randomBytes(16).toString('hex');
    const signerPassword = randomBytes(16).toString('hex');
    try {
      await admin.file(path.join(repoRoot, 'deploy/postgres/roles.sql'));
      await admin.unsafe(`CREATE ROLE route_api LOGIN PASSWORD '${apiPassword}' IN ROLE private_route_api`);
      await admin.unsafe(`CREATE ROLE route_signer LOGIN PASSWORD '${signerPassword}' IN ROLE private_route_signer`);
    } finally {
      await admin.end();
    }
    const signerDatabaseUrl = Object.assign(new URL(superuserUrl), { username: 'route_signer', password: signerPassword }).toString();

    // The signer: the only process with the mnemonic and the keys, and its spending policy (the default).
    const signerAuthToken = randomBytes(32).toString('hex');
    const [signerPort, apiPortA, apiPortB, workerHttpA, workerHttpB, temporalMetricsA, temporalMetricsB] = ports.slice(8) as number[];
    // Its keys generated inside a PKCS#11 token (SoftHSM2 here, an HSM in production) by `signerToken init`: no copy
    // of them exists anywhere else, and the signer's environment holds the token's label and PIN only.
    const token = softHsmToken(path.join(dataDir, 'softhsm'));
    const tokenInit = await runFromBuild('signerToken', ['init'], token.env);
    // The operator's other key command runs from the build too (no tsx on an --omit=dev host).
    assert.match(await runFromBuild('signerXpubs', [], { SIGNER_MNEMONIC: generateMnemonic(english) }), /^DEPOSIT_ACCOUNT_XPUB=xpub\w+$/m);
    assert.match(tokenInit, /^# generated in token "private-route": private-route\/role\/deposit, /m);
    const signer = startFromBuild(
      'signer',
      'signer',
      {
        ...token.env,
        SIGNER_AUTH_TOKEN: signerAuthToken,
        SIGNER_PORT: String(signerPort),
        ...signerPolicyEnv(configEnv, dataDir),
        SIGNER_DATABASE_URL: signerDatabaseUrl,
      },
      'signer listening',
    );
    const signerStart = await signer.ready;
    const signerUrl = `http://127.0.0.1:${signerPort}`;
    const { xpubs, gasAddress, poolRelayerAddresses } = await createRemoteSigner({ url: signerUrl, authToken: signerAuthToken, timeoutMs: 5000 }).publicKeys();
    assert.match(tokenInit, new RegExp(`DEPOSIT_ACCOUNT_XPUB=${xpubs.deposit}\\n`));
    // The operator funds the gas account and the relayer's sending accounts on every chain (their addresses are new ones).
    for (const chain of manifest.chains) {
      const client = createPublicClient({ transport: http(chain.rpcUrl) });
      for (const address of [gasAddress, ...poolRelayerAddresses])
        await client.request({ method: 'anvil_setBalance' as never, params: [address, toHex(10n ** 21n)] as never });
    }

    const apiDatabaseUrl = Object.assign(new URL(superuserUrl), { username: 'route_api', password: apiPassword }).toString();

    const apiEnv = (port: number) => ({
      ...configEnv,
      PORT: String(port),
      API_METRICS_PORT: '0',
      DATABASE_URL: apiDatabaseUrl,
      DATABASE_MIGRATIONS: 'skip',
      DEPOSIT_ACCOUNT_XPUB: xpubs.deposit,
      HUB_ACCOUNT_XPUB: xpubs.hub,
    });
    const workerEnv = (httpPort: number, metricsPort: number) => ({
      ...configEnv,
      SIGNER_URL: signerUrl,
      SIGNER_AUTH_TOKEN: signerAuthToken,
      WEBHOOK_SIGNING_SECRET: randomBytes(32).toString('hex'),
      WORKER_HTTP_PORT: String(httpPort),
      TEMPORAL_METRICS_PORT: String(metricsPort),
    });

    // NETWORK=testnet fills in every public constant but the RPC URLs: without them the API says what to set.
    const withoutNetwork: Record<string, string> = { ...apiEnv(apiPortA!) };
    for (const name of ['CHAIN_RPC_URLS', 'HUB_CHAIN_ID', 'PRIVACY_POOLS_ENTRYPOINT', 'PRIVACY_POOLS_START_BLOCK']) delete withoutNetwork[name];
    const testnet = startFromBuild('API on testnet without RPC URLs', 'api', { ...withoutNetwork, NETWORK: 'testnet' }, 'api listening');
    assert.equal(await testnet.exited, 1, testnet.output());
    assert.match(testnet.output(), /CHAIN_RPC_URLS must give an RPC URL for every chain the service serves \(at least the hub, 11155111\)/);

    // Before the bootstrap: the API refuses to start and says what is missing and what to run.
    const early = startFromBuild('api before setup', 'api', apiEnv(apiPortA!), 'api listening');
    assert.equal(await early.exited, 1, early.output());
    assert.match(early.output(), new RegExp(`namespace \\\\"${NAMESPACE}\\\\" does not exist: run \`routectl setup\``));

    // The bootstrap, twice: the second run finds everything there.
    const setup = await run(['dist/src/cli/routectl.js', 'setup'], temporalEnv);
    assert.equal(setup.code, 0, setup.output);
    assert.match(setup.output, new RegExp(`created namespace "${NAMESPACE}"`));
    assert.match(setup.output, /created search attribute TransferStatus \(Keyword\)/);
    assert.match(setup.output, /created search attribute NeedsAttention \(Bool\)/);
    const again = await run(['dist/src/cli/routectl.js', 'setup'], temporalEnv);
    assert.equal(again.code, 0, again.output);
    assert.match(again.output, /search attribute TransferStatus \(Keyword\) already there/);
    assert.doesNotMatch(again.output, /created/);

    // The workers first: they apply the migrations (the API's role may not), then the roles file grants on the tables.
    const workerA = startFromBuild('worker A', 'worker', workerEnv(workerHttpA!, temporalMetricsA!), 'worker running');
    const workerB = startFromBuild('worker B', 'worker', workerEnv(workerHttpB!, temporalMetricsB!), 'worker running');
    const [workerStart] = await Promise.all([workerA.ready, workerB.ready]);
    const apiA = startFromBuild('API A', 'api', apiEnv(apiPortA!), 'api listening');
    const apiB = startFromBuild('API B', 'api', apiEnv(apiPortB!), 'api listening');
    const [apiStart] = await Promise.all([apiA.ready, apiB.ready]);
    figures.push(
      `signer ${signerStart.startMs} ms, ${signerStart.rssMiB} MiB`,
      `worker ${workerStart.startMs} ms, ${workerStart.rssMiB} MiB`,
      `API ${apiStart.startMs} ms, ${apiStart.rssMiB} MiB (start to serving; RSS when serving)`,
    );

    // The tracking page's static files reach the build beside its code (scripts/build.ts copies them).
    for (const file of ['/t/app.js', '/t/app.css', `/t/rt_${'0'.repeat(32)}`]) {
      const served = await fetch(`http://127.0.0.1:${apiPortA}${file}`, { signal: AbortSignal.timeout(10_000) });
      assert.equal(served.status, 200, `the build serves ${file}`);
    }

    // Four routes, two through each API, each funded by its own sender.
    const chainOf = (role: string) => manifest.chains.find((c) => c.role === role)!;
    const usdc = (role: string) => chainOf(role).tokens.find((t) => t.symbol === 'USDC')!.address;
    const routes: {
      api: string;
      routeId: string;
      statusToken: string;
      recipient: Address;
      quotedOutputAmount: string;
      depositAddress: Address;
      amount: string;
    }[] = [];
    for (const [i, port] of [apiPortA, apiPortB, apiPortA, apiPortB].entries()) {
      const api = `http://127.0.0.1:${port}`;
      const recipient = privateKeyToAccount(generatePrivateKey()).address;
      const request = { sourceChainId: chainOf('source').chainId, destChainId: chainOf('destination').chainId, amount: `${100 + i}`, destTokenSymbol: 'USDC' };
      // As an integrator does it, under the API's own database role: a quote (recorded), then a create citing it.
      const quoted = await fetch(`${api}/api/private-route/quote`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(request),
      });
      const quote = (await quoted.json()) as { data: { quoteId: string; quotedOutputAmount: string } };
      assert.equal(quoted.status, 200, JSON.stringify(quote));
      const response = await fetch(`${api}/api/private-route`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ ...request, userDestinationAddress: recipient, quoteId: quote.data.quoteId }),
      });
      const body = (await response.json()) as { data: (typeof routes)[number] & { quoteId: string } };
      assert.equal(response.status, 200, JSON.stringify(body));
      assert.equal(body.data.quoteId, quote.data.quoteId);
      assert.equal(body.data.quotedOutputAmount, quote.data.quotedOutputAmount, 'the create is exactly the quote it cites');
      routes.push({ ...body.data, api, recipient });
    }
    for (const route of routes) {
      await sendAsNewUser({
        rpcUrl: chainOf('source').rpcUrl,
        faucetPrivateKey: manifest.faucetPrivateKey,
        token: usdc('source'),
        to: route.depositAddress,
        amount: BigInt(route.amount),
      });
    }
    const statusOf = async (route: (typeof routes)[number]) => {
      // Each route is read through the other API: both serve every route.
      const other = route.api.endsWith(String(apiPortA)) ? `http://127.0.0.1:${apiPortB}` : `http://127.0.0.1:${apiPortA}`;
      const response = await fetch(`${other}/api/private-route/${route.routeId}`, { headers: { authorization: `Bearer ${route.statusToken}` } });
      return ((await response.json()) as { data: { status: string; error: string | null } }).data;
    };

    // Mid-flight: once a route is in the pool, worker A dies without a chance to clean up.
    await waitFor(
      'a route in the pool',
      async () => ((await Promise.all(routes.map(statusOf))).some((t) => t.status === 'SHIELDED' || t.status === 'UNSHIELD_SENT') ? true : undefined),
      120_000,
      100,
    );
    // (None if its prover threads have stopped after two idle minutes.)
    const provingProcessesOfA = nativeProversOf(workerA.child.pid!);
    workerA.child.kill('SIGKILL');
    assert.equal(await workerA.exited, null);
    // Its native provers see their input pipe close and end: none outlives the worker that started it.
    await waitFor('worker A native provers gone', async () => (provingProcessesOfA.every((pid) => !isAlive(pid)) ? true : undefined), 15_000, 100);

    const destination = createPublicClient({ transport: http(chainOf('destination').rpcUrl) });
    for (const route of routes) {
      const done = await waitFor(
        `${route.routeId} to finish after the SIGKILL`,
        async () => {
          const view = await statusOf(route);
          return view.status === 'COMPLETED' || view.status === 'FAILED' ? view : undefined;
        },
        240_000,
        250,
      );
      assert.equal(done.status, 'COMPLETED', done.error ?? '');
      const paid = await destination.readContract({ address: usdc('destination'), abi: erc20Abi, functionName: 'balanceOf', args: [route.recipient] });
      assert.equal(paid, BigInt(route.quotedOutputAmount), `${route.routeId}: the recipient got exactly the quote, once`);
    }

    // And in the books: each route's payout leg recorded, for every route.
    const check = postgres(superuserUrl, { max: 1, onnotice: () => {} });
    try {
      const payouts = await check<{ route_id: string; n: number }[]>`
        select route_id, count(*)::int as n from ledger_entries where kind = 'bridged_out' group by route_id`;
      assert.deepEqual(Object.fromEntries(payouts.map((p) => [p.route_id, p.n])), Object.fromEntries(routes.map((r) => [r.routeId, 1])));
    } finally {
      await check.end();
    }
    assert.equal(workerB.child.exitCode, null, 'the surviving worker still runs');
    // Worker B proved what A left: its peak memory (the kernel's high-water mark), and its native provers'.
    const peakOf = (pid: number) => Math.round(Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]) / 1024);
    const nativePeaks = nativeProversOf(workerB.child.pid!).map(peakOf);
    assert.ok(nativePeaks.length > 0, 'worker B proves with the native prover (npm run build:prover says why not)');
    figures.push(`worker B peak RSS ${peakOf(workerB.child.pid!)} MiB after proving, its native provers ${nativePeaks.join(' + ')} MiB`);
  });
});
