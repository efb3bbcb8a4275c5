/**
 * The first deployment as docs/operations.md ("First deployment") describes it, rehearsed on the local chains:
 * `npm run build`; the processes from dist/ under plain node, each with exactly its documented environment; a Temporal
 * namespace that does not exist yet (`routectl setup`); the database roles of deploy/postgres/roles.sql with the
 * worker, the API and the signer as their own least-privilege logins and the migrations applied by a one-shot job; a
 * signer whose keys are generated in a PKCS#11 token (SoftHSM2); two workers; two APIs behind a load balancer that
 * appends X-Forwarded-For (TRUST_PROXY_HOPS=1). Then routes from distinct clients: quote, create citing the quoteId,
 * fund from a new wallet each; mid-route a rolling restart of one worker and one API, then a crash (SIGKILL) of the
 * other worker; every route COMPLETED and paid exactly its quote, once. Any step that fails throws and says which.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { request } from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Connection } from '@temporalio/client';
import postgres from 'postgres';
import { createPublicClient, erc20Abi, http, toHex, type Address } from 'viem';
import { english, generateMnemonic, generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { createLogger } from '../src/logger.ts';
import { createRemoteSigner } from '../src/signer/remote.ts';
import { startLoadBalancer, type LoadBalancer } from './loadBalancer.ts';
import { sendAsNewUser } from './newSender.ts';
import { freePorts } from './ports.ts';
import { softHsmToken } from './softhsm.ts';
import { signerPolicyEnv, startLocalInfrastructure, type LocalInfrastructure } from './stack.ts';

const repoRoot = fileURLToPath(new URL('..', import.meta.url));
/** How long the first route waits in the pool for peers that do not come (PRIVACY_MAX_WAIT_SECONDS). */
const LONGEST_WAIT_SECONDS = 90;
/** The Temporal worker deployment the rehearsal's workers are versions of. */
const DEPLOYMENT = 'private-route';

export interface RehearsalOptions {
  /** A private folder for the chains' state, the token and the logs; removed by the caller. */
  dataDir: string;
  /** Progress lines. */
  log: (line: string) => void;
  /** Skip `npm run build` (dist/ is already this checkout's build). */
  skipBuild?: boolean;
  /** A Postgres server to use instead of starting one (its superuser's URL). */
  databaseUrl?: string;
  /** Routes to send (default 4), from as many distinct clients and wallets. */
  routes?: number;
}

export interface RehearsalReport {
  routes: number;
  distinctClients: number;
  retriedByBalancer: number;
  figures: string[];
  /** The last line: what the rehearsal proved. */
  summary: string;
}

interface ServiceProcess {
  name: string;
  child: ChildProcess;
  output: () => string;
  /** Milliseconds from spawn until it logged that it serves; its resident memory then (MiB). */
  ready: Promise<{ startMs: number; rssMiB: number }>;
  exited: Promise<number | null>;
}

export async function rehearse(opts: RehearsalOptions): Promise<RehearsalReport> {
  const { log } = opts;
  const running: ServiceProcess[] = [];
  const figures: string[] = [];
  const namespace = `private-route-rehearsal-${randomBytes(3).toString('hex')}`;
  let infrastructure: LocalInfrastructure | undefined;
  let balancer: LoadBalancer | undefined;
  const cleanups: (() => Promise<void>)[] = [];

  function startFromBuild(name: string, entry: string, env: Record<string, string>, readyMessage: string): ServiceProcess {
    const started = Date.now();
    const child = spawn(process.execPath, ['--enable-source-maps', path.join(repoRoot, 'dist', 'src', `${entry}.js`)], {
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
          const rss = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'))?.[1];
          resolve({ startMs: Date.now() - started, rssMiB: Math.round(Number(rss) / 1024) });
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

  /** A one-shot command of the build, with exactly `env` (plus PATH): its exit code and output. */
  const runFromBuild = (args: string[], env: Record<string, string>) =>
    new Promise<{ code: number; output: string }>((resolve) =>
      execFile(
        process.execPath,
        [path.join(repoRoot, 'dist', ...args[0]!.split('/')), ...args.slice(1)],
        { cwd: repoRoot, env: { PATH: process.env.PATH ?? '', ...env }, timeout: 120_000 },
        (error, stdout, stderr) => resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, output: `${stdout}${stderr}` }),
      ),
    );

  /** Stops a process as an orchestrator does (SIGTERM) and waits for a clean exit. */
  async function stopGracefully(service: ServiceProcess): Promise<void> {
    service.child.kill('SIGTERM');
    const code = await Promise.race([service.exited, new Promise<'late'>((r) => setTimeout(() => r('late'), 90_000))]);
    assert.equal(code, 0, `${service.name} exits 0 on SIGTERM (got ${code}):\n${service.output().slice(-3000)}`);
  }

  try {
    const ports = await freePorts(17);
    const [api, temporal, temporalUi, postgresPort, relay, source, hub, destination] = ports as [
      number,
      number,
      number,
      number,
      number,
      number,
      number,
      number,
    ];
    log('== local chains, Temporal (no namespace yet), Postgres and the providers’ emulators; npm run build beside them');
    const build = opts.skipBuild
      ? Promise.resolve({ code: 0, output: '' })
      : new Promise<{ code: number; output: string }>((resolve) =>
          execFile(process.execPath, ['--import', 'tsx', 'scripts/build.ts'], { cwd: repoRoot, timeout: 300_000 }, (error, stdout, stderr) =>
            resolve({ code: error ? 1 : 0, output: `${stdout}${stderr}` }),
          ),
        );
    infrastructure = await startLocalInfrastructure({
      dataDir: opts.dataDir,
      ports: { api, temporal, temporalUi, postgres: postgresPort, relay, source, hub, destination },
      ephemeral: true,
      temporalRegistrations: false,
      env: {
        DATABASE_URL: opts.databaseUrl,
        TEMPORAL_NAMESPACE: namespace,
        RATE_LIMIT_PER_MINUTE: '0',
        // The first route asks for more peers than come: it waits its longest wait in the pool, through the rolling
        // deploy and the crash below.
        PRIVACY_MAX_WAIT_SECONDS: String(LONGEST_WAIT_SECONDS),
        PUBLIC_STATUS_HOLD_SECONDS: String(LONGEST_WAIT_SECONDS + 30),
        // Relay's quota metered through Postgres, as on testnet and mainnet: the API role's grant on provider_quotas is used.
        RELAY_RATE_LIMITS: JSON.stringify({ quote: 600, status: 600, other: 600 }),
      },
      logger: createLogger({ level: 'warn' }),
    });
    const built = await build;
    assert.equal(built.code, 0, `npm run build failed:\n${built.output}`);
    const { configEnv, manifest } = infrastructure;
    const superuserUrl = configEnv.DATABASE_URL!;
    const temporalEnv = {
      TEMPORAL_ADDRESS: configEnv.TEMPORAL_ADDRESS!,
      TEMPORAL_NAMESPACE: namespace,
      PAYLOAD_CODEC_KEYS: configEnv.PAYLOAD_CODEC_KEYS!,
      PAYLOAD_CODEC_KEY_ID: configEnv.PAYLOAD_CODEC_KEY_ID!,
    };
    const [signerPort, apiPortA, apiPortB, workerHttpA, workerHttpB, workerHttpA2, metricsA, metricsB, metricsNext] = ports.slice(8) as number[];

    log('== database: roles.sql, a login per process, a database owned by private_route_worker');
    const suffix = randomBytes(3).toString('hex');
    const database = `private_route_${suffix}`;
    const logins = { worker: `route_worker_${suffix}`, api: `route_api_${suffix}`, signer: `route_signer_${suffix}` };
    const passwords = { worker: randomBytes(16).toString('hex'), api: randomBytes(16).toString('hex'), signer: randomBytes(16).toString('hex') };
    const urlOf = (login: keyof typeof logins, db = database) =>
      Object.assign(new URL(superuserUrl), { username: logins[login], password: passwords[login], pathname: `/${db}` }).toString();
    const superuserOn = (db: string) => Object.assign(new URL(superuserUrl), { pathname: `/${db}` }).toString();
    const admin = postgres(superuserUrl, { max: 1, onnotice: () => {} });
    try {
      await admin.file(path.join(repoRoot, 'deploy/postgres/roles.sql'));
      await admin.unsafe(`CREATE ROLE ${logins.worker} LOGIN PASSWORD '${passwords.worker}' IN ROLE private_route_worker`);
      await admin.unsafe(`ALTER ROLE ${logins.worker} SET ROLE private_route_worker`);
      await admin.unsafe(`CREATE ROLE ${logins.api} LOGIN PASSWORD '${passwords.api}' IN ROLE private_route_api`);
      await admin.unsafe(`CREATE ROLE ${logins.signer} LOGIN PASSWORD '${passwords.signer}' IN ROLE private_route_signer`);
      await admin.unsafe(`CREATE DATABASE ${database} OWNER private_route_worker`);
    } finally {
      await admin.end();
    }
    cleanups.push(async () => {
      const drop = postgres(superuserUrl, { max: 1, onnotice: () => {} });
      try {
        await drop.unsafe(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
        for (const login of Object.values(logins)) await drop.unsafe(`DROP ROLE IF EXISTS ${login}`);
      } finally {
        await drop.end();
      }
    });
    const onDatabase = postgres(superuserOn(database), { max: 1, onnotice: () => {} });
    const rolesFile = () => onDatabase.file(path.join(repoRoot, 'deploy/postgres/roles.sql'));
    cleanups.unshift(() => onDatabase.end());
    await rolesFile();

    log('== migrations: a one-shot job under the worker’s login, run twice at once (they queue on a lock)');
    const jobs = await Promise.all([0, 1].map(() => runFromBuild(['src/migrate.js'], { DATABASE_URL: urlOf('worker') })));
    const applied = jobs.map((job) => {
      assert.equal(job.code, 0, `the migration job failed:\n${job.output}`);
      return Number(/"applied":(\d+)/.exec(job.output)?.[1]);
    });
    assert.ok(Math.min(...applied) === 0 && Math.max(...applied) > 0, `one job applies the migrations, the other finds them applied (${applied})`);
    const [owner] = await onDatabase<{ owner: string }[]>`select tableowner as owner from pg_tables where tablename = 'transfers'`;
    assert.equal(owner?.owner, 'private_route_worker', 'the tables belong to the group role, not to a login');
    await rolesFile();

    log('== keys: generated inside a PKCS#11 token (SoftHSM2); the signer under its read-only login');
    const token = softHsmToken(path.join(opts.dataDir, 'softhsm'));
    const tokenInit = await runFromBuild(['src/signerToken.js', 'init'], token.env);
    assert.equal(tokenInit.code, 0, tokenInit.output);
    const xpubsFromMnemonic = await runFromBuild(['src/signerXpubs.js'], { SIGNER_MNEMONIC: generateMnemonic(english) });
    assert.match(xpubsFromMnemonic.output, /^DEPOSIT_ACCOUNT_XPUB=xpub\w+$/m, 'signer:xpubs runs from the build');
    const signerAuthToken = randomBytes(32).toString('hex');
    const signer = startFromBuild(
      'signer',
      'signer',
      {
        ...token.env,
        SIGNER_AUTH_TOKEN: signerAuthToken,
        SIGNER_PORT: String(signerPort),
        ...signerPolicyEnv(configEnv, opts.dataDir),
        SIGNER_DATABASE_URL: urlOf('signer'),
      },
      'signer listening',
    );
    const signerStart = await signer.ready;
    const signerUrl = `http://127.0.0.1:${signerPort}`;
    const health = await fetch(`${signerUrl}/healthz`, { signal: AbortSignal.timeout(5000) });
    assert.equal(health.status, 200, 'a load balancer can check the signer without its token');
    const { xpubs, gasAddress, poolRelayerAddresses } = await createRemoteSigner({ url: signerUrl, authToken: signerAuthToken, timeoutMs: 5000 }).publicKeys();
    assert.match(tokenInit.output, new RegExp(`DEPOSIT_ACCOUNT_XPUB=${xpubs.deposit}\\n`));

    log('== funding: the gas account and the pool relayer’s sending accounts on every chain');
    for (const chain of manifest.chains) {
      const client = createPublicClient({ transport: http(chain.rpcUrl) });
      for (const address of [gasAddress, ...poolRelayerAddresses])
        await client.request({ method: 'anvil_setBalance' as never, params: [address, toHex(10n ** 21n)] as never });
    }

    const apiEnv = (port: number) => ({
      ...configEnv,
      PORT: String(port),
      API_METRICS_PORT: '0',
      DATABASE_URL: urlOf('api'),
      DATABASE_MIGRATIONS: 'skip',
      DATABASE_POOL_MAX: '5',
      TRUST_PROXY_HOPS: '1',
      DEPOSIT_ACCOUNT_XPUB: xpubs.deposit,
      HUB_ACCOUNT_XPUB: xpubs.hub,
    });
    const webhookSecret = randomBytes(32).toString('hex');
    // Versioned workers (docs/operations.md, "Deploying a changed workflow"): workflow tasks go to the promoted version.
    const workerEnv = (httpPort: number, metricsPort: number, buildId?: string) => ({
      ...configEnv,
      TEMPORAL_WORKER_DEPLOYMENT: DEPLOYMENT,
      ...(buildId && { TEMPORAL_WORKER_BUILD_ID: buildId }),
      DATABASE_URL: urlOf('worker'),
      DATABASE_MIGRATIONS: 'skip',
      DATABASE_POOL_MAX: '8',
      SIGNER_URL: signerUrl,
      SIGNER_AUTH_TOKEN: signerAuthToken,
      WEBHOOK_SIGNING_SECRET: webhookSecret,
      WORKER_HTTP_PORT: String(httpPort),
      TEMPORAL_METRICS_PORT: String(metricsPort),
    });

    log('== settings: NETWORK=testnet without RPC URLs is refused with what to set');
    {
      const withoutRpc: Record<string, string> = { ...apiEnv(apiPortA!), NETWORK: 'testnet' };
      for (const name of ['CHAIN_RPC_URLS', 'HUB_CHAIN_ID', 'PRIVACY_POOLS_ENTRYPOINT', 'PRIVACY_POOLS_START_BLOCK']) delete withoutRpc[name];
      const refused = startFromBuild('API on testnet without RPC URLs', 'api', withoutRpc, 'api listening');
      assert.equal(await refused.exited, 1, refused.output());
      assert.match(refused.output(), /CHAIN_RPC_URLS must give an RPC URL for every chain the service serves/);
    }

    log('== an API started before the Temporal bootstrap refuses and says what to run');
    {
      const early = startFromBuild('API before routectl setup', 'api', apiEnv(apiPortA!), 'api listening');
      assert.equal(await early.exited, 1, early.output());
      assert.match(early.output(), new RegExp(`namespace \\\\"${namespace}\\\\" does not exist: run \`routectl setup\``));
    }

    log('== Temporal: routectl setup creates the namespace and search attributes; a second run finds them');
    const setup = await runFromBuild(['src/cli/routectl.js', 'setup'], temporalEnv);
    assert.equal(setup.code, 0, setup.output);
    assert.match(setup.output, new RegExp(`created namespace "${namespace}"`));
    assert.match(setup.output, /created search attribute TransferStatus \(Keyword\)/);
    const setupAgain = await runFromBuild(['src/cli/routectl.js', 'setup'], temporalEnv);
    assert.equal(setupAgain.code, 0, setupAgain.output);
    assert.doesNotMatch(setupAgain.output, /created/);

    log('== two workers and two APIs from dist/, the APIs behind a load balancer (TRUST_PROXY_HOPS=1)');
    let workerA = startFromBuild('worker A', 'worker', workerEnv(workerHttpA!, metricsA!), 'worker running');
    const workerB = startFromBuild('worker B', 'worker', workerEnv(workerHttpB!, metricsB!), 'worker running');
    const [workerStart] = await Promise.all([workerA.ready, workerB.ready]);
    const buildId = /"buildId":"([\w.-]+)"/.exec(workerA.output())?.[1];
    assert.ok(buildId && workerB.output().includes(`"buildId":"${buildId}"`), 'workers of one build log one build id (the workflow code’s hash)');
    const routectlEnv = { ...temporalEnv, TEMPORAL_WORKER_DEPLOYMENT: DEPLOYMENT, ROUTECTL_OPERATOR: 'rehearsal' };
    const before = await runFromBuild(['src/cli/routectl.js', 'workers'], routectlEnv);
    assert.match(before.output, /current version \(none: workflow tasks wait until one is promoted\)/, before.output);
    const first = await runFromBuild(['src/cli/routectl.js', 'workers', 'promote', buildId, '--reason', 'first deployment'], routectlEnv);
    assert.equal(first.code, 0, first.output);
    assert.match(first.output, new RegExp(`${buildId} is current \\(was none\\)`));
    let apiA = startFromBuild('API A', 'api', apiEnv(apiPortA!), 'api listening');
    const apiB = startFromBuild('API B', 'api', apiEnv(apiPortB!), 'api listening');
    const [apiStart] = await Promise.all([apiA.ready, apiB.ready]);
    balancer = await startLoadBalancer([apiPortA!, apiPortB!]);
    figures.push(
      `signer ${signerStart.startMs} ms, ${signerStart.rssMiB} MiB`,
      `worker ${workerStart.startMs} ms, ${workerStart.rssMiB} MiB`,
      `API ${apiStart.startMs} ms, ${apiStart.rssMiB} MiB (start to serving; RSS when serving)`,
    );
    for (const file of ['/t/app.js', '/t/app.css']) {
      const served = await callAs('127.0.0.1', `${balancer.url}${file}`);
      assert.equal(served.status, 200, `the build serves ${file}`);
    }

    log('== routes: each from its own client address and wallet — quote, create citing the quoteId, fund');
    const chainOf = (role: string) => manifest.chains.find((c) => c.role === role)!;
    const usdc = (role: string) => chainOf(role).tokens.find((t) => t.symbol === 'USDC')!.address;
    const routeCount = opts.routes ?? 4;
    const routes: {
      routeId: string;
      statusToken: string;
      recipient: Address;
      quotedOutputAmount: string;
      depositAddress: Address;
      amount: string;
      client: string;
    }[] = [];
    for (let i = 0; i < routeCount; i++) {
      const client = `127.0.0.${11 + i}`;
      const recipient = privateKeyToAccount(generatePrivateKey()).address;
      const quoteRequest = {
        sourceChainId: chainOf('source').chainId,
        destChainId: chainOf('destination').chainId,
        amount: `${100 + i}`,
        destTokenSymbol: 'USDC',
      };
      const quoted = await callAs(client, `${balancer.url}/api/private-route/quote`, quoteRequest);
      assert.equal(quoted.status, 200, `quote: ${quoted.text}`);
      const quote = JSON.parse(quoted.text) as { data: { quoteId: string; quotedOutputAmount: string } };
      const created = await callAs(client, `${balancer.url}/api/private-route`, {
        ...quoteRequest,
        userDestinationAddress: recipient,
        quoteId: quote.data.quoteId,
        ...(i === 0 && { minAnonymitySet: routeCount + 1 }),
      });
      assert.equal(created.status, 200, `create: ${created.text}`);
      const route = (JSON.parse(created.text) as { data: (typeof routes)[number] & { quoteId: string } }).data;
      assert.equal(route.quoteId, quote.data.quoteId);
      assert.equal(route.quotedOutputAmount, quote.data.quotedOutputAmount, 'the create is exactly the quote it cites');
      routes.push({ ...route, recipient, client });
    }
    const [hashes] = await onDatabase<{ n: number }[]>`
      select count(distinct client_hash)::int as n from transfers where route_id in ${onDatabase(routes.map((r) => r.routeId))}`;
    assert.equal(hashes?.n, routeCount, 'behind the balancer each client is itself (TRUST_PROXY_HOPS=1), not the balancer');
    const proxyWarnings = [apiA, apiB].filter((a) => a.output().includes('TRUST_PROXY_HOPS is 0'));
    assert.equal(proxyWarnings.length, 0, 'no API warns of forwarded headers it ignores');
    for (const route of routes)
      await sendAsNewUser({
        rpcUrl: chainOf('source').rpcUrl,
        faucetPrivateKey: manifest.faucetPrivateKey,
        token: usdc('source'),
        to: route.depositAddress,
        amount: BigInt(route.amount),
      });

    const statusOf = async (route: (typeof routes)[number]) => {
      const answer = await callAs(route.client, `${balancer!.url}/api/private-route/${route.routeId}`, undefined, {
        authorization: `Bearer ${route.statusToken}`,
      });
      assert.equal(answer.status, 200, `status of ${route.routeId}: ${answer.text}`);
      return (JSON.parse(answer.text) as { data: { status: string; error: string | null } }).data;
    };
    // Every route is read through the balancer the whole time: a restart must not fail a single request.
    let watching = true;
    let reads = 0;
    const watcher = (async () => {
      while (watching) {
        for (const route of routes) {
          await statusOf(route);
          reads++;
        }
        await new Promise((r) => setTimeout(r, 200));
      }
    })();

    log('== mid-route: a rolling deploy (a new worker version beside the old, promoted, old worker A stopped), API A restarted, worker B SIGKILLed');
    await waitUntil(
      'a route in the pool',
      async () => (await Promise.all(routes.map(statusOf))).some((t) => t.status === 'SHIELDED' || t.status === 'UNSHIELD_SENT'),
      180_000,
    );
    const nextBuildId = `${buildId}-next`;
    const workerNext = startFromBuild('worker of the next version', 'worker', workerEnv(workerHttpA2!, metricsNext!, nextBuildId), 'worker running');
    await workerNext.ready;
    const promoted = await runFromBuild(['src/cli/routectl.js', 'workers', 'promote', nextBuildId, '--reason', 'rolling deploy'], routectlEnv);
    assert.equal(promoted.code, 0, promoted.output);
    assert.match(promoted.output, new RegExp(`${nextBuildId} is current \\(was ${buildId}\\)`));
    await stopGracefully(workerA);
    workerA = workerNext;
    await stopGracefully(apiA);
    apiA = startFromBuild('API A (restarted)', 'api', apiEnv(apiPortA!), 'api listening');
    await apiA.ready;
    const provingProcessesOfB = nativeProversOf(workerB.child.pid!);
    workerB.child.kill('SIGKILL');
    assert.equal(await workerB.exited, null);
    const waiting = await statusOf(routes[0]!);
    assert.ok(!['COMPLETED', 'FAILED'].includes(waiting.status), `the waiting route is still in flight after the deploy and the crash (${waiting.status})`);
    await waitUntil('worker B’s native provers gone', async () => provingProcessesOfB.every((pid) => !isAlive(pid)), 15_000);

    log('== every route COMPLETED and paid exactly its quote, once');
    const destinationChain = createPublicClient({ transport: http(chainOf('destination').rpcUrl) });
    for (const route of routes) {
      let final: { status: string; error: string | null } | undefined;
      await waitUntil(
        `${route.routeId} to finish`,
        async () => {
          const view = await statusOf(route);
          if (view.status === 'COMPLETED' || view.status === 'FAILED') final = view;
          return final !== undefined;
        },
        300_000,
      );
      assert.equal(final?.status, 'COMPLETED', final?.error ?? '');
      const paid = await destinationChain.readContract({ address: usdc('destination'), abi: erc20Abi, functionName: 'balanceOf', args: [route.recipient] });
      assert.equal(paid, BigInt(route.quotedOutputAmount), `${route.routeId}: the recipient got exactly the quote`);
    }
    watching = false;
    await watcher;
    // The waiting route's workflow ran its last tasks on the promoted version.
    const temporalConnection = await Connection.connect({ address: configEnv.TEMPORAL_ADDRESS! });
    try {
      const described = await temporalConnection.workflowService.describeWorkflowExecution({ namespace, execution: { workflowId: routes[0]!.routeId } });
      const ranOn = described.workflowExecutionInfo?.versioningInfo?.deploymentVersion?.buildId;
      assert.equal(ranOn, nextBuildId, 'the route that waited through the deploy finished on the new version');
    } finally {
      await temporalConnection.close();
    }
    const payouts = await onDatabase<{ route_id: string; n: number }[]>`
      select route_id, count(*)::int as n from ledger_entries where kind = 'bridged_out' group by route_id`;
    assert.deepEqual(Object.fromEntries(payouts.map((p) => [p.route_id, p.n])), Object.fromEntries(routes.map((r) => [r.routeId, 1])), 'one payout per route');
    assert.equal(balancer.failed(), 0, 'no request failed through the restarts');
    assert.equal(workerA.child.exitCode, null, 'the new version’s worker still runs');
    const after = await runFromBuild(['src/cli/routectl.js', 'workers', '--json'], routectlEnv);
    const deployment = JSON.parse(after.output) as { current: string; versions: { buildId: string; status: string }[] };
    assert.equal(deployment.current, nextBuildId);
    assert.notEqual(deployment.versions.find((v) => v.buildId === buildId)?.status, 'current', 'the old version no longer gets tasks');
    const peakOf = (pid: number) => Math.round(Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]) / 1024);
    const nativePeaks = nativeProversOf(workerA.child.pid!).map(peakOf);
    figures.push(`the new version's worker peak RSS ${peakOf(workerA.child.pid!)} MiB, its native provers ${nativePeaks.join(' + ') || 'none running'} MiB`);
    figures.push(`${reads} status reads through the balancer during the restarts, ${balancer.retried()} moved to the other replica, 0 failed`);

    return {
      routes: routeCount,
      distinctClients: hashes!.n,
      retriedByBalancer: balancer.retried(),
      figures,
      summary:
        `rehearsal passed: roles (worker, API and signer as their own least-privilege logins; migrations by a one-shot job, twice at once), ` +
        `signer keys generated in a PKCS#11 token, 2 workers + 2 APIs from dist/ behind a load balancer (TRUST_PROXY_HOPS=1, ${hashes!.n} distinct clients), ` +
        `mid-route a rolling deploy to a second worker version (promoted, the old one stopped, a waiting route finished on the new one), an API restarted with 0 failed requests and a worker SIGKILLed, ` +
        `${routeCount} routes quote → create(quoteId) → COMPLETED, each paid exactly its quote once`,
    };
  } finally {
    for (const service of running) if (service.child.exitCode === null && service.child.signalCode === null) service.child.kill('SIGTERM');
    await Promise.all(running.map((service) => Promise.race([service.exited, new Promise((r) => setTimeout(r, 20_000))])));
    for (const service of running) service.child.kill('SIGKILL');
    await balancer?.stop();
    for (const cleanup of cleanups) await cleanup().catch(() => {});
    await infrastructure?.stop();
  }
}

/** A request from one client address (a loopback alias: 127.0.0.0/8 all reaches this host). */
function callAs(localAddress: string, url: string, body?: unknown, headers: Record<string, string> = {}): Promise<{ status: number; text: string }> {
  const target = new URL(url);
  const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
  return new Promise((resolve, reject) => {
    const call = request(
      {
        host: target.hostname,
        port: target.port,
        path: `${target.pathname}${target.search}`,
        method: payload ? 'POST' : 'GET',
        localAddress,
        agent: false,
        timeout: 30_000,
        headers: { ...headers, ...(payload && { 'content-type': 'application/json', 'content-length': String(payload.length) }) },
      },
      (answer) => {
        let text = '';
        answer.setEncoding('utf8');
        answer.on('data', (chunk: string) => (text += chunk));
        answer.on('end', () => resolve({ status: answer.statusCode ?? 0, text }));
      },
    );
    call.on('timeout', () => call.destroy(new Error(`${url}: no answer in 30 s`)));
    call.on('error', reject);
    call.end(payload);
  });
}

async function waitUntil(what: string, probe: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs / 1000} s waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** The native prover processes a process started (children of any of its threads). */
function nativeProversOf(pid: number): number[] {
  const children: number[] = [];
  for (const task of readdirSync(`/proc/${pid}/task`)) {
    for (const child of readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8').split(' ').filter(Boolean)) {
      if (readFileSync(`/proc/${child}/comm`, 'utf8').trim() === 'groth16-prover') children.push(Number(child));
    }
  }
  return children;
}

function isAlive(pid: number): boolean {
  try {
    return !/^State:\s+Z/m.test(readFileSync(`/proc/${pid}/status`, 'utf8'));
  } catch {
    return false;
  }
}
