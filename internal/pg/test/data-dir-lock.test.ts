import { existsSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { connect, DataDirectoryInUse, LOCK_FILE } from '../src/index';
import { seedPgliteDataDir } from '../src/testing';

// Never two openers of one PGlite directory: the second is refused naming the first, or joins
// it through its socket; a lock left by a dead process is taken over.

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'holdfast-lock-'));
  // A directory that already holds a database: the lock is the subject here, not initdb.
  await seedPgliteDataDir(dir);
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

it('refuses a second open, lets a joiner through the holder, and releases on close', async () => {
  const first = await connect({ dataDir: dir });
  try {
    expect(existsSync(join(dir, LOCK_FILE))).toBe(true);
    const refused = await connect({ dataDir: dir }).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(DataDirectoryInUse);
    expect(String(refused)).toContain(`in use by process ${process.pid}`);
    await first.sql`create table if not exists shared_row (n int)`;
    const joined = await connect({ dataDir: dir, whenHeld: 'join' });
    await joined.sql`insert into shared_row values (7)`;
    await joined.close();
    const [row] = await first.sql<{ n: number }[]>`select n from shared_row`;
    expect(row?.n).toBe(7);
  } finally {
    await first.close();
  }
  expect(existsSync(join(dir, LOCK_FILE))).toBe(false);
}, 180_000);

it('takes over a lock whose process is gone', async () => {
  // A pid far above any pid_max: no such process.
  writeFileSync(join(dir, LOCK_FILE), JSON.stringify({ pid: 2 ** 30, port: 1, startedAt: 'yesterday' }));
  const db = await connect({ dataDir: dir });
  await db.close();
  expect(existsSync(join(dir, LOCK_FILE))).toBe(false);
}, 180_000);
