import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFile, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import * as snarkjs from 'snarkjs';
import { generateDepositSecrets, getCommitment, type Hash, type MasterKeys, type WithdrawalProof } from '@0xbow/privacy-pools-core-sdk';
import { CircuitArtifactError, ProverError, createProver } from '../../src/providers/privacy-pools/prover.ts';
import { LABEL, withdrawalOf } from '../support/withdrawals.ts';

const ARTIFACTS = path.dirname(createRequire(import.meta.url).resolve('@fatsolutions/privacy-pools-core-circuits/artifacts/withdraw.vkey'));
const ARTIFACT_FILES = ['withdraw', 'commitment'].flatMap((name) => ['wasm', 'zkey', 'vkey'].map((ext) => `${name}.${ext}`));

const KEYS = { masterNullifier: 123n, masterSecret: 456n } as unknown as MasterKeys;
const SCOPE = 0x5c09en as Hash;

async function verify(circuit: 'withdraw' | 'commitment', proof: WithdrawalProof): Promise<boolean> {
  const vkey = JSON.parse(await readFile(path.join(ARTIFACTS, `${circuit}.vkey`), 'utf8'));
  return snarkjs.groth16.verify(vkey, proof.publicSignals, proof.proof);
}

/** Runs `work` while a 20 ms interval measures the longest the event loop went without turning. */
async function timedWithEventLoopGap<T>(work: () => Promise<T>): Promise<{ result: T; elapsedMs: number; maxGapMs: number }> {
  const started = performance.now();
  let last = started;
  let maxGapMs = 0;
  const tick = () => {
    const now = performance.now();
    maxGapMs = Math.max(maxGapMs, now - last);
    last = now;
  };
  const timer = setInterval(tick, 20);
  try {
    const result = await work();
    tick();
    return { result, elapsedMs: performance.now() - started, maxGapMs };
  } finally {
    clearInterval(timer);
  }
}

for (const backend of ['native', 'snarkjs'] as const)
  describe(`privacy pools prover (${backend})`, () => {
    const prover = createProver({ backend, concurrency: 1 });
    const note = withdrawalOf(1_000_000n, 400_000n);
    // One withdrawal proof (seconds) serves the three tests that look at it.
    let withdrawalRun: ReturnType<typeof proveNoteWithdrawal> | undefined;
    async function proveNoteWithdrawal() {
      await prover.ready();
      return timedWithEventLoopGap(() => prover.proveWithdrawal(note.commitment, note.input));
    }

    after(async () => {
      await prover.close();
      // snarkjs.groth16.verify above started field-arithmetic threads in this process.
      await (globalThis as { curve_bn128?: { terminate(): Promise<void> } }).curve_bn128?.terminate();
    });

    test(`the ${backend} backend is the one proving`, { timeout: 60_000 }, async () => {
      await prover.ready();
      assert.equal(prover.setup().backend, backend);
    });

    test('a withdrawal proof verifies against withdraw.vkey and publishes the withdrawn amount', { timeout: 60_000 }, async (t) => {
      withdrawalRun ??= proveNoteWithdrawal();
      const { result: proof, elapsedMs } = await withdrawalRun;
      t.diagnostic(`withdrawal proof took ${Math.round(elapsedMs)} ms`);
      assert.equal(await verify('withdraw', proof), true);
      // [newCommitmentHash, existingNullifierHash, withdrawnValue, stateRoot, stateTreeDepth, ASPRoot, ASPTreeDepth, context]
      assert.equal(proof.publicSignals[2], '400000');
      assert.equal(proof.publicSignals[3], String(note.input.stateRoot));
      assert.equal(proof.publicSignals[5], String(note.input.aspRoot));
      assert.equal(proof.publicSignals[7], String(note.input.context));
    });

    test('the event loop keeps turning while a proof runs', { timeout: 60_000 }, async (t) => {
      withdrawalRun ??= proveNoteWithdrawal();
      const { maxGapMs, elapsedMs } = await withdrawalRun;
      t.diagnostic(`longest event-loop gap during a ${Math.round(elapsedMs)} ms proof: ${Math.round(maxGapMs)} ms`);
      // On the main thread the gap would be the whole proof (seconds); off it, only scheduling noise, which a
      // loaded CI machine stretches to a few hundred ms. Half the proof's time tells the two apart either way.
      assert.ok(maxGapMs < elapsedMs / 2, `event loop stalled for ${Math.round(maxGapMs)} ms of a ${Math.round(elapsedMs)} ms proof`);
    });

    test("the SDK's error comes back as a rejection: withdrawing more than the note holds", { timeout: 30_000 }, async () => {
      // The witness calculator also prints the failed assertion to stderr.
      const overdrawn = withdrawalOf(1_000n, 1_001n);
      await assert.rejects(prover.proveWithdrawal(overdrawn.commitment, overdrawn.input), (error: unknown) => {
        assert.ok(error instanceof ProverError);
        assert.equal(error.code, 'PROOF_GENERATION_FAILED');
        assert.match(error.message, /^Failed to generate proof: .*Assert Failed/);
        return true;
      });
    });

    test('with concurrency 1, two commitment (ragequit) proofs requested at once are queued and both verify', { timeout: 30_000 }, async () => {
      const secrets = [1n, 2n].map((index) => generateDepositSecrets(KEYS, SCOPE, index));
      const finished: number[] = [];
      const proofs = await Promise.all(
        secrets.map((s, i) =>
          prover.proveCommitment(5_000n + BigInt(i), LABEL + BigInt(i), s.nullifier, s.secret).then((proof) => {
            finished.push(i);
            return proof;
          }),
        ),
      );
      assert.deepEqual(finished, [0, 1]);
      for (const [i, proof] of proofs.entries()) {
        const s = secrets[i]!;
        assert.equal(await verify('commitment', proof), true);
        // [commitmentHash, nullifierHash, value, label]
        assert.equal(proof.publicSignals[0], String(getCommitment(5_000n + BigInt(i), LABEL + BigInt(i), s.nullifier, s.secret).hash));
        assert.equal(proof.publicSignals[2], String(5_000n + BigInt(i)));
        assert.equal(proof.publicSignals[3], String(LABEL + BigInt(i)));
      }
    });

    test('two proofs of one note and input differ (fresh blinding) and both verify with the same public signals', { timeout: 60_000 }, async () => {
      // The first is the shared withdrawal proof of `note`; the second proves the same note and input again.
      withdrawalRun ??= proveNoteWithdrawal();
      const { result: first } = await withdrawalRun;
      const second = await prover.proveWithdrawal(note.commitment, note.input);
      assert.deepEqual(first.publicSignals, second.publicSignals);
      assert.notDeepEqual(first.proof.pi_a, second.proof.pi_a);
      assert.notDeepEqual(first.proof.pi_b, second.proof.pi_b);
      assert.notDeepEqual(first.proof.pi_c, second.proof.pi_c);
      assert.equal(await verify('withdraw', first), true);
      assert.equal(await verify('withdraw', second), true);
    });
  });

describe('circuit artifact check', () => {
  /** A circuits directory (`<dir>/artifacts/*`) holding copies of the package's six files. */
  async function copiedCircuitsDir(): Promise<string> {
    const dir = await mkdtemp(path.join(tmpdir(), 'prover-circuits-'));
    await mkdir(path.join(dir, 'artifacts'));
    await Promise.all(ARTIFACT_FILES.map((file) => copyFile(path.join(ARTIFACTS, file), path.join(dir, 'artifacts', file))));
    return dir;
  }

  test('a tampered withdraw.zkey is refused before any proof', { timeout: 30_000 }, async () => {
    const dir = await copiedCircuitsDir();
    const prover = createProver({ circuitsDir: dir });
    try {
      const zkeyPath = path.join(dir, 'artifacts', 'withdraw.zkey');
      const zkey = await readFile(zkeyPath);
      zkey.writeUInt8(zkey.readUInt8(0) ^ 0x01, 0);
      await writeFile(zkeyPath, zkey);

      const refused = (error: unknown) => {
        assert.ok(error instanceof CircuitArtifactError);
        assert.equal(error.file, zkeyPath);
        assert.match(error.message, /withdraw\.zkey/);
        assert.match(error.message, /Reinstall @fatsolutions\/privacy-pools-core-circuits/);
        return true;
      };
      await assert.rejects(prover.ready(), refused);
      await assert.rejects(prover.proveCommitment(1n, 2n, 3n, 4n), refused);
    } finally {
      await prover.close();
      await rm(dir, { recursive: true, force: true });
    }
  });

  test('untouched copies are accepted', { timeout: 30_000 }, async () => {
    const dir = await copiedCircuitsDir();
    const prover = createProver({ circuitsDir: dir });
    try {
      await prover.ready();
    } finally {
      await prover.close();
      await rm(dir, { recursive: true, force: true });
    }
  });

  test('idle threads are stopped: the next proof starts them again and checks the files again', { timeout: 60_000 }, async () => {
    const dir = await copiedCircuitsDir();
    const prover = createProver({ circuitsDir: dir, idleMs: 200 });
    try {
      await prover.ready();
      const secrets = generateDepositSecrets(KEYS, SCOPE, 7n);
      // [commitmentHash, nullifierHash, value, label] (verification is the first suite's business).
      assert.equal((await prover.proveCommitment(7n, LABEL, secrets.nullifier, secrets.secret)).publicSignals[2], '7');
      await new Promise((r) => setTimeout(r, 1_000));
      // Threads still running would prove with the bytes they checked at start; restarted ones read the file again.
      const zkeyPath = path.join(dir, 'artifacts', 'commitment.zkey');
      const zkey = await readFile(zkeyPath);
      zkey.writeUInt8(zkey.readUInt8(0) ^ 0x01, 0);
      await writeFile(zkeyPath, zkey);
      await assert.rejects(prover.proveCommitment(8n, LABEL, secrets.nullifier, secrets.secret), (error: unknown) => error instanceof CircuitArtifactError);
    } finally {
      await prover.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
