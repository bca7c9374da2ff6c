import { createTestDatabase, realPostgres, type TestDatabase } from '@holdfast/pg/testing';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { migrations } from '../src/index';
import { reconcileInFlight, resumeWaitingLines } from '../src/lease';
import { JOB_STATEMENT_TIMEOUT_MS, unlessRunning, withStatementTimeout } from '../src/periodic';

// Housekeeping that cannot pile up: a periodic job is skipped while its last run still goes
// (resumeWaitingLines ran 50 to 80 s from a 10 s interval, three to five at once), and its
// statements run under a statement timeout. Timers are vitest's fake ones: counts, no durations.

/** Lets pending promise callbacks run (the job starts on the microtask after its tick). */
const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

/** A job whose runs end only when the test says so. */
function heldJob() {
  const releases: (() => void)[] = [];
  let starts = 0;
  const run = () =>
    new Promise<void>((resolve) => {
      starts += 1;
      releases.push(resolve);
    });
  return {
    run,
    starts: () => starts,
    release: () => {
      for (const release of releases.splice(0)) release();
    },
  };
}

describe('unlessRunning', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('does not start a job again while its run is held, and starts it on the first tick after', async () => {
    vi.useFakeTimers();
    const job = heldJob();
    const errors: unknown[] = [];
    const guarded = unlessRunning(job.run, (error) => errors.push(error));
    const timer = setInterval(() => guarded.tick(), 10_000);
    try {
      await vi.advanceTimersByTimeAsync(10_000);
      expect(job.starts()).toBe(1);
      // Five more ticks while the first run is held: none starts another.
      await vi.advanceTimersByTimeAsync(50_000);
      expect(job.starts()).toBe(1);
      job.release();
      await guarded.idle();
      await vi.advanceTimersByTimeAsync(10_000);
      expect(job.starts()).toBe(2);
      job.release();
      await guarded.idle();
      expect(errors).toEqual([]);
    } finally {
      clearInterval(timer);
    }
  });

  it('says which ticks it skipped, hands errors to onError and runs again after a failure', async () => {
    let starts = 0;
    const errors: unknown[] = [];
    let fail: (error: Error) => void = () => {};
    const guarded = unlessRunning(
      () =>
        new Promise<void>((_, reject) => {
          starts += 1;
          fail = reject;
        }),
      (error) => errors.push(error),
    );
    expect([guarded.tick(), guarded.tick(), guarded.tick()]).toEqual([true, false, false]);
    await settle();
    expect(starts).toBe(1);
    fail(new Error('boom'));
    await guarded.idle();
    expect(errors).toEqual([new Error('boom')]);
    expect(guarded.tick()).toBe(true);
    await settle();
    expect(starts).toBe(2);
    fail(new Error('again'));
    await guarded.idle();
  });

  it('counts a job that throws before its first await as a run, not as a crash of the timer', async () => {
    const errors: unknown[] = [];
    const guarded = unlessRunning(
      () => {
        throw new Error('sync');
      },
      (error) => errors.push(error),
    );
    expect(guarded.tick()).toBe(true);
    await guarded.idle();
    expect(errors).toEqual([new Error('sync')]);
  });
});

describe('statement timeouts of periodic jobs', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
    for (const migration of migrations()) await db.sql.unsafe(migration.sql);
  });
  afterAll(() => db.close());

  it('runs the job in a transaction whose statement_timeout is set, and leaves the session as it was', async () => {
    const [before] = await db.sql<{ t: string }[]>`select current_setting('statement_timeout') as t`;
    let inside = '';
    const counted = await withStatementTimeout(db.sql, JOB_STATEMENT_TIMEOUT_MS, async (tx) => {
      const [row] = await tx<{ t: string }[]>`select current_setting('statement_timeout') as t`;
      inside = row?.t ?? '';
      return 3;
    });
    expect(counted).toBe(3);
    expect(inside).toBe(`${JOB_STATEMENT_TIMEOUT_MS / 1000}s`);
    const [after] = await db.sql<{ t: string }[]>`select current_setting('statement_timeout') as t`;
    expect(after?.t).toBe(before?.t);
  });

  it('resumeWaitingLines and reconcileInFlight run under it (nothing to do: no error)', async () => {
    expect(await resumeWaitingLines(db.sql)).toBe(0);
    await reconcileInFlight(db.sql);
  });

  // PGlite accepts statement_timeout but enforces none: a cut statement needs PostgreSQL.
  it.skipIf(!realPostgres)('cuts a statement that runs past it with query_canceled (57014)', async () => {
    await expect(
      withStatementTimeout(db.sql, 1, async (tx) => {
        await tx`select pg_sleep(5)`;
        return 0;
      }),
    ).rejects.toMatchObject({ code: '57014' });
  });
});
