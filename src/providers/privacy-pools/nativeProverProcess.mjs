/**
 * One native Groth16 prover process (native/groth16-prover/prover.cpp), driven by a prover thread
 * (proverThread.mjs). Frames both ways: a tag byte, a little-endian u64 length, the payload; see prover.cpp.
 *
 * The process gets the proving key's bytes through its stdin (the bytes the SDK checked), no environment of
 * ours (the worker's environment holds keys and URLs it has no use for), and ends when its stdin closes.
 */
import { spawn } from 'node:child_process';

const HEADER = 9;

/** A proof that takes longer than this is taken for a hung process (a withdrawal proof takes one or two seconds). */
const PROOF_DEADLINE_MS = 120_000;

/** Starts the binary and loads `zkey`; resolves with the key's sizes ({ nVars, nPublic, domainSize }). */
export async function startNativeProver(binary, zkey, threads) {
  const child = spawn(binary, ['--threads', String(threads)], {
    stdio: ['pipe', 'pipe', 'pipe'],
    env: { OMP_NUM_THREADS: String(threads), OMP_WAIT_POLICY: 'passive' },
  });
  const waiting = [];
  let buffered = Buffer.alloc(0);
  let stderr = '';
  let ended = null;

  const endAll = (error) => {
    ended ??= error;
    for (const waiter of waiting.splice(0)) waiter.reject(ended);
  };
  child.on('error', (error) => endAll(new NativeProverError(`native prover ${binary} could not start: ${error.message}`, 'NATIVE_UNAVAILABLE')));
  const exited = new Promise((resolve) => {
    child.once('close', resolve);
    child.once('error', resolve);
  });
  child.on('exit', (code, signal) => {
    const why = signal ? `signal ${signal}` : `exit code ${code}`;
    endAll(new NativeProverError(`native prover stopped (${why})${stderr ? `: ${stderr.trim()}` : ''}`, 'NATIVE_EXITED'));
  });
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (text) => {
    stderr = (stderr + text).slice(-2_000);
  });
  child.stdin.on('error', () => {}); // a dead process shows as its exit
  child.stdout.on('data', (chunk) => {
    buffered = buffered.length ? Buffer.concat([buffered, chunk]) : chunk;
    while (buffered.length >= HEADER) {
      const length = Number(buffered.readBigUInt64LE(1));
      if (buffered.length < HEADER + length) break;
      const tag = String.fromCharCode(buffered[0]);
      const body = buffered.subarray(HEADER, HEADER + length).toString('utf8');
      buffered = buffered.subarray(HEADER + length);
      const waiter = waiting.shift();
      if (!waiter) continue;
      if (tag === 'O') waiter.resolve(JSON.parse(body));
      else waiter.reject(new NativeProverError(`native prover refused the request: ${body}`, 'PROOF_GENERATION_FAILED'));
    }
  });

  function request(tag, payload) {
    if (ended) return Promise.reject(ended);
    return new Promise((resolve, reject) => {
      const deadline = setTimeout(() => {
        stderr += `no answer within ${PROOF_DEADLINE_MS / 1000} s`;
        child.kill('SIGKILL');
      }, PROOF_DEADLINE_MS);
      const settled = (settle) => (value) => {
        clearTimeout(deadline);
        settle(value);
      };
      waiting.push({ resolve: settled(resolve), reject: settled(reject) });
      const header = Buffer.alloc(HEADER);
      header[0] = tag.charCodeAt(0);
      header.writeBigUInt64LE(BigInt(payload.byteLength), 1);
      child.stdin.write(header);
      child.stdin.write(payload);
    });
  }

  /** Ends the process and resolves once it is gone (reaped: no zombie left). */
  function close() {
    child.stdin.end();
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    return exited;
  }

  let sizes;
  try {
    sizes = await request('K', zkey);
  } catch (error) {
    await close();
    throw error;
  }
  return {
    sizes,
    /** The proof's points for a witness (a .wtns file's bytes), as snarkjs writes them (decimal strings). */
    prove: (wtns) => request('W', wtns),
    close,
  };
}

export class NativeProverError extends Error {
  constructor(message, code) {
    super(message);
    this.name = 'NativeProverError';
    this.code = code;
  }
}

/**
 * The public signals of a witness (.wtns, as snarkjs's wtns.calculate writes it): signals 1..nPublic as decimal
 * strings, which is what snarkjs's prover publishes.
 */
export function publicSignalsOf(wtns, nPublic) {
  const bytes = Buffer.from(wtns.buffer, wtns.byteOffset, wtns.byteLength);
  if (bytes.toString('latin1', 0, 4) !== 'wtns') throw new Error('not a witness file');
  const sections = bytes.readUInt32LE(8);
  let pos = 12;
  let n8 = 0;
  let values = -1;
  for (let i = 0; i < sections; i++) {
    const type = bytes.readUInt32LE(pos);
    const size = Number(bytes.readBigUInt64LE(pos + 4));
    pos += 12;
    if (type === 1) n8 = bytes.readUInt32LE(pos);
    if (type === 2) values = pos;
    pos += size;
  }
  if (!n8 || values < 0) throw new Error('witness file without header or values');
  const signals = [];
  for (let i = 1; i <= nPublic; i++) {
    let value = 0n;
    for (let j = n8 - 1; j >= 0; j--) value = (value << 8n) | BigInt(bytes[values + i * n8 + j]);
    signals.push(value.toString());
  }
  return signals;
}
