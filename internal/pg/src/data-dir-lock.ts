import { closeSync, openSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** What the lock file of a PGlite data directory says about the process holding it. */
export interface LockHolder {
  readonly pid: number;
  /** The loopback port of the holder's pglite-socket server, once it listens. */
  readonly port: number | undefined;
  readonly startedAt: string;
}

/** Another live process holds the data directory: the message names it and what to do. */
export class DataDirectoryInUse extends Error {
  override readonly name = 'DataDirectoryInUse';
  constructor(
    readonly dataDir: string,
    readonly holder: LockHolder,
  ) {
    super(
      `The embedded PGlite data directory ${dataDir} is in use by process ${holder.pid} (a Holdfast server started at ${holder.startedAt}). ` +
        'Two processes must never open one PGlite directory: stop that server first, give this one another HOLDFAST_DATA_DIR, ' +
        'or run every process on PostgreSQL (DATABASE_URL).',
    );
  }
}

/** The lock file's name inside the data directory. */
export const LOCK_FILE = 'holdfast.lock';

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists but belongs to someone else.
    return error instanceof Error && 'code' in error && error.code === 'EPERM';
  }
}

function read(path: string): LockHolder | undefined {
  try {
    const parsed: unknown = JSON.parse(readFileSync(path, 'utf8'));
    if (typeof parsed !== 'object' || parsed === null) return undefined;
    const { pid, port, startedAt } = parsed as Record<string, unknown>;
    if (typeof pid !== 'number') return undefined;
    return {
      pid,
      port: typeof port === 'number' ? port : undefined,
      startedAt: typeof startedAt === 'string' ? startedAt : '?',
    };
  } catch {
    return undefined;
  }
}

/** Directories this process holds now (its own earlier lock files are stale otherwise). */
const heldHere = new Set<string>();

/** A lock this process holds: record the socket port once known, release on close. */
export interface DataDirLock {
  setPort(port: number): void;
  release(): void;
}

/**
 * Takes the data directory's lock file (created exclusively, `wx`), or reports who holds it.
 * A lock left by a process that no longer runs is taken over. PostgreSQL's own `postmaster.pid`
 * does the same for a real server; PGlite has none, and two processes writing one directory
 * corrupt it or silently lose each other's writes.
 */
export function lockDataDir(dataDir: string): { lock: DataDirLock } | { held: LockHolder } {
  const path = join(dataDir, LOCK_FILE);
  const startedAt = new Date().toISOString();
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      const fd = openSync(path, 'wx');
      writeFileSync(fd, JSON.stringify({ pid: process.pid, startedAt }));
      closeSync(fd);
      heldHere.add(path);
      return {
        lock: {
          setPort(port) {
            writeFileSync(path, JSON.stringify({ pid: process.pid, port, startedAt }));
          },
          release() {
            heldHere.delete(path);
            if (read(path)?.pid === process.pid) unlinkSync(path);
          },
        },
      };
    } catch (error) {
      if (!(error instanceof Error && 'code' in error && error.code === 'EEXIST')) throw error;
      const holder = read(path);
      const live = holder && (holder.pid === process.pid ? heldHere.has(path) : alive(holder.pid));
      if (holder && live) return { held: holder };
      // Stale (its process is gone) or unreadable half-written: take it over.
      try {
        unlinkSync(path);
      } catch {}
    }
  }
  throw new Error(`Could not take the lock ${path}`);
}
