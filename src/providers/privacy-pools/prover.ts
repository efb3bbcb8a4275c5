import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { AccountCommitment, Commitment, CommitmentProof, WithdrawalProof, WithdrawalProofInput } from '@0xbow/privacy-pools-core-sdk';
import { PrivateRouteError } from '../../errors.ts';

/**
 * Privacy Pools Groth16 proofs, generated in worker threads so the event loop (Temporal heartbeats,
 * HTTP) keeps running during the seconds a proof takes.
 *
 * Each thread loads the SDK and the circuit files once; loading goes through the SDK's `Circuits`,
 * which checks every file's SHA-256 against the hashes shipped in the SDK and refuses a mismatch.
 * `ready()` waits for that check in every thread and rejects with CircuitArtifactError if a file
 * was refused; the proof methods wait for `ready()` themselves.
 *
 * At most `concurrency` proofs run at once (one per thread); further requests wait in FIFO order.
 * A thread that dies is replaced, and the request it was proving is rejected. Idle threads do not
 * hold the process open, but they (and snarkjs's own threads inside them) live until `close()`.
 */

export interface ProverOptions {
  /**
   * A directory laid out like the npm package @fatsolutions/privacy-pools-core-circuits: it holds an
   * `artifacts/` folder with withdraw.{wasm,zkey,vkey} and commitment.{wasm,zkey,vkey}. (Not the
   * artifacts folder itself: the SDK always reads `artifacts/<file>` below the directory it is given.)
   * Default: the installed package. (The service reads it from PRIVACY_POOLS_CIRCUITS_DIR.)
   */
  circuitsDir?: string;
  /** Proofs run at the same time, one thread each. Default 1. */
  concurrency?: number;
  /**
   * Threads that have proved nothing for this long are stopped (each holds the circuits and snarkjs's own
   * threads, about 250 MiB); the next proof starts them again, checking the files again. Default 2 minutes.
   */
  idleMs?: number;
}

export interface Prover {
  /** Starts the threads and resolves once each has loaded and checked the circuit files. */
  ready(): Promise<void>;
  /** Proves spending `commitment`: withdrawing `input.withdrawalAmount` (at most its value) and leaving a new note. */
  proveWithdrawal(commitment: Commitment | AccountCommitment, input: WithdrawalProofInput): Promise<WithdrawalProof>;
  /** Proves knowing a commitment's preimage (a ragequit). */
  proveCommitment(value: bigint, label: bigint, nullifier: bigint, secret: bigint): Promise<CommitmentProof>;
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
 * The SDK could not prove (`code` is its ErrorCode, e.g. PROOF_GENERATION_FAILED for inputs the
 * circuit rejects), the thread died during the proof (THREAD_EXITED), or the prover was closed
 * (PROVER_CLOSED).
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

/** What proverThread.mjs accepts. */
type ThreadRequest =
  | { id: number; kind: 'withdrawal'; commitment: Commitment | AccountCommitment; input: WithdrawalProofInput }
  | { id: number; kind: 'commitment'; value: bigint; label: bigint; nullifier: bigint; secret: bigint };

/** What proverThread.mjs answers: `ready` or `init-failed` once, then one `proved` or `failed` per request. */
type ThreadReply =
  | { type: 'ready' }
  | { type: 'init-failed'; error: ThreadError }
  | { type: 'proved'; id: number; proof: WithdrawalProof | CommitmentProof }
  | { type: 'failed'; id: number; error: ThreadError };

interface ThreadError {
  name: string;
  message: string;
  code?: string;
}

type WithoutId<T> = T extends unknown ? Omit<T, 'id'> : never;
type ProofRequest = WithoutId<ThreadRequest>;

interface Job {
  request: ThreadRequest;
  resolve(proof: WithdrawalProof | CommitmentProof): void;
  reject(error: Error): void;
}

interface ProverThread {
  worker: Worker;
  ready: boolean;
  job: Job | null;
  /** Terminated by us: its exit is not a crash. */
  retired: boolean;
  lastError: Error | null;
}

const THREAD_ENTRY = new URL('./proverThread.mjs', import.meta.url);

export function createProver(opts: ProverOptions = {}): Prover {
  const circuitsDir = path.resolve(opts.circuitsDir ?? defaultCircuitsDir());
  const baseUrl = circuitsBaseUrl(circuitsDir);
  const concurrency = opts.concurrency ?? 1;
  if (!Number.isInteger(concurrency) || concurrency < 1) throw new Error(`prover concurrency must be a positive integer, got ${concurrency}`);

  const threads = new Set<ProverThread>();
  const queue: Job[] = [];
  let started: Promise<void> | null = null;
  let failure: Error | null = null;
  let closed = false;
  let nextId = 1;
  const idleMs = opts.idleMs ?? 120_000;
  let idleTimer: NodeJS.Timeout | null = null;

  /** Starts one thread; resolves when it has checked the circuit files. */
  function spawn(): Promise<void> {
    return new Promise((resolve, reject) => {
      const thread: ProverThread = {
        worker: new Worker(THREAD_ENTRY, { workerData: { baseUrl }, name: 'privacy-pools-prover' }),
        ready: false,
        job: null,
        retired: false,
        lastError: null,
      };
      threads.add(thread);
      thread.worker.on('message', (reply: ThreadReply) => {
        if (reply.type === 'ready') {
          thread.ready = true;
          thread.worker.unref();
          resolve();
          dispatch();
        } else if (reply.type === 'init-failed') {
          reject(toArtifactError(circuitsDir, reply.error));
          retire(thread);
        } else {
          settle(thread, reply);
        }
      });
      thread.worker.on('error', (error) => {
        thread.lastError = error;
      });
      thread.worker.on('exit', (code) => {
        threads.delete(thread);
        const why = thread.lastError ? thread.lastError.message : `exit code ${code}`;
        if (!thread.ready) reject(closed ? closedError() : new Error(`prover thread stopped before loading the circuits: ${why}`));
        const job = thread.job;
        thread.job = null;
        if (job) job.reject(closed ? closedError() : new ProverError(`prover thread died during a ${job.request.kind} proof: ${why}`, 'THREAD_EXITED'));
        if (thread.ready && !thread.retired && !closed) spawn().catch(fail);
      });
    });
  }

  function settle(thread: ProverThread, reply: Extract<ThreadReply, { type: 'proved' | 'failed' }>): void {
    const job = thread.job;
    if (!job || job.request.id !== reply.id) return;
    thread.job = null;
    thread.worker.unref();
    if (reply.type === 'proved') job.resolve(reply.proof);
    else job.reject(new ProverError(reply.error.message, reply.error.code ?? 'UNKNOWN'));
    dispatch();
    retireWhenIdle();
  }

  function dispatch(): void {
    for (const thread of threads) {
      if (failure || closed) return;
      if (!thread.ready || thread.job || thread.retired) continue;
      const job = queue.shift();
      if (!job) return;
      thread.job = job;
      // A busy thread keeps the process alive until its proof is answered.
      thread.worker.ref();
      try {
        thread.worker.postMessage(job.request);
      } catch (error) {
        // Not structured-cloneable (e.g. a function in the input): nothing was sent.
        thread.job = null;
        thread.worker.unref();
        job.reject(error as Error);
      }
    }
  }

  /** The circuit files failed the check (at start or when replacing a thread): refuse all further work. */
  function fail(error: Error): void {
    failure ??= error;
    for (const job of queue.splice(0)) job.reject(failure);
  }

  function retire(thread: ProverThread): Promise<number> {
    thread.retired = true;
    return thread.worker.terminate();
  }

  const busy = () => queue.length > 0 || [...threads].some((thread) => thread.job !== null);

  /** Stops the threads once they have been idle for idleMs; a proof asked for meanwhile cancels that. */
  function retireWhenIdle(): void {
    if (idleTimer) clearTimeout(idleTimer);
    idleTimer = null;
    if (closed || busy()) return;
    idleTimer = setTimeout(() => {
      idleTimer = null;
      if (closed || busy()) return;
      started = null;
      for (const thread of [...threads]) void retire(thread);
    }, idleMs);
    idleTimer.unref();
  }

  function ready(): Promise<void> {
    if (closed) return Promise.reject(closedError());
    started ??= Promise.all(Array.from({ length: concurrency }, () => spawn())).then(
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
    proveWithdrawal: (commitment, input) => prove<WithdrawalProof>({ kind: 'withdrawal', commitment, input }),
    proveCommitment: (value, label, nullifier, secret) => prove<CommitmentProof>({ kind: 'commitment', value, label, nullifier, secret }),
    async close() {
      closed = true;
      if (idleTimer) clearTimeout(idleTimer);
      for (const job of queue.splice(0)) job.reject(closedError());
      await Promise.all(Array.from(threads, retire));
    },
  };
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
