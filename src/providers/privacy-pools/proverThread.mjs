/**
 * Body of one prover thread, started by prover.ts; the message shapes are ThreadRequest and
 * ThreadReply there.
 *
 * Plain JavaScript on purpose: under Node 20 a worker thread inherits `--import tsx` but tsx's
 * loader does not apply to the thread's own modules, so a .ts entry fails with
 * ERR_UNKNOWN_FILE_EXTENSION. This file only needs snarkjs, so it loads the same way under tsx, the test
 * runner and plain node.
 *
 * It gets the circuit files from prover.ts, which read them through the SDK's hash check; every byte it
 * proves and verifies with is a byte that was checked. With the native backend it starts one native
 * prover process per circuit (nativeProverProcess.mjs), hands each its proving key, and proves and
 * verifies one commitment as a self-check; with `auto`, a native prover that
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

// snarkjs's field arithmetic (ffjavascript) starts its own threads through the web-worker package (1.2.0).
// That package decides, once, while it is evaluated, from `isMainThread` alone, whether it runs inside one
// of its own threads; here it would take that branch, export nothing, and every proof would fail with
// "Worker is not a constructor" (fixed in web-worker 1.3.0, developit/web-worker#40). So evaluate snarkjs
// while `isMainThread` reads true: web-worker's own threads still see false and carry their
// `workerData.mod`, so they act as workers.
workerThreads.isMainThread = true;
const [snarkjs, { WitnessCalculatorBuilder }] = await Promise.all([import('snarkjs'), import('circom_runtime')]).finally(() => {
  workerThreads.isMainThread = false;
});

// One witness calculator per circuit (witnessOf), and the turn of the next witness.
const calculators = {};
let witnessTurn = Promise.resolve();

const init = await load().catch((error) => {
  port.postMessage({ type: 'init-failed', error: describeError(error) });
  return null;
});
if (init) serve(init);

/** The checked files from prover.ts; with the native backend, its processes (which keep the proving keys). */
async function load() {
  const { files } = workerData;
  if (workerData.backend === 'snarkjs') return { files, backend: 'snarkjs', slots: null };
  const slots = await startNative(files).catch((error) => {
    if (workerData.backend === 'native') throw error;
    return { fallbackReason: error.message };
  });
  if (slots.fallbackReason) return { files, backend: 'snarkjs', slots: null, fallbackReason: slots.fallbackReason };
  // The proving keys live in the native processes now: this thread keeps the wasm and the verification keys.
  for (const file of Object.values(files)) file.zkey = null;
  // Verification takes milliseconds: one field-arithmetic instance without threads of its own will do. snarkjs's
  // verify takes the curve ffjavascript keeps in globalThis.curve_bn128 (a threaded one, were none there).
  const { buildBn128 } = await import('ffjavascript');
  globalThis.curve_bn128 = await buildBn128(true);
  return { files, backend: 'native', slots };
}

/**
 * `workerData.slots` slots, each a native process per circuit; the first is checked by proving and verifying one
 * commitment. A slot proves one request at a time.
 */
async function startNative(files) {
  const slots = [];
  try {
    for (let i = 0; i < workerData.slots; i++) {
      const slot = { busy: false };
      slots.push(slot);
      for (const kind of Object.keys(files)) {
        slot[kind] = await startNativeProver(workerData.nativeBinary, files[kind].zkey, workerData.threadsPerProof);
      }
    }
    const check = { value: 1n, label: 2n, nullifier: 3n, secret: 4n };
    await proveNative(files, slots[0], 'commitment', check);
    return slots;
  } catch (error) {
    await closeSlots(slots);
    throw new NativeProverError(`the native prover failed its start-up check: ${error.message}`, 'NATIVE_UNAVAILABLE');
  }
}

/** Stops every native process and waits for each to be gone (an exit nobody waits for leaves a zombie). */
async function closeSlots(slots) {
  await Promise.all(
    (slots ?? []).flatMap((slot) =>
      Object.values(slot)
        .filter((p) => typeof p === 'object')
        .map((p) => p.close()),
    ),
  );
}

async function proveNative(files, slot, kind, signals) {
  let wtns;
  try {
    wtns = await witnessOf(files, kind, signals);
  } catch (error) {
    throw generationFailed(error);
  }
  try {
    const points = await slot[kind].prove(wtns);
    const publicSignals = publicSignalsOf(wtns, slot[kind].sizes.nPublic);
    return await verified(files[kind].vkey, { proof: { ...points, protocol: 'groth16', curve: 'bn128' }, publicSignals });
  } finally {
    // The witness holds the note's secrets (a best effort: the calculator's memory and the signals hold them too).
    wtns.fill(0);
  }
}

/**
 * The witness (.wtns bytes) of `signals`, from one witness calculator per circuit kept for the thread's life (as
 * snarkjs's wtns.calculate computes it, without compiling the circuit's wasm again for every proof). One at a time:
 * a calculator holds one witness.
 */
function witnessOf(files, kind, signals) {
  const turn = witnessTurn.then(async () => {
    calculators[kind] ??= WitnessCalculatorBuilder(files[kind].wasm);
    return (await calculators[kind]).calculateWTNSBin(signals, false);
  });
  witnessTurn = turn.catch(() => {});
  return turn;
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

function serve({ files, backend, slots, fallbackReason }) {
  port.on('message', async (request) => {
    if (request.type === 'close') {
      await closeSlots(slots);
      process.exit(0);
    }
    // prover.ts never sends more requests than the `capacity` this thread announced: a free slot is there.
    const slot = slots?.find((candidate) => !candidate.busy);
    if (slot) slot.busy = true;
    try {
      const proof = slot ? await proveNative(files, slot, request.kind, request.signals) : await proveSnarkjs(files, request.kind, request.signals);
      port.postMessage({ type: 'proved', id: request.id, proof });
    } catch (error) {
      port.postMessage({ type: 'failed', id: request.id, error: describeError(error) });
      // A native process that died (or hung) takes this thread with it; prover.ts starts a fresh one.
      if (error instanceof NativeProverError && error.code === 'NATIVE_EXITED') {
        await closeSlots(slots);
        process.exit(1);
      }
    } finally {
      if (slot) slot.busy = false;
    }
  });
  port.postMessage({ type: 'ready', backend, capacity: slots ? slots.length : 1, fallbackReason });
}

function describeError(error) {
  if (!(error instanceof Error)) return { name: 'Error', message: String(error) };
  return { name: error.name, message: error.message, code: typeof error.code === 'string' ? error.code : undefined };
}
