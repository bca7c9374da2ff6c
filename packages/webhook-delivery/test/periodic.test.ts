import { unlessRunning } from '@holdfast/db';
import { fromPostgres } from '@holdfast/db/postgres';
import { createTestDatabase, type TestDatabase } from '@holdfast/pg/testing';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { createEndpoint, migrations } from '../src/index';
import { reconcileInFlight, resumeWaitingLines } from '../src/lease';
import { endPools, pgQueue } from './fixtures/db';
import { dueDeliveries } from './fixtures/queue';

// Housekeeping that cannot pile up: a periodic job is skipped while its last run still goes
// (resumeWaitingLines ran 50 to 80 s from a 10 s interval, three to five at once), and its
// statements stand alone, so a pool's statement_timeout bounds them. Timers are vitest's fake ones.

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

describe('periodic jobs', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
    for (const migration of migrations()) await db.sql.unsafe(migration.sql);
  });
  afterAll(async () => {
    await endPools();
    await db.close();
  });

  it('resumeWaitingLines and reconcileInFlight run as single statements (nothing to do: no error)', async () => {
    expect(await resumeWaitingLines(pgQueue(db))).toBe(0);
    await reconcileInFlight(pgQueue(db));
  });

  it('reconcileInFlight recounts a pacing row left off by hand from the leases, in one statement', async () => {
    const { endpoint } = await createEndpoint(
      fromPostgres(db.sql),
      { account: 'acct_recount', url: 'http://127.0.0.1:1024/hook' },
      { allowPrivateDestinations: true },
    );
    await dueDeliveries(db.sql, {
      account: 'acct_recount',
      endpointId: endpoint.id,
      tag: 'rc',
      from: 1,
      to: 3,
    });
    await db.sql`update holdfast_deliveries set lease_owner = 'wrk_gone', lease_expires_at = now() + interval '1 minute'
      where id in ('dlv_rc_1', 'dlv_rc_2')`;
    await db.sql`update holdfast_endpoint_pacing set in_flight = 7 where endpoint_id = ${endpoint.id}`;
    const inFlight = async () => {
      const [row] = await db.sql<{ n: number }[]>`
        select (p.in_flight - coalesce((select sum(r.released) from holdfast_endpoint_releases r
          where r.endpoint_id = p.endpoint_id), 0))::int as n
        from holdfast_endpoint_pacing p where p.endpoint_id = ${endpoint.id}`;
      return row?.n;
    };
    expect(await inFlight()).toBe(7);
    await reconcileInFlight(pgQueue(db));
    expect(await inFlight()).toBe(2);
  });
});
