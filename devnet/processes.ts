import { spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';

/**
 * The local stack's child processes (Temporal dev server, Postgres, anvil), recorded in the data folder
 * so that a start after a crash of the stack's own process (kill -9, OOM) can stop what that run left
 * behind. A recorded process is stopped only when it is still alive and still runs the very command
 * line recorded for it, so a reused pid never hits anyone else's process.
 */
export interface ProcessRegistry {
  /** Records a started child; it stays recorded until `forget` (a clean stop). */
  track(name: string, child: ChildProcess | { pid: number }, stopSignal?: NodeJS.Signals): void;
  forget(pid: number | undefined): void;
  /** Removes the record of this run, unless a child is still recorded (its stop failed). */
  close(): void;
}

interface Recorded {
  name: string;
  pid: number;
  command: string;
  stopSignal: NodeJS.Signals;
}

interface RegistryFile {
  owner: { pid: number; command: string };
  children: Recorded[];
}

export const PROCESSES_FILE = 'processes.json';

/** Another live stack owns the data folder. */
export class DataDirInUseError extends Error {
  constructor(dataDir: string, pid: number) {
    super(
      `another private-route stack (pid ${pid}) is running with the data folder ${dataDir}; stop it first (Ctrl-C in its terminal, or kill ${pid}), or start this one with another DATA_DIR`,
    );
    this.name = 'DataDirInUseError';
  }
}

/**
 * Stops the children an earlier run recorded in `dataDir` and left running, then starts this run's
 * record. Throws DataDirInUseError when the earlier run itself is still alive.
 */
export async function claimDataDir(dataDir: string, opts: { log?: (line: string) => void; graceMs?: number } = {}): Promise<ProcessRegistry> {
  const log = opts.log ?? (() => {});
  const file = path.join(dataDir, PROCESSES_FILE);
  const earlier = readRegistry(file);
  if (earlier) {
    if (earlier.owner.pid !== process.pid && commandOf(earlier.owner.pid) === earlier.owner.command) throw new DataDirInUseError(dataDir, earlier.owner.pid);
    const leftovers = earlier.children.filter((child) => commandOf(child.pid) === child.command);
    if (leftovers.length > 0)
      log(`an earlier run ended without stopping its processes; stopping ${leftovers.map((c) => `${c.name} (pid ${c.pid})`).join(', ')}`);
    await Promise.all(leftovers.map((child) => stopPid(child.pid, child.stopSignal, opts.graceMs ?? 15_000, log, child.name)));
  }

  const record: RegistryFile = { owner: { pid: process.pid, command: commandOf(process.pid) ?? '' }, children: [] };
  const save = () => {
    // Write-then-rename: a crash mid-write never leaves a half file that would hide the leftovers.
    writeFileSync(`${file}.tmp`, `${JSON.stringify(record, null, 2)}\n`);
    renameSync(`${file}.tmp`, file);
  };
  save();
  return {
    track(name, child, stopSignal = 'SIGTERM') {
      if (child.pid === undefined) return;
      const command = commandOf(child.pid);
      if (command === undefined) return;
      record.children.push({ name, pid: child.pid, command, stopSignal });
      save();
    },
    forget(pid) {
      record.children = record.children.filter((c) => c.pid !== pid);
      save();
    },
    close() {
      // A child that did not stop stays recorded, for the next start to stop.
      if (record.children.length === 0) rmSync(file, { force: true });
    },
  };
}

/** A registry that records nothing (callers without a data folder). */
export const noProcessRegistry: ProcessRegistry = { track() {}, forget() {}, close() {} };

function readRegistry(file: string): RegistryFile | undefined {
  if (!existsSync(file)) return undefined;
  try {
    const parsed = JSON.parse(readFileSync(file, 'utf8')) as RegistryFile;
    return Array.isArray(parsed.children) && parsed.owner ? parsed : undefined;
  } catch {
    return undefined;
  }
}

/** The command line of a live process, or undefined when there is none (or it cannot be read). */
export function commandOf(pid: number): string | undefined {
  if (!Number.isInteger(pid) || pid <= 0) return undefined;
  try {
    const raw = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    return raw.length > 0 ? raw.split('\0').filter(Boolean).join(' ') : undefined;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT' && existsSync('/proc/self')) return undefined;
  }
  // No /proc (macOS): ask ps.
  const ps = spawnSync('ps', ['-o', 'args=', '-p', String(pid)], { encoding: 'utf8' });
  const out = ps.status === 0 ? ps.stdout.trim() : '';
  return out.length > 0 ? out : undefined;
}

/** A zombie (killed, not yet reaped by a container's init) has no command line and counts as gone. */
function isAlive(pid: number): boolean {
  return commandOf(pid) !== undefined;
}

/** Sends `signal`, waits up to `graceMs` for the process to go, then SIGKILL. */
async function stopPid(pid: number, signal: NodeJS.Signals, graceMs: number, log: (line: string) => void, name: string): Promise<void> {
  try {
    process.kill(pid, signal);
  } catch {
    return;
  }
  const deadline = Date.now() + graceMs;
  while (Date.now() < deadline) {
    if (!isAlive(pid)) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  log(`${name} (pid ${pid}) did not stop within ${graceMs} ms of ${signal}; killing it`);
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    return;
  }
  while (isAlive(pid)) await new Promise((r) => setTimeout(r, 50));
}
