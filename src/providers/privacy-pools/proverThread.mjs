/**
 * Body of one prover thread, started by prover.ts; the message shapes are ThreadRequest and
 * ThreadReply there.
 *
 * Plain JavaScript on purpose: under Node 20 a worker thread inherits `--import tsx` but tsx's
 * loader does not apply to the thread's own modules, so a .ts entry fails with
 * ERR_UNKNOWN_FILE_EXTENSION. This file only needs the SDK and snarkjs, so it loads the same way under
 * tsx, the test runner and plain node.
 *
 * On start it loads the six circuit files through the SDK, which checks each one's SHA-256 against
 * its own manifest; every byte it proves and verifies with is a byte that was checked. With the native
 * backend it then starts one native prover process per circuit (nativeProverProcess.mjs), hands each its
 * proving key, and proves and verifies one commitment as a self-check; with `auto`, a native prover that
 * is missing or fails that check leaves this thread on snarkjs. It answers `ready` (naming the backend it
 * uses) or `init-failed`, then proves one request at a time (the main thread never sends a second before
 * the first is answered). Every proof is verified against the circuit's verification key before it is
 * answered; one that does not verify is answered as a failure (PROOF_INVALID), never as a proof.
 */
import workerThreads from 'node:worker_threads';
import { NativeProverError, publicSignalsOf, startNativeProver } from './nativeProverProcess.mjs';

const { parentPort, workerData } = workerThreads;
if (!parentPort) throw new Error('proverThread.mjs runs only as a worker thread (see prover.ts)');
const port = parentPort;

// The SDK's bundle and snarkjs include snarkjs's field arithmetic (ffjavascript), which starts its own
// threads through the web-worker package (1.2.0). That package decides, once, while it is evaluated,
// from `isMainThread` alone, whether it runs inside one of its own threads; here it would take that
// branch, export nothing, and every proof would fail with "Worker is not a constructor" (fixed in
// web-worker 1.3.0, developit/web-worker#40). So evaluate both while `isMainThread` reads true:
// web-worker's own threads still see false and carry their `workerData.mod`, so they act as workers.
workerThreads.isMainThread = true;
const [{ Circuits }, snarkjs] = await Promise.all([import('@0xbow/privacy-pools-core-sdk'), import('snarkjs')]).finally(() => {
  workerThreads.isMainThread = false;
});

const CIRCUITS = { withdrawal: 'withdraw', commitment: 'commitment' };

const init = await load().catch((error) => {
  port.postMessage({ type: 'init-failed', error: describeError(error) });
  return null;
});
if (init) serve(init);

async function load() {
  const circuits = new Circuits({ browser: false, baseUrl: workerData.baseUrl });
  await circuits.initArtifacts('latest');
  const files = {};
  for (const [kind, name] of Object.entries(CIRCUITS)) {
    files[kind] = {
      wasm: await circuits.getWasm(name),
      zkey: await circuits.getProvingKey(name),
      vkey: JSON.parse(new TextDecoder().decode(await circuits.getVerificationKey(name))),
    };
  }
  if (workerData.backend === 'snarkjs') return { files, backend: 'snarkjs', native: null };
  const native = await startNative(files).catch((error) => {
    if (workerData.backend === 'native') throw error;
    return { fallbackReason: error.message };
  });
  if (native.fallbackReason) return { files, backend: 'snarkjs', native: null, fallbackReason: native.fallbackReason };
  return { files, backend: 'native', native };
}

/** One native process per circuit, each checked by proving and verifying one commitment. */
async function startNative(files) {
  const started = {};
  try {
    for (const kind of Object.keys(CIRCUITS)) {
      started[kind] = await startNativeProver(workerData.nativeBinary, files[kind].zkey, workerData.threadsPerProof);
    }
    const check = { value: 1n, label: 2n, nullifier: 3n, secret: 4n };
    await proveNative(files, started, 'commitment', check);
    return started;
  } catch (error) {
    for (const prover of Object.values(started)) prover.close();
    throw new NativeProverError(`the native prover failed its start-up check: ${error.message}`, 'NATIVE_UNAVAILABLE');
  }
}

async function proveNative(files, native, kind, signals) {
  const { wasm, vkey } = files[kind];
  const wtns = { type: 'mem' };
  try {
    await snarkjs.wtns.calculate(signals, wasm, wtns);
  } catch (error) {
    throw generationFailed(error);
  }
  try {
    const points = await native[kind].prove(wtns.data);
    const publicSignals = publicSignalsOf(wtns.data, native[kind].sizes.nPublic);
    return await verified(vkey, { proof: { ...points, protocol: 'groth16', curve: 'bn128' }, publicSignals });
  } finally {
    // The witness holds the note's secrets.
    wtns.data.fill(0);
  }
}

async function proveSnarkjs(files, kind, signals) {
  const { wasm, zkey, vkey } = files[kind];
  let result;
  try {
    result = await snarkjs.groth16.fullProve(signals, wasm, zkey);
  } catch (error) {
    throw generationFailed(error);
  }
  return verified(vkey, result);
}

async function verified(vkey, { proof, publicSignals }) {
  if (await snarkjs.groth16.verify(vkey, publicSignals, proof)) return { proof, publicSignals };
  throw Object.assign(new Error('the proof does not verify against the circuit’s verification key; it was not used'), { code: 'PROOF_INVALID' });
}

/** The SDK's wording for a witness the circuit rejects, which callers and tests already know. */
function generationFailed(error) {
  const message = error instanceof Error ? error.message : String(error);
  return Object.assign(new Error(`Failed to generate proof: ${message.trim()}`), { code: 'PROOF_GENERATION_FAILED' });
}

function serve({ files, backend, native, fallbackReason }) {
  port.on('message', async (request) => {
    if (request.type === 'close') {
      for (const prover of Object.values(native ?? {})) prover.close();
      process.exit(0);
    }
    try {
      const proof =
        backend === 'native' ? await proveNative(files, native, request.kind, request.signals) : await proveSnarkjs(files, request.kind, request.signals);
      port.postMessage({ type: 'proved', id: request.id, proof });
    } catch (error) {
      port.postMessage({ type: 'failed', id: request.id, error: describeError(error) });
      // A native process that died takes this thread with it; prover.ts starts a fresh one.
      if (error instanceof NativeProverError && error.code === 'NATIVE_EXITED') process.exit(1);
    }
  });
  port.postMessage({ type: 'ready', backend, fallbackReason });
}

function describeError(error) {
  if (!(error instanceof Error)) return { name: 'Error', message: String(error) };
  const cause = error.details?.error;
  return {
    name: error.name,
    message: typeof cause === 'string' ? `${error.message}: ${cause.trim()}` : error.message,
    code: typeof error.code === 'string' ? error.code : undefined,
  };
}
