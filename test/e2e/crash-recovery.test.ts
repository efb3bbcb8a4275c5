/**
 * The local stack after a crash of its own process (kill -9): the next start stops what the crashed run left
 * behind (and nothing else), in-flight transfers complete exactly, and a stop takes seconds.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import { createPublicClient, createWalletClient, erc20Abi, http, parseUnits, type Address } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { freePorts } from '../../devnet/ports.ts';
import { PROCESSES_FILE, claimDataDir, commandOf } from '../../devnet/processes.ts';
import { readStackInfo } from '../../devnet/stackInfo.ts';
import { waitFor } from '../support/testStack.ts';

const repoRoot = path.resolve(import.meta.dirname, '../..');

interface StackProcess {
  child: ChildProcess;
  apiUrl: string;
  output: () => string;
}

function startStackProcess(options: unknown): Promise<StackProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'test/support/stackProcess.ts', JSON.stringify(options)], {
    cwd: repoRoot,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the stack did not start within 120 s:\n${output.slice(-3000)}`)), 120_000);
    const onData = () => {
      const ready = /READY (\S+)/.exec(output);
      if (!ready) return;
      clearTimeout(timer);
      child.stdout?.off('data', onData);
      resolve({ child, apiUrl: ready[1]!, output: () => output });
    };
    child.stdout?.on('data', onData);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`the stack exited (${code}) before it was ready:\n${output.slice(-3000)}`));
    });
  });
}

function exited(child: ChildProcess): Promise<void> {
  return child.exitCode !== null || child.signalCode !== null ? Promise.resolve() : new Promise((resolve) => child.once('exit', () => resolve()));
}

/** Calls the API; with `statusToken`, as the transfer's creator (the full view, not limited like reads without one). */
async function api<T>(apiUrl: string, method: 'GET' | 'POST', route: string, body?: unknown, statusToken?: string): Promise<T> {
  const response = await fetch(`${apiUrl}${route}`, {
    method,
    headers: { ...(body ? { 'content-type': 'application/json' } : {}), ...(statusToken ? { authorization: `Bearer ${statusToken}` } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  const json = (await response.json()) as { success: boolean; data: T; error?: string };
  if (!json.success) throw new Error(`${method} ${route}: ${json.error}`);
  return json.data;
}

describe('crash recovery of the local stack', { timeout: 480_000 }, () => {
  const cleanups: Array<() => Promise<void>> = [];
  after(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup().catch(() => {});
  });

  test('after kill -9, the next start stops the leftovers and completes the transfers in flight exactly; Ctrl-C then stops in seconds', async () => {
    const dataDir = await mkdtemp(path.join(tmpdir(), 'private-route-crash-'));
    const [apiPort, temporal, temporalUi, postgres, relay, source, hub, destination, workerHttp] = await freePorts(9);
    const options = {
      dataDir,
      ports: { api: apiPort, temporal, temporalUi, postgres, relay, source, hub, destination, workerHttp },
      env: { DATABASE_URL: process.env.TEST_DATABASE_URL },
    };
    let current = await startStackProcess(options);
    cleanups.push(async () => {
      current.child.kill('SIGINT');
      await exited(current.child);
      await rm(dataDir, { recursive: true, force: true });
    });

    const { manifest } = readStackInfo(dataDir);
    const chain = (role: string) => manifest.chains.find((c) => c.role === role)!;
    const usdc = (role: string) => chain(role).tokens.find((t) => t.symbol === 'USDC')!.address as Address;
    const recipients: Address[] = ['0x00000000000000000000000000000000000C0001', '0x00000000000000000000000000000000000C0002'];
    const routes: Array<{ routeId: string; statusToken: string; depositAddress: Address; amount: string; quotedOutputAmount: string }> = [];
    for (const [i, recipient] of recipients.entries()) {
      routes.push(
        await api(current.apiUrl, 'POST', '/api/private-route', {
          sourceChainId: chain('source').chainId,
          destChainId: chain('destination').chainId,
          amount: String(20 + i),
          destTokenSymbol: 'USDC',
          userDestinationAddress: recipient,
        }),
      );
    }
    const faucet = createWalletClient({ account: privateKeyToAccount(manifest.faucetPrivateKey), transport: http(chain('source').rpcUrl) });
    const sourceClient = createPublicClient({ transport: http(chain('source').rpcUrl) });
    for (const route of routes) {
      const hash = await faucet.writeContract({
        chain: null,
        address: usdc('source'),
        abi: erc20Abi,
        functionName: 'transfer',
        args: [route.depositAddress, parseUnits(route.amount, 6)],
      });
      await sourceClient.waitForTransactionReceipt({ hash });
    }
    // Crash while both are past their deposit and not yet paid.
    await waitFor(
      'both transfers in flight',
      async () => {
        const statuses = await Promise.all(
          routes.map((r) => api<{ status: string }>(current.apiUrl, 'GET', `/api/private-route/${r.routeId}`, undefined, r.statusToken)),
        );
        return statuses.every((s) => s.status !== 'AWAITING_DEPOSIT') ? true : undefined;
      },
      120_000,
      500,
    );

    const recorded = JSON.parse(readFileSync(path.join(dataDir, PROCESSES_FILE), 'utf8')) as { children: Array<{ pid: number; command: string }> };
    assert.ok(recorded.children.length >= 4, 'the chains and the Temporal server are recorded');
    current.child.kill('SIGKILL');
    await exited(current.child);
    assert.ok(
      recorded.children.every((c) => commandOf(c.pid) === c.command),
      'the crash left the children running',
    );

    current = await startStackProcess(options);
    assert.match(current.output(), /an earlier run ended without stopping its processes/);
    assert.ok(
      recorded.children.every((c) => commandOf(c.pid) !== c.command),
      'the leftovers were stopped',
    );

    const destClient = createPublicClient({ transport: http(chain('destination').rpcUrl) });
    for (const [i, route] of routes.entries()) {
      const done = await waitFor(
        `${route.routeId} COMPLETED`,
        async () => {
          const t = await api<{ status: string }>(current.apiUrl, 'GET', `/api/private-route/${route.routeId}`, undefined, route.statusToken);
          assert.notEqual(t.status, 'FAILED');
          return t.status === 'COMPLETED' ? t : undefined;
        },
        240_000,
        500,
      );
      assert.equal(done.status, 'COMPLETED');
      const paid = await destClient.readContract({ address: usdc('destination'), abi: erc20Abi, functionName: 'balanceOf', args: [recipients[i]!] });
      assert.equal(paid, BigInt(route.quotedOutputAmount), 'the recipient got exactly the quote, once');
    }

    const stopping = Date.now();
    current.child.kill('SIGINT');
    await exited(current.child);
    const stopSeconds = (Date.now() - stopping) / 1000;
    assert.ok(stopSeconds < 30, `the stop took ${stopSeconds} s`);
    assert.equal(existsSync(path.join(dataDir, PROCESSES_FILE)), false, 'a clean stop leaves no process record');
  });

  test('a recorded pid that now runs another command is left alone', async () => {
    const dataDir = await mkdtemp(path.join(tmpdir(), 'private-route-claim-'));
    const stranger = spawn('sleep', ['60'], { stdio: 'ignore' });
    cleanups.push(async () => {
      stranger.kill('SIGKILL');
      await rm(dataDir, { recursive: true, force: true });
    });
    const deadOwner = { pid: 2 ** 22 + 12345, command: 'node --import tsx devnet/start.ts' };
    writeFileSync(
      path.join(dataDir, PROCESSES_FILE),
      JSON.stringify({ owner: deadOwner, children: [{ name: 'anvil', pid: stranger.pid, command: 'anvil --port 8545', stopSignal: 'SIGTERM' }] }),
    );
    const registry = await claimDataDir(dataDir, { graceMs: 1_000 });
    registry.close();
    assert.equal(stranger.exitCode, null);
    assert.equal(stranger.signalCode, null);
    assert.ok(commandOf(stranger.pid!)?.startsWith('sleep'), 'the stranger still runs');
  });

  test('a start refuses a data folder whose earlier run is still alive', async () => {
    const dataDir = await mkdtemp(path.join(tmpdir(), 'private-route-claim-'));
    const owner = spawn('sleep', ['60'], { stdio: 'ignore' });
    cleanups.push(async () => {
      owner.kill('SIGKILL');
      await rm(dataDir, { recursive: true, force: true });
    });
    await waitFor('sleep to run', async () => (commandOf(owner.pid!) ? true : undefined), 5_000, 20);
    writeFileSync(path.join(dataDir, PROCESSES_FILE), JSON.stringify({ owner: { pid: owner.pid, command: commandOf(owner.pid!) }, children: [] }));
    await assert.rejects(claimDataDir(dataDir), /another private-route stack \(pid \d+\) is running with the data folder/);
  });
});
