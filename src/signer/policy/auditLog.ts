import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { open, readFile, rm, type FileHandle } from 'node:fs/promises';

/**
 * The signer's append-only audit log: one JSON line per signature, refusal and note-secret answer, each carrying
 * the SHA-256 of the line before it (`prev`) and its own (`hash`, over `prev` and the entry), so an edited, dropped
 * or reordered line breaks the chain (`npm run signer:audit -- verify <file>`). It lives beside the signer, not in
 * the worker's database: the party the policy guards against cannot rewrite it. Entries name accounts, chains,
 * contracts, amounts and rules; never a key, a signature or a note secret.
 */
export interface AuditEntry {
  verdict: 'signed' | 'refused' | 'answered';
  /** What was asked: `sign-transaction` or `note-secrets`. */
  request: 'sign-transaction' | 'note-secrets';
  account?: string;
  chainId?: number;
  call?: string;
  routeId?: string;
  rule?: string;
  reason?: string;
}

export interface AuditRecord extends AuditEntry {
  seq: number;
  at: string;
  prev: string;
  hash: string;
}

export interface AuditLog {
  append(entry: AuditEntry): Promise<void>;
  close(): Promise<void>;
}

const GENESIS = '0'.repeat(64);

const hashOf = (record: Omit<AuditRecord, 'hash'>) => createHash('sha256').update(JSON.stringify(record)).digest('hex');

/** Opens (or creates, owner-only) the log at `path` and continues its chain from its last line. */
export async function openAuditLog(path: string): Promise<AuditLog> {
  const releaseLock = await lockAuditLog(path);
  try {
    return await openLocked(path, releaseLock);
  } catch (error) {
    await releaseLock();
    throw error;
  }
}

async function openLocked(path: string, releaseLock: () => Promise<void>): Promise<AuditLog> {
  const existing = await readFile(path, 'utf8').catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return '';
    throw error;
  });
  const lines = existing.split('\n').filter(Boolean);
  // The last two lines: the last is whole and follows the one before it (a full check: npm run signer:audit).
  const check = verifyAuditLines(lines.slice(-2), lines.length > 2 ? null : GENESIS);
  if (!check.ok) throw new Error(`the signer's audit log ${path} does not end in a whole entry (${check.problem}): an operator looks before the signer starts`);
  const last = lines.length ? (JSON.parse(lines.at(-1)!) as AuditRecord) : undefined;
  let seq = last?.seq ?? 0;
  let prev = last?.hash ?? GENESIS;
  const file: FileHandle = await open(path, 'a', 0o600);
  // Appends one at a time, so the chain is the order of the file.
  let queue: Promise<void> = Promise.resolve();
  return {
    append(entry) {
      const run = queue.then(async () => {
        const record: Omit<AuditRecord, 'hash'> = { seq: seq + 1, at: new Date().toISOString(), ...entry, prev };
        const hash = hashOf(record);
        await file.appendFile(`${JSON.stringify({ ...record, hash })}\n`);
        // Written: the chain goes on from it even if the sync fails (the caller is told, and nothing is signed).
        seq += 1;
        prev = hash;
        await file.datasync();
      });
      queue = run.catch(() => {});
      return run;
    },
    async close() {
      await queue;
      await file.close();
      await releaseLock();
    },
  };
}

/**
 * One signer per audit log: two appending to one file would fork its chain. `<log>.lock` holds the owner's pid; a lock
 * whose process is gone (a signer killed) is taken over, one whose process runs refuses the start. One host only: a
 * log on a shared file system needs the deployment's own guarantee of one signer.
 */
async function lockAuditLog(path: string): Promise<() => Promise<void>> {
  const lockPath = `${path}.lock`;
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const handle = await open(lockPath, 'wx', 0o600);
      await handle.writeFile(String(process.pid));
      await handle.close();
      return () => rm(lockPath, { force: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const owner = Number((await readFile(lockPath, 'utf8').catch(() => '')).trim());
      if (Number.isInteger(owner) && owner > 0 && owner !== process.pid && processRuns(owner)) {
        throw new Error(`another signer (pid ${owner}) writes the audit log ${path}: run one signer per audit log (docs/security.md)`);
      }
      await rm(lockPath, { force: true });
    }
  }
  throw new Error(`the audit log ${path} could not be locked (${lockPath})`);
}

/** Whether `pid` is a running signer (on Linux its command line names it, so a pid reused after a crash is not one). */
function processRuns(pid: number): boolean {
  if (existsSync('/proc/self/cmdline')) {
    try {
      return /signer/.test(readFileSync(`/proc/${pid}/cmdline`, 'utf8'));
    } catch {
      return false;
    }
  }
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Checks a log's lines: each parses, counts on from the one before, names the one before's hash as `prev` and carries
 * its own right hash. `firstPrev`: what the first line's `prev` must be (the genesis for a whole log; null: any).
 */
export function verifyAuditLines(lines: string[], firstPrev: string | null = GENESIS): { ok: true; entries: number } | { ok: false; problem: string } {
  let prev: string | undefined = firstPrev ?? undefined;
  let seq: number | undefined;
  for (const [n, line] of lines.entries()) {
    let record: AuditRecord;
    try {
      record = JSON.parse(line) as AuditRecord;
    } catch {
      return { ok: false, problem: `line ${n + 1} is not JSON` };
    }
    const { hash, ...rest } = record;
    if (prev !== undefined && record.prev !== prev) return { ok: false, problem: `line ${n + 1} (seq ${record.seq}) does not follow the line before it` };
    if (seq !== undefined && record.seq !== seq + 1) return { ok: false, problem: `line ${n + 1} has seq ${record.seq} after ${seq}` };
    if (hashOf(rest) !== hash) return { ok: false, problem: `line ${n + 1} (seq ${record.seq}) was changed after it was written` };
    prev = hash;
    seq = record.seq;
  }
  return { ok: true, entries: lines.length };
}
