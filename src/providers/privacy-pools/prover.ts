import { accessSync, constants } from 'node:fs';
import { createRequire } from 'node:module';
import { availableParallelism } from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { AccountCommitment, Commitment, CommitmentProof, WithdrawalProof, WithdrawalProofInput } from '@0xbow/privacy-pools-core-sdk';
import { PrivateRouteError } from '../../errors.ts';
import { type CircuitSignals, commitmentSignals, withdrawalSignals } from './circuitSignals.ts';

/**
 * Privacy Pools Groth16 proofs, generated in worker threads so the event loop (Temporal heartbeats,
 * HTTP) keeps running during the time a proof takes.
 *
 * Two backends prove the same statements (docs/performance.md, "The prover"):
 * - `native`: our Groth16 prover on iden3's ffiasm (native/groth16-prover, built by `npm ci`), one process per
 *   circuit per thread, fed the witness the thread computes from the circuit's wasm;
 * - `snarkjs`: snarkjs in the thread, as the SDK proves.
 * `auto` (the default) takes the native prover where it is built and passes its start-up check, snarkjs elsewhere.
 * Either way the input signals are ours (circuitSignals.ts, equal to the SDK's) and every proof is verified
 * against the circuit's verification key before it is returned: one that does not verify is a ProofInvalidError.
 *
 * `ready()` reads the circuit files through the SDK's `Circuits`, which checks every file's SHA-256 against
 * the hashes shipped in the SDK and refuses a mismatch (CircuitArtifactError), and hands the checked bytes to
 * the threads (the native processes get their proving key through a pipe); the proof methods wait for
 * `ready()` themselves.
 *
 * At most `concurrency` proofs run at once; further requests wait in FIFO order. With snarkjs that is
 * `concurrency` threads proving one proof each; with the native backend one thread, which computes the witnesses and
 * verifies the proofs of `concurrency` native slots (a witness and a verification take under 0.1 s of a proof's
 * second or more, so one thread keeps a dozen cores busy). A thread that dies is replaced (the files checked again),
 * and the requests it was proving are rejected; a native slot whose process dies is restarted by its thread, and
 * only its own request fails. Idle threads do not hold the process open, and they stop (with their native
 * processes) after `idleMs`.
 */

export type ProverBackend = 'native' | 'snarkjs';

export interface ProverOptions {
  /**
   * A directory laid out like the npm package @fatsolutions/privacy-pools-core-circuits: it holds an
   * `artifacts/` folder with withdraw.{wasm,zkey,vkey} and commitment.{wasm,zkey,vkey}. (Not the
   * artifacts folder itself: the SDK always reads `artifacts/<file>` below the directory it is given.)
   * Default: the installed package. (The service reads it from PRIVACY_POOLS_CIRCUITS_DIR.)
   */
  circuitsDir?: string;
  /** `auto` (default): native where its binary is built and passes the start-up check, else snarkjs. */
  backend?: ProverBackend | 'auto';
  /** The native prover's executable. Default: native/groth16-prover/build/groth16-prover of this checkout (from dist/ too). */
  nativeBinary?: string;
  /**
   * Proofs run at the same time. Default: one per core with the native prover (each proof
   * single-threaded), 1 with snarkjs (whose one proof already uses every core).
   */
  concurrency?: number;
  /** Threads of one native proof. Default: the cores divided among the concurrent proofs (at least 1). */
  threadsPerProof?: number;
  /**
   * Threads that have proved nothing for this long are stopped (a native thread holds about 80 MiB with its
   * processes; a snarkjs one about 250 MiB); the next proof starts them again, checking the files again.
   * Default 2 minutes.
   */
  idleMs?: number;
}

/** How the prover proves, once `ready()` has resolved. */
export interface ProverSetup {
  backend: ProverBackend;
  concurrency: number;
  /** Threads of one native proof (snarkjs decides its own). */
  threadsPerProof: number;
  /** Why `auto` runs snarkjs (the native binary is missing, or it failed its start-up check). */
  fallbackReason?: string;
}

export interface Prover {
  /** Starts the threads and resolves once each has loaded and checked the circuit files. */
  ready(): Promise<void>;
  /** Proves spending `commitment`: withdrawing `input.withdrawalAmount` (at most its value) and leaving a new note. */
  proveWithdrawal(commitment: Commitment | AccountCommitment, input: WithdrawalProofInput): Promise<WithdrawalProof>;
  /** Proves knowing a commitment's preimage (a ragequit). */
  proveCommitment(value: bigint, label: bigint, nullifier: bigint, secret: bigint): Promise<CommitmentProof>;
  /** The backend and sizes in use: known after `ready()`, a guess from the options before. */
  setup(): ProverSetup;
  /** Ends the threads; pending requests are rejected. */
  close(): Promise<void>;
}

/** A circuit file is missing, unreadable, or not the one the SDK was released with. Not retryable. */
export class CircuitArtifactError extends PrivateRouteError {
  override name = 'CircuitArtifactError';
  constructor(
    /** The refused file, or the artifacts folder when the SDK did not say which file. */
    readonly file: string,
    reason: string,
  ) {
    super(
      `circuit artifact ${file} refused: ${reason}. Reinstall @fatsolutions/privacy-pools-core-circuits (npm ci), or point ` +
        'PRIVACY_POOLS_CIRCUITS_DIR at a directory whose artifacts/ folder holds the untampered files',
    );
  }
}

/**
 * The prover could not prove: `code` is PROOF_GENERATION_FAILED for inputs the circuit rejects,
 * THREAD_EXITED or NATIVE_EXITED when the thread or its native process died during the proof,
 * NATIVE_UNAVAILABLE when `backend: 'native'` was asked for and the binary is missing or failed its check,
 * PROVER_CLOSED after close().
 */
export class ProverError extends PrivateRouteError {
  override name = 'ProverError';
  constructor(
    message: string,
    readonly code: string,
  ) {
    super(message);
  }
}

/**
 * A proof came back that does not verify against the circuit's verification key (a fault of the prover, never of
 * the note): it was dropped, nothing was submitted. Retried with a fresh proof; docs/operations.md says what to do
 * when it repeats.
 */
export class ProofInvalidError extends ProverError {
  override name = 'ProofInvalidError';
}

/** What proverThread.mjs accepts. */
interface ThreadRequest {
  id: number;
  kind: 'withdrawal' | 'commitment';
  signals: CircuitSignals;
}

/** What proverThread.mjs answers: `ready` or `init-failed` once, then one `proved` or `failed` per request. */
type ThreadReply =
  | { type: 'ready'; backend: ProverBackend; capacity: number; fallbackReason?: string }
  | { type: 'init-failed'; error: ThreadError }
  /** A native slot could not be started again: the thread ends; send it nothing more. */
  | { type: 'dying'; error: ThreadError }
  | { type: 'proved'; id: number; proof: WithdrawalProof | CommitmentProof }
  | { type: 'failed'; id: number; error: ThreadError };

interface ThreadError {
  name: string;
  message: string;
  code?: string;
}

type ProofRequest = Omit<ThreadRequest, 'id'>;

interface Job {
  request: ThreadRequest;
  resolve(proof: WithdrawalProof | CommitmentProof): void;
  reject(error: Error): void;
}

interface ProverThread {
  worker: Worker;
  ready: boolean;
  /** The proofs it is working on, by request id: at most `capacity`. */
  jobs: Map<number, Job>;
  /** Proofs it takes at once, from its `ready` reply: its native slots, or 1 with snarkjs. */
  capacity: number;
  /** Terminated by us: its exit is not a crash. */
  retired: boolean;
  exited: boolean;
  lastError: Error | null;
}

const THREAD_ENTRY = new URL('./proverThread.mjs', import.meta.url);

/** The service's configuration of the prover (src/config.ts). */
export interface ProverConfig {
  PROVER: ProverBackend | 'auto';
  PROOF_CONCURRENCY?: number;
  PROVER_THREADS?: number;
  NATIVE_PROVER_PATH?: string;
  PRIVACY_POOLS_CIRCUITS_DIR?: string;
}

export function proverOptions(config: ProverConfig): ProverOptions {
  return {
    backend: config.PROVER,
    concurrency: config.PROOF_CONCURRENCY,
    threadsPerProof: config.PROVER_THREADS,
    nativeBinary: config.NATIVE_PROVER_PATH,
    circuitsDir: config.PRIVACY_POOLS_CIRCUITS_DIR,
  };
}

/**
 * The backend the threads start with and the sizes, from the options and this machine: `auto` without a built
 * binary is snarkjs from the start (a binary that fails its check moves `auto` threads to snarkjs later).
 */
export function proverSizing(opts: ProverOptions): Omit<ProverSetup, 'backend'> & { backend: ProverBackend | 'auto'; nativeBinary: string } {
  const nativeBinary = path.resolve(opts.nativeBinary ?? DEFAULT_NATIVE_BINARY);
  const asked = opts.backend ?? 'auto';
  const backend = asked === 'auto' && !isExecutable(nativeBinary) ? 'snarkjs' : asked;
  const cores = availableParallelism();
  const concurrency = opts.concurrency ?? (backend === 'snarkjs' ? 1 : cores);
  if (!Number.isInteger(concurrency) || concurrency < 1) throw new Error(`prover concurrency must be a positive integer, got ${concurrency}`);
  const threadsPerProof = opts.threadsPerProof ?? Math.max(1, Math.floor(cores / concurrency));
  if (!Number.isInteger(threadsPerProof) || threadsPerProof < 1) throw new Error(`threads per proof must be a positive integer, got ${threadsPerProof}`);
  const fallbackReason = backend === asked ? undefined : `no native prover at ${nativeBinary} (npm run build:prover builds it)`;
  return { backend, nativeBinary, concurrency, threadsPerProof, fallbackReason };
}

export function createProver(opts: ProverOptions = {}): Prover {
  const circuitsDir = path.resolve(opts.circuitsDir ?? defaultCircuitsDir());
  const baseUrl = circuitsBaseUrl(circuitsDir);
  const { backend: threadBackend, nativeBinary, ...sizes } = proverSizing(opts);
  const { concurrency, threadsPerProof } = sizes;
  const initialSetup: ProverSetup = { ...sizes, backend: threadBackend === 'snarkjs' ? 'snarkjs' : 'native' };
  let setup = initialSetup;
  // snarkjs proves one proof per thread; the native backend runs one thread, which computes the witnesses and
  // verifies the proofs of `concurrency` native processes (a witness takes 0.07 s of a proof's second or more).
  const threadCount = threadBackend === 'snarkjs' ? concurrency : 1;
  const threadOptions = { backend: threadBackend, nativeBinary, threadsPerProof, slots: threadBackend === 'snarkjs' ? 1 : concurrency };

  const threads = new Set<ProverThread>();
  const queue: Job[] = [];
  let started: Promise<void> | null = null;
  let failure: Error | null = null;
  let closed = false;
  let nextId = 1;
  const idleMs = opts.idleMs ?? 120_000;
  let idleTimer: NodeJS.Timeout | null = null;
  /** Counts the idle stops: a replacement started for an earlier generation of threads is not wanted any more. */
  let generation = 0;

  /** Starts one thread with the checked circuit files; resolves when it is ready to prove. */
  function spawn(files: CircuitFiles): Promise<void> {
    // The thread gets a copy; nothing here holds on to these 24 MB once it has started (the handlers live in watch()).
    return watch(new Worker(THREAD_ENTRY, { workerData: { ...threadOptions, files }, name: 'privacy-pools-prover' }));
  }

  function watch(worker: Worker): Promise<void> {
    return new Promise((resolve, reject) => {
      const thread: ProverThread = {
        worker,
        ready: false,
        jobs: new Map(),
        capacity: 0,
        retired: false,
        exited: false,
        lastError: null,
      };
      threads.add(thread);
      thread.worker.on('message', (reply: ThreadReply) => {
        if (reply.type === 'ready') {
          // Closed or stopped while it was starting: it ends without ever proving.
          if (closed || thread.retired) {
            void retire(thread);
            reject(closed ? closedError() : new ProverError('prover thread stopped while starting', 'THREAD_EXITED'));
            return;
          }
          // A native thread that fell back to snarkjs (`auto`) says why, and proves one at a time.
          if (reply.backend === 'snarkjs' && setup.backend === 'native') {
            setup = { ...setup, backend: 'snarkjs', concurrency: reply.capacity, fallbackReason: reply.fallbackReason };
          }
          thread.ready = true;
          thread.capacity = reply.capacity;
          thread.worker.unref();
          resolve();
          dispatch();
        } else if (reply.type === 'dying') {
          thread.capacity = 0;
        } else if (reply.type === 'init-failed') {
          reject(new ProverError(reply.error.message, reply.error.code ?? 'UNKNOWN'));
          void retire(thread);
        } else {
          settle(thread, reply);
        }
      });
      thread.worker.on('error', (error) => {
        thread.lastError = error;
      });
      thread.worker.on('exit', (code) => {
        thread.exited = true;
        threads.delete(thread);
        const why = thread.lastError ? thread.lastError.message : `exit code ${code}`;
        if (!thread.ready) reject(closed ? closedError() : new Error(`prover thread stopped before loading the circuits: ${why}`));
        for (const job of thread.jobs.values()) {
          job.reject(closed ? closedError() : new ProverError(`prover thread died during a ${job.request.kind} proof: ${why}`, 'THREAD_EXITED'));
        }
        thread.jobs.clear();
        if (thread.ready && !thread.retired && !closed) respawn(generation);
      });
    });
  }

  function settle(thread: ProverThread, reply: Extract<ThreadReply, { type: 'proved' | 'failed' }>): void {
    const job = thread.jobs.get(reply.id);
    if (!job) return;
    thread.jobs.delete(reply.id);
    if (thread.jobs.size === 0) thread.worker.unref();
    if (reply.type === 'proved') job.resolve(reply.proof);
    else if (reply.error.code === 'PROOF_INVALID') job.reject(new ProofInvalidError(reply.error.message, 'PROOF_INVALID'));
    else job.reject(new ProverError(reply.error.message, reply.error.code ?? 'UNKNOWN'));
    dispatch();
    retireWhenIdle();
  }

  function dispatch(): void {
    for (const thread of threads) {
      if (failure || closed) return;
      while (thread.ready && !thread.retired && thread.jobs.size < thread.capacity) {
        const job = queue.shift();
        if (!job) return;
        thread.jobs.set(job.request.id, job);
        // A busy thread keeps the process alive until its proofs are answered.
        thread.worker.ref();
        try {
          thread.worker.postMessage(job.request);
        } catch (error) {
          // Not structured-cloneable (e.g. a function in the input): nothing was sent.
          thread.jobs.delete(job.request.id);
          if (thread.jobs.size === 0) thread.worker.unref();
          job.reject(error as Error);
        }
      }
    }
  }

  /** The circuit files failed the check (at start or when replacing a thread): refuse all further work. */
  function fail(error: Error): void {
    failure ??= error;
    for (const job of queue.splice(0)) job.reject(failure);
  }

  /**
   * Asks the thread to stop its native processes and end; one that does not end within 10 s is terminated (its
   * processes then end on EOF, unreaped: a loaded machine can take seconds to close a starting slot, so wait long).
   */
  function retire(thread: ProverThread): Promise<void> {
    thread.retired = true;
    if (thread.exited) return Promise.resolve();
    const exited = new Promise<void>((resolve) => thread.worker.once('exit', () => resolve()));
    thread.worker.postMessage({ type: 'close' });
    const deadline = setTimeout(() => void thread.worker.terminate(), 10_000);
    return exited.finally(() => clearTimeout(deadline));
  }

  const busy = () => queue.length > 0 || [...threads].some((thread) => thread.jobs.size > 0);

  /** Stops the threads once they have been idle for idleMs; a proof asked for meanwhile cancels that. */
  function retireWhenIdle(): void {
    if (idleTimer) clearTimeout(idleTimer);
    idleTimer = null;
    if (closed || busy()) return;
    idleTimer = setTimeout(() => {
      idleTimer = null;
      if (closed || busy()) return;
      started = null;
      generation++;
      for (const thread of [...threads]) void retire(thread);
    }, idleMs);
    idleTimer.unref();
  }

  /**
   * A replacement for a thread that died: the files are read and checked again. Refused files stop all proving
   * (fail); anything else (memory, a native prover that failed its check) is tried again after a pause. Nothing is
   * started once the prover is closed or has stopped its threads for idleness since (`forGeneration`).
   */
  function respawn(forGeneration: number, pauseMs = 1_000): void {
    const current = () => !closed && !failure && generation === forGeneration;
    if (!current()) return;
    checkedCircuitFiles(circuitsDir, baseUrl)
      .then((files) => (current() ? spawn(files) : undefined))
      .catch((error: Error) => {
        if (error instanceof CircuitArtifactError) fail(error);
        else if (current()) setTimeout(() => respawn(forGeneration, Math.min(pauseMs * 2, 60_000)), pauseMs).unref();
      });
  }

  function ready(): Promise<void> {
    if (closed) return Promise.reject(closedError());
    if (!started) setup = initialSetup;
    started ??= checkedCircuitFiles(circuitsDir, baseUrl)
      // Closed while the files were checked: no thread is started at all.
      .then((files) => (closed ? Promise.reject(closedError()) : Promise.all(Array.from({ length: threadCount }, () => spawn(files)))))
      .then(
        () => retireWhenIdle(),
        (error: Error) => {
          fail(error);
          throw error;
        },
      );
    return started;
  }

  async function prove<T>(request: ProofRequest): Promise<T> {
    if (idleTimer) clearTimeout(idleTimer);
    idleTimer = null;
    await ready();
    if (failure) throw failure;
    if (closed) throw closedError();
    return new Promise<T>((resolve, reject) => {
      queue.push({ request: { ...request, id: nextId++ } as ThreadRequest, resolve: resolve as Job['resolve'], reject });
      dispatch();
    });
  }

  return {
    ready,
    proveWithdrawal: (commitment, input) => prove<WithdrawalProof>({ kind: 'withdrawal', signals: withdrawalSignals(commitment, input) }),
    proveCommitment: (value, label, nullifier, secret) =>
      prove<CommitmentProof>({ kind: 'commitment', signals: commitmentSignals(value, label, nullifier, secret) }),
    setup: () => setup,
    async close() {
      closed = true;
      if (idleTimer) clearTimeout(idleTimer);
      for (const job of queue.splice(0)) job.reject(closedError());
      // Every thread there will ever be is in `threads` now: a start whose files are still being checked starts none.
      await Promise.all(Array.from(threads, retire));
    },
  };
}

/**
 * Where `npm ci` (scripts/build-native-prover.mjs) builds the native prover on this machine: the checkout's
 * native/groth16-prover/build, found from the sources (src/providers/privacy-pools) or from the build
 * (dist/src/providers/privacy-pools, one folder deeper). The build never carries a binary: one built elsewhere
 * may not run here.
 */
const NATIVE_BINARY_IN_CHECKOUT = 'native/groth16-prover/build/groth16-prover';
const DEFAULT_NATIVE_BINARY =
  ['../../../', '../../../../']
    .map((up) => fileURLToPath(new URL(up + NATIVE_BINARY_IN_CHECKOUT, import.meta.url)))
    .find((candidate) => isExecutable(candidate)) ?? fileURLToPath(new URL(`../../../${NATIVE_BINARY_IN_CHECKOUT}`, import.meta.url));

function isExecutable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

function closedError(): ProverError {
  return new ProverError('prover closed', 'PROVER_CLOSED');
}

/** The installed circuits package. Its exports map exposes only `./artifacts/*` (not package.json), so resolve a file in there. */
function defaultCircuitsDir(): string {
  const wasm = createRequire(import.meta.url).resolve('@fatsolutions/privacy-pools-core-circuits/artifacts/withdraw.wasm');
  return path.dirname(path.dirname(wasm));
}

/** The SDK reads `new URL('artifacts/<file>', baseUrl).pathname` with fs, without decoding it. */
function circuitsBaseUrl(circuitsDir: string): string {
  const url = pathToFileURL(`${circuitsDir}${path.sep}`);
  if (decodeURIComponent(url.pathname) !== url.pathname) {
    throw new Error(`circuits directory ${circuitsDir} has characters that URLs escape (spaces, non-ASCII); the SDK cannot read files there`);
  }
  return url.href;
}

/** A circuit's files, as the threads get them: wasm and zkey bytes, the verification key parsed. */
interface CircuitFile {
  wasm: Uint8Array;
  zkey: Uint8Array;
  vkey: unknown;
}
type CircuitFiles = Record<ThreadRequest['kind'], CircuitFile>;

const CIRCUIT_NAMES = { withdrawal: 'withdraw', commitment: 'commitment' } as const;

/**
 * The six circuit files, read through the SDK's `Circuits`, which checks each one's SHA-256 against its own manifest
 * (off the event loop: WebCrypto) and refuses a mismatch. Read here once and handed to the threads, so the bytes
 * every thread and native process proves with are the bytes that were checked. Not kept: a thread started later
 * (a replacement, or after the idle stop) reads and checks them again.
 */
async function checkedCircuitFiles(circuitsDir: string, baseUrl: string): Promise<CircuitFiles> {
  const { Circuits } = await import('@0xbow/privacy-pools-core-sdk');
  const circuits = new Circuits({ browser: false, baseUrl });
  try {
    await circuits.initArtifacts('latest');
    const files: Partial<CircuitFiles> = {};
    for (const [kind, name] of Object.entries(CIRCUIT_NAMES) as [ThreadRequest['kind'], (typeof CIRCUIT_NAMES)[ThreadRequest['kind']]][]) {
      files[kind] = {
        wasm: await circuits.getWasm(name),
        zkey: await circuits.getProvingKey(name),
        vkey: JSON.parse(new TextDecoder().decode(await circuits.getVerificationKey(name))),
      };
    }
    return files as CircuitFiles;
  } catch (error) {
    throw toArtifactError(circuitsDir, describeSdkError(error));
  }
}

/** SDK errors carry the real cause in `details.error` ("Failed to load artifact" alone says little). */
function describeSdkError(error: unknown): ThreadError {
  if (!(error instanceof Error)) return { name: 'Error', message: String(error) };
  const cause = (error as { details?: { error?: unknown } }).details?.error;
  return { name: error.name, message: typeof cause === 'string' ? `${error.message}: ${cause.trim()}` : error.message };
}

/** Every error from the SDK's artifact loading means a file was missing, unreadable or tampered with. */
function toArtifactError(circuitsDir: string, error: ThreadError): CircuitArtifactError {
  const artifacts = path.join(circuitsDir, 'artifacts');
  // "Integrity check failed for withdraw.zkey: expected <sha256>, got <sha256>"
  const mismatch = /Integrity check failed for ([\w-]+\.(?:wasm|zkey|vkey))/.exec(error.message);
  if (mismatch) return new CircuitArtifactError(path.join(artifacts, mismatch[1]!), error.message);
  // FetchArtifact: "Encountered error while loading artifact at file:///…/artifacts/withdraw.wasm.\n…"
  const unreadable = /artifacts\/([\w-]+\.(?:wasm|zkey|vkey))/.exec(error.message);
  if (unreadable) return new CircuitArtifactError(path.join(artifacts, unreadable[1]!), 'the file could not be read');
  return new CircuitArtifactError(artifacts, `${error.name}: ${error.message}`);
}
