import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, type Database } from '../src/index';
import { createTestDatabase, realPostgres, type TestDatabase } from '../src/testing';

// porsager/postgres#1208: a backend terminated under a transaction made postgres.js write its
// `rollback` to a socket it had already dropped, from a setImmediate: an uncaught TypeError that
// ended the process. scripts/patch-postgres.mjs (postinstall) guards the driver; this shows the
// process survives, the transaction rejects as the connection error it is, and the pool recovers.
// Needs DATABASE_URL: PGlite has one session and no backend to terminate.
describe.skipIf(!realPostgres)('a terminated backend (needs DATABASE_URL)', () => {
  let db: TestDatabase;
  let killer: Database;
  const uncaught: unknown[] = [];
  const record = (error: unknown) => uncaught.push(error);
  beforeAll(async () => {
    // Recorded, not swallowed: the test fails on any of them.
    process.on('uncaughtException', record);
    db = await createTestDatabase({ max: 2 });
    killer = await connect({ databaseUrl: process.env.DATABASE_URL, max: 1 });
  });
  afterAll(async () => {
    process.off('uncaughtException', record);
    // Bounded: a pool left stuck by a failed round must not hide that round's error behind a
    // hook timeout.
    await within(10_000, 'closing the pools', Promise.all([killer?.close(), db?.close()]));
  });

  const settle = () => new Promise((resolve) => setTimeout(resolve, 100));
  /** `work`, or a rejection naming the step that never finished (a hang is a failure too). */
  const within = <T>(ms: number, step: string, work: Promise<T>): Promise<T> => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const hung = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${step}: no answer after ${ms} ms`)), ms);
    });
    return Promise.race([work, hung]).finally(() => clearTimeout(timer));
  };

  it('rejects the transaction with a connection error and never throws outside it', async () => {
    for (let round = 0; round < 5; round += 1) {
      let pid: number | undefined;
      let started: () => void = () => {};
      const running = new Promise<void>((resolve) => {
        started = resolve;
      });
      const tx = db.sql.begin(async (t) => {
        const [row] = await t<{ pid: number }[]>`select pg_backend_pid() as pid`;
        pid = row?.pid;
        started();
        await t`select pg_sleep(5)`;
        // Application code that carries on after the error writes to the dead connection too.
        await t`select 1`;
      });
      const outcome = tx.then(
        () => 'committed',
        (error: unknown) => (error instanceof Error && 'code' in error ? String(error.code) : 'other'),
      );
      // A transaction that fails before it starts is reported as such, not waited for.
      const early = await within(
        8000,
        `round ${round}: starting the transaction`,
        Promise.race([running.then(() => undefined), outcome.then((o) => `ended before it started: ${o}`)]),
      );
      expect(early).toBeUndefined();
      await within(8000, `round ${round}: terminating`, killer.sql`select pg_terminate_backend(${pid ?? 0})`);
      expect(await within(8000, `round ${round}: the transaction's rejection`, outcome)).toBe(
        'CONNECTION_CLOSED',
      );
      await settle();
      expect(uncaught).toEqual([]);
      const [row] = await within(
        8000,
        `round ${round}: the next query`,
        db.sql<{ one: number }[]>`select 1 as one`,
      );
      expect(row?.one).toBe(1);
    }
  });

  it('keeps every later session in step after a backend terminated whatever the transaction was doing', async () => {
    // The transaction is terminated after its first query, then sends its next one at once,
    // after a tick, after a spin of the event loop or after a timer. A `rollback` sent between
    // the socket's error and its close once stayed queued into the next session, which then
    // matched each answer to the query before it: its queries waited forever.
    const spin = (ms: number) => {
      const end = Date.now() + ms;
      while (Date.now() < end) {}
    };
    const waits = [
      async () => {},
      async () => spin(30),
      () => new Promise((resolve) => setImmediate(resolve)),
      () => new Promise((resolve) => setTimeout(resolve, 20)),
    ];
    for (let round = 0; round < 60; round += 1) {
      const wait = waits[round % waits.length] ?? (async () => {});
      const tx = db.sql.begin(async (t) => {
        const [row] = await t<{ pid: number }[]>`select pg_backend_pid() as pid`;
        await killer.sql`select pg_terminate_backend(${row?.pid ?? 0})`;
        await wait();
        await t`select pg_sleep(5)`;
      });
      const outcome = tx.then(
        () => 'committed',
        (error: unknown) => (error instanceof Error && 'code' in error ? String(error.code) : 'other'),
      );
      expect(await within(8000, `round ${round}: the transaction's rejection`, outcome)).toBe(
        'CONNECTION_CLOSED',
      );
      const [row] = await within(
        8000,
        `round ${round}: the next query`,
        db.sql<{ one: number }[]>`select 1 as one`,
      );
      expect(row?.one).toBe(1);
    }
    expect(uncaught).toEqual([]);
  }, 60_000);

  it("never runs a dead transaction's later queries in the transaction that reused its connection", async () => {
    const pool = await db.connectAgain(1);
    try {
      await pool.sql`create table if not exists terminated_writes (what text not null)`;
      let nextStarted: () => void = () => {};
      const next = new Promise<void>((resolve) => {
        nextStarted = resolve;
      });
      let orphanTried: (outcome: string) => void = () => {};
      const orphan = new Promise<string>((resolve) => {
        orphanTried = resolve;
      });
      const dead = pool.sql.begin(async (t) => {
        const [row] = await t<{ pid: number }[]>`select pg_backend_pid() as pid`;
        await killer.sql`select pg_terminate_backend(${row?.pid ?? 0})`;
        // Still running after its transaction rejected: it writes once the connection serves
        // the next transaction.
        await next;
        await t`insert into terminated_writes values ('dead transaction')`.then(
          () => orphanTried('written'),
          (error: unknown) =>
            orphanTried(error instanceof Error && 'code' in error ? String(error.code) : 'other'),
        );
      });
      expect(
        await within(
          8000,
          'the dead transaction',
          dead.then(
            () => 'committed',
            () => 'rejected',
          ),
        ),
      ).toBe('rejected');
      await within(
        8000,
        'the next transaction',
        pool.sql.begin(async (t) => {
          await t`insert into terminated_writes values ('next transaction')`;
          nextStarted();
          expect(await within(8000, "the dead transaction's write", orphan)).toBe('CONNECTION_CLOSED');
        }),
      );
      const rows = await pool.sql<{ what: string }[]>`select what from terminated_writes order by what`;
      expect(rows.map((r) => r.what)).toEqual(['next transaction']);
    } finally {
      await pool.close();
    }
  });

  it('rejects a plain query and lets the pool end without waiting for the dead session', async () => {
    const pool = await connect({ databaseUrl: process.env.DATABASE_URL, max: 1 });
    const [row] = await pool.sql<{ pid: number }[]>`select pg_backend_pid() as pid`;
    const query = pool.sql`select pg_sleep(5)`.then(
      () => 'answered',
      (error: unknown) => (error instanceof Error && 'code' in error ? String(error.code) : 'other'),
    );
    await settle();
    await killer.sql`select pg_terminate_backend(${row?.pid ?? 0})`;
    expect(await query).toBe('CONNECTION_CLOSED');
    // Unguarded, end() waited for the rejected query's answer forever; with no timeout given
    // it must resolve by itself.
    await pool.sql.end();
    expect(uncaught).toEqual([]);
  });

  it('survives every backend of a busy pool terminated, round after round, and answers afterwards', async () => {
    // Terminated while starting (its array-types query in flight) and while idle or busy: each
    // once ended the process (an unhandled rejection, or the null-socket write above).
    const application = `hf_pg_${Math.random().toString(36).slice(2, 10)}`;
    const pool = await connect({
      databaseUrl: process.env.DATABASE_URL,
      max: 3,
      applicationName: application,
    });
    const outcomes = new Map<string, number>();
    let flowing = true;
    const client = async (n: number) => {
      while (flowing) {
        const work =
          n % 2 === 0
            ? pool.sql`select pg_sleep(0.02)`
            : pool.sql.begin(async (t) => {
                await t`select pg_sleep(0.01)`;
                await t`select 1`;
              });
        const outcome = await Promise.race([
          new Promise<string>((r) => setTimeout(() => r(`HUNG${n % 2}`), 8000)),
          work.then(
            () => 'ok',
            (error: unknown) => (error instanceof Error && 'code' in error ? String(error.code) : 'other'),
          ),
        ]);
        outcomes.set(outcome, (outcomes.get(outcome) ?? 0) + 1);
      }
    };
    const clients = [0, 1, 2, 3, 4, 5].map(client);
    try {
      for (let round = 0; round < 10; round++) {
        await new Promise((resolve) => setTimeout(resolve, 150));
        await killer.sql`
          select pg_terminate_backend(pid) from pg_stat_activity where application_name = ${application}`;
      }
    } finally {
      flowing = false;
      await Promise.all(clients);
    }
    expect(uncaught).toEqual([]);
    // Only connection errors, never anything else.
    expect(
      [...outcomes.keys()].filter((k) => !['ok', 'CONNECTION_CLOSED', 'ECONNRESET', '57P01'].includes(k)),
    ).toEqual([]);
    const [row] = await pool.sql<{ one: number }[]>`select 1 as one`;
    expect(row?.one).toBe(1);
    await pool.sql.end();
  }, 60_000);
});
