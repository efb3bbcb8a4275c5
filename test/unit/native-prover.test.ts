import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { chmod, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { generateDepositSecrets, type Hash, type MasterKeys } from '@0xbow/privacy-pools-core-sdk';
import { ProofInvalidError, ProverError, createProver, proverSizing } from '../../src/providers/privacy-pools/prover.ts';
import { withdrawalOf } from '../support/withdrawals.ts';

const BUILT = proverSizing({}).nativeBinary;
const KEYS = { masterNullifier: 11n, masterSecret: 22n } as unknown as MasterKeys;
const SCOPE = 0xabcn as Hash;
const LABEL = 424_242n;
const dirs: string[] = [];

after(async () => {
  await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
});

async function scratch(): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), 'native-prover-'));
  dirs.push(dir);
  return dir;
}

/** An executable script standing in for the native prover (node by absolute path: the prover gets no PATH). */
async function fakeProver(body: string): Promise<string> {
  const file = path.join(await scratch(), 'fake-prover.mjs');
  await writeFile(file, `#!${process.execPath}\n${body}`);
  await chmod(file, 0o755);
  return file;
}

/** The pids of this process's children that run (or ran: zombies count) `binary`, by the kernel's process name. */
async function childrenRunning(binary: string): Promise<number[]> {
  const name = path.basename(binary).slice(0, 15);
  const pids: number[] = [];
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = await readFile(`/proc/${entry}/stat`, 'utf8');
      const comm = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === process.pid && comm === name) pids.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return pids;
}

/**
 * The pids of this process's children that run `binary`, once none is left or `ms` have passed (then the ones still
 * there). For moments when processes may only end: none can start any more.
 */
async function childrenGone(binary: string, ms = 15_000): Promise<number[]> {
  const deadline = Date.now() + ms;
  for (;;) {
    const pids = await childrenRunning(binary);
    if (pids.length === 0 || Date.now() > deadline) return pids;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

const commitmentProof = (prover: ReturnType<typeof createProver>, index: bigint) => {
  const secrets = generateDepositSecrets(KEYS, SCOPE, index);
  return prover.proveCommitment(1_000n + index, LABEL, secrets.nullifier, secrets.secret);
};

describe('native prover selection', () => {
  test('npm ci built the native prover on this machine, and the default prover uses it', { timeout: 60_000 }, async () => {
    // On x86-64 Linux scripts/build-native-prover.mjs installs what it needs: a fallback there means the install step
    // broke, and the service would be proving 4x slower. Elsewhere ffiasm's assembly does not build: snarkjs proves.
    const expected = process.platform === 'linux' && process.arch === 'x64' ? 'native' : 'snarkjs';
    const prover = createProver();
    try {
      await prover.ready();
      assert.equal(prover.setup().backend, expected, prover.setup().fallbackReason);
    } finally {
      await prover.close();
    }
  });

  test('auto without a binary proves with snarkjs and says why', { timeout: 60_000 }, async () => {
    const prover = createProver({ nativeBinary: '/nonexistent/groth16-prover' });
    try {
      await prover.ready();
      const setup = prover.setup();
      assert.equal(setup.backend, 'snarkjs');
      assert.equal(setup.concurrency, 1);
      assert.match(setup.fallbackReason ?? '', /no native prover at \/nonexistent\/groth16-prover.*npm run build:prover/);
      assert.equal((await commitmentProof(prover, 1n)).publicSignals[2], '1001');
    } finally {
      await prover.close();
    }
  });

  test('native asked for without a binary refuses to start', { timeout: 30_000 }, async () => {
    const prover = createProver({ backend: 'native', nativeBinary: '/nonexistent/groth16-prover' });
    try {
      await assert.rejects(prover.ready(), (error: unknown) => error instanceof ProverError && error.code === 'NATIVE_UNAVAILABLE');
    } finally {
      await prover.close();
    }
  });

  test('auto with a binary that fails its start-up check falls back to snarkjs', { timeout: 60_000 }, async () => {
    const prover = createProver({ nativeBinary: await fakeProver('process.exit(3);\n'), concurrency: 1 });
    try {
      await prover.ready();
      assert.equal(prover.setup().backend, 'snarkjs');
      assert.match(prover.setup().fallbackReason ?? '', /start-up check.*exit code 3/);
      assert.equal((await commitmentProof(prover, 2n)).publicSignals[2], '1002');
    } finally {
      await prover.close();
    }
  });
});

describe('native prover safety', () => {
  test('a proof that does not verify is never returned: it fails as ProofInvalidError', { timeout: 60_000 }, async () => {
    // Relays to the real prover, passes its start-up check (the first proof of each process), then swaps A and C.
    const liar = await fakeProver(`
import { spawn } from 'node:child_process';
const real = spawn(${JSON.stringify(BUILT)}, process.argv.slice(2), { stdio: ['inherit', 'pipe', 'inherit'] });
let pending = Buffer.alloc(0);
let proofs = 0;
real.stdout.on('data', (chunk) => {
  pending = Buffer.concat([pending, chunk]);
  while (pending.length >= 9) {
    const length = Number(pending.readBigUInt64LE(1));
    if (pending.length < 9 + length) break;
    let frame = pending.subarray(0, 9 + length);
    pending = pending.subarray(9 + length);
    const body = JSON.parse(frame.subarray(9).toString());
    if (body.pi_a && ++proofs > 1) {
      const swapped = Buffer.from(JSON.stringify({ ...body, pi_a: body.pi_c, pi_c: body.pi_a }));
      const header = Buffer.alloc(9);
      header[0] = frame[0];
      header.writeBigUInt64LE(BigInt(swapped.length), 1);
      frame = Buffer.concat([header, swapped]);
    }
    process.stdout.write(frame);
  }
});
real.on('exit', (code) => process.exit(code ?? 1));
`);
    const prover = createProver({ backend: 'native', nativeBinary: liar, concurrency: 1 });
    try {
      await prover.ready();
      await assert.rejects(commitmentProof(prover, 3n), (error: unknown) => {
        assert.ok(error instanceof ProofInvalidError, String(error));
        assert.equal(error.code, 'PROOF_INVALID');
        return true;
      });
    } finally {
      await prover.close();
    }
  });

  test('a native process that dies fails only its own proof; its slot is started again', { timeout: 60_000 }, async () => {
    const prover = createProver({ backend: 'native', concurrency: 2 });
    try {
      await prover.ready();
      // Started in order: slot 0's withdraw and commitment processes, then slot 1's.
      const [withdraw0, , withdraw1] = (await childrenRunning(BUILT)).sort((a, b) => a - b);
      const proofs = [0n, 1n].map((index) => {
        const { commitment, input } = withdrawalOf(1_000n, 10n, index);
        return prover.proveWithdrawal(commitment, input).then(
          () => 'proved',
          (error: unknown) => (error instanceof ProverError ? error.code : String(error)),
        );
      });
      await new Promise((resolve) => setTimeout(resolve, 300));
      process.kill(withdraw0!, 'SIGKILL');
      assert.deepEqual((await Promise.all(proofs)).sort(), ['NATIVE_EXITED', 'proved']);
      // The slot is back: two proofs at once both go through, on four processes again (slot 1's untouched).
      const again = await Promise.all(
        [2n, 3n].map((index) => withdrawalOf(1_000n, 10n, index)).map(({ commitment, input }) => prover.proveWithdrawal(commitment, input)),
      );
      assert.equal(again.length, 2);
      const now = await childrenRunning(BUILT);
      assert.equal(now.length, 4);
      assert.ok(now.includes(withdraw1!) && !now.includes(withdraw0!));
    } finally {
      await prover.close();
    }
  });

  // At 0 ms the circuit files are still being checked; at 400 ms the threads are starting their native processes.
  for (const closeAfterMs of [0, 400])
    test(`close() ${closeAfterMs} ms into the prover's start leaves no native process behind`, { timeout: 60_000 }, async () => {
      const prover = createProver({ backend: 'native', concurrency: 2 });
      // Closed before it is ready, ready() rejects (PROVER_CLOSED): handled from the start.
      const starting = prover.ready().then(
        () => 'ready',
        (error: unknown) => (error instanceof ProverError ? error.code : String(error)),
      );
      await new Promise((resolve) => setTimeout(resolve, closeAfterMs));
      await prover.close();
      // close() waited for the start under way: from its return until ready() settles, no native process runs.
      let settled = false;
      const outcome = starting.finally(() => {
        settled = true;
      });
      const seen: number[] = [];
      while (!settled) {
        seen.push(...(await childrenRunning(BUILT)));
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      assert.ok(['ready', 'PROVER_CLOSED'].includes(await outcome), await outcome);
      assert.deepEqual(seen, [], 'native processes ran after close() returned');
      assert.deepEqual(await childrenRunning(BUILT), []);
    });

  test('close() and idle retirement leave no native process behind, not even a zombie', { timeout: 60_000 }, async () => {
    const prover = createProver({ backend: 'native', concurrency: 2, idleMs: 300 });
    await prover.ready();
    assert.equal((await childrenRunning(BUILT)).length, 4, 'one process per circuit per thread');
    assert.deepEqual(await childrenGone(BUILT), [], 'idle threads stopped their processes');
    assert.equal((await commitmentProof(prover, 6n)).publicSignals[2], '1006');
    await prover.close();
    assert.deepEqual(await childrenRunning(BUILT), []);
  });
});
