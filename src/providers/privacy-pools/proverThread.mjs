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
 * proves and verifies with is a byte that was checked.
 * - snarkjs backend: it proves one request at a time with snarkjs (its `capacity` is 1).
 * - native backend: `workerData.slots` slots, each a native prover process per circuit
 *   (nativeProverProcess.mjs) holding that circuit's proving key; the thread computes each witness and
 *   hands it to a free slot, so it proves up to `slots` requests at once. A slot whose process dies or
 *   hangs fails only its own request and is started again. The first slot proves and verifies one
 *   commitment as a start-up check; with `auto`, a native prover that is missing or fails that check leaves
 *   this thread on snarkjs.
 * It answers `ready` (the backend it uses and its capacity) or `init-failed`, then one `proved` or `failed`
 * per request. Every proof is verified against the circuit's verification key before it is answered; one
 * that does not verify is answered as a failure (PROOF_INVALID), never as a proof. `close` stops the native
 * processes (waiting until they are gone) and ends the thread, at any moment, loading included.
 */
import workerThreads from 'node:worker_threads';
import { NativeProverError, publicSignalsOf, startNativeProver } from './nativeProverProcess.mjs';

const { parentPort, workerData } = workerThreads;
if (!parentPort) throw new Error('proverThread.mjs runs only as a worker thread (see prover.ts)');
const port = parentPort;
const { files } = workerData;

/** The native slots started so far ({ busy, withdrawal, commitment }); `close` stops every one. */
const slots = [];
/** Requests waiting for a slot (one is restarting). */
const slotWaiters = [];
let closing = false;
/** The slot being started, while one is. */
let slotStarting = null;
// One witness calculator per circuit (witnessOf), and the turn of the next witness.
const calculators = {};
let witnessTurn = Promise.resolve();

port.on('message', (message) => {
  if (message.type === 'close') void close();
});

// snarkjs's field arithmetic (ffjavascript) starts its own threads through the web-worker package (1.2.0).
// That package decides, once, while it is evaluated, from `isMainThread` alone, whether it runs inside one
// of its own threads; here it would take that branch, export nothing, and every proof would fail with
// "Worker is not a constructor" (fixed in web-worker 1.3.0, developit/web-worker#40). So evaluate snarkjs
// while `isMainThread` reads true: web-worker's own threads still see false and carry their
// `workerData.mod`, so they act as workers.
workerThreads.isMainThread = true;
const [snarkjs, { WitnessCalculatorBuilder }, { buildBn128 }] = await Promise.all([
  import('snarkjs'),
  import('circom_runtime'),
  import('ffjavascript'),
]).finally(() => {
  workerThreads.isMainThread = false;
});

const init = await load().catch((error) => {
  // Closed while starting: close() ends the thread; its processes' deaths are not a failed start.
  if (!closing) port.postMessage({ type: 'init-failed', error: describeError(error) });
  return null;
});
if (init && !closing) serve(init);

async function load() {
  if (workerData.backend === 'snarkjs') return { backend: 'snarkjs', capacity: 1 };
  try {
    await startNative();
  } catch (error) {
    await closeSlots();
    if (workerData.backend === 'native') throw error;
    return { backend: 'snarkjs', capacity: 1, fallbackReason: error.message };
  }
  // Verification takes milliseconds: one field-arithmetic instance without threads of its own will do. snarkjs's
  // verify takes the curve ffjavascript keeps in globalThis.curve_bn128 (a threaded one, were none there).
  globalThis.curve_bn128 = await buildBn128(true);
  return { backend: 'native', capacity: slots.length };
}

/** Starts every slot, then checks the first by proving and verifying one commitment. */
async function startNative() {
  try {
    for (let i = 0; i < workerData.slots && !closing; i++) {
      slotStarting = startSlot();
      slots.push(await slotStarting);
    }
    if (closing) return;
    await proveNative(slots[0], 'commitment', { value: 1n, label: 2n, nullifier: 3n, secret: 4n });
  } catch (error) {
    throw new NativeProverError(`the native prover failed its start-up check: ${error.message}`, 'NATIVE_UNAVAILABLE');
  }
}

async function startSlot() {
  const slot = { busy: false };
  try {
    for (const kind of Object.keys(files)) {
      slot[kind] = await startNativeProver(workerData.nativeBinary, files[kind].zkey, workerData.threadsPerProof);
    }
  } catch (error) {
    await closeSlot(slot);
    throw error;
  }
  return slot;
}

/** Ends a slot's processes and waits until they are gone (an exit nobody waits for leaves a zombie). */
async function closeSlot(slot) {
  await Promise.all(Object.values(slot).flatMap((process) => (typeof process === 'object' ? [process.close()] : [])));
}

async function closeSlots() {
  await Promise.all(slots.splice(0).map(closeSlot));
}

async function close() {
  if (closing) return;
  closing = true;
  for (const waiter of slotWaiters.splice(0)) waiter.reject(new NativeProverError('prover closed', 'PROVER_CLOSED'));
  // A slot still starting joins `slots` when it is up (or closes itself if it fails): its processes are closed and
  // reaped with the others, never left to end unwaited for when this thread exits.
  await slotStarting?.catch(() => {});
  await closeSlots();
  process.exit(0);
}

/** A slot that is not proving, once one is free (prover.ts sends at most `capacity` requests at once). */
function freeSlot() {
  const slot = slots.find((candidate) => !candidate.busy && !candidate.restarting);
  if (slot) {
    slot.busy = true;
    return Promise.resolve(slot);
  }
  return new Promise((resolve, reject) => slotWaiters.push({ resolve, reject }));
}

function release(slot) {
  const waiter = slotWaiters.shift();
  if (waiter) waiter.resolve(slot);
  else slot.busy = false;
}

/** A slot whose process died (or hung): its processes are replaced; if that fails, the thread ends (prover.ts replaces it). */
async function restart(slot) {
  slot.restarting = true;
  await closeSlot(slot);
  if (closing) return;
  try {
    const fresh = await startSlot();
    if (closing) {
      await closeSlot(fresh);
      return;
    }
    Object.assign(slot, fresh);
  } catch (error) {
    port.postMessage({ type: 'dying', error: describeError(error) });
    await close();
    return;
  }
  slot.restarting = false;
  release(slot);
}

async function proveNative(slot, kind, signals) {
  let wtns;
  try {
    wtns = await witnessOf(kind, signals);
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
 * a calculator holds one witness. A calculator that failed is built again (it keeps every failure's message).
 */
function witnessOf(kind, signals) {
  const turn = witnessTurn.then(async () => {
    calculators[kind] ??= WitnessCalculatorBuilder(files[kind].wasm);
    try {
      return await (await calculators[kind]).calculateWTNSBin(signals, false);
    } catch (error) {
      calculators[kind] = undefined;
      throw error;
    }
  });
  witnessTurn = turn.catch(() => {});
  return turn;
}

async function proveSnarkjs(kind, signals) {
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

function serve({ backend, capacity, fallbackReason }) {
  port.on('message', async (request) => {
    if (request.type === 'close') return;
    let slot = null;
    try {
      if (backend === 'native') slot = await freeSlot();
      const proof = slot ? await proveNative(slot, request.kind, request.signals) : await proveSnarkjs(request.kind, request.signals);
      port.postMessage({ type: 'proved', id: request.id, proof });
    } catch (error) {
      port.postMessage({ type: 'failed', id: request.id, error: describeError(error) });
      if (slot && error instanceof NativeProverError && error.code === 'NATIVE_EXITED') {
        void restart(slot);
        slot = null;
      }
    } finally {
      if (slot) release(slot);
    }
  });
  port.postMessage({ type: 'ready', backend, capacity, fallbackReason });
}

function describeError(error) {
  if (!(error instanceof Error)) return { name: 'Error', message: String(error) };
  return { name: error.name, message: error.message, code: typeof error.code === 'string' ? error.code : undefined };
}
