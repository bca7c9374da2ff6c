import { createServer } from 'node:net';
import { createTestDatabase, realPostgres, type TestDatabase } from '@holdfast/pg/testing';
import { isProblemError, problem } from '@holdfast/problem-details';
import pg from 'pg';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { databaseFailure } from '../src/index';

// The one classifier behind a crash converter's 503 (the reference server's
// database-faults.test.ts, "backends terminated under load", once got a 500 internal_error): every shape a database that is down,
// going away or slow takes is a 503 with Retry-After, and nothing else is.

const coded = (code: string, message = `failed: ${code}`) => Object.assign(new Error(message), { code });

describe('databaseFailure', () => {
  it.each([
    // postgres.js
    'CONNECTION_ENDED',
    'CONNECTION_CLOSED',
    'CONNECTION_DESTROYED',
    'CONNECT_TIMEOUT',
    // sockets
    'ECONNREFUSED',
    'ECONNRESET',
    'ECONNABORTED',
    'EPIPE',
    'ETIMEDOUT',
    'EHOSTUNREACH',
    'ENETUNREACH',
    'EAI_AGAIN',
    'ERR_STREAM_DESTROYED',
    // SQLSTATE class 08, connection exception
    '08000',
    '08003',
    '08006',
    '08001',
    '08004',
    '08P01',
    // going away, starting, full
    '57P01',
    '57P02',
    '57P03',
    '57P05',
    '25P03',
    '53300',
    '53400',
    // rolled back whole, the same request succeeds again
    '40P01',
    '40001',
  ])('%s is unavailable', (code) => {
    expect(databaseFailure(coded(code))).toBe('unavailable');
  });

  it.each(['57014', '55P03'])('%s (a statement or lock timeout) is timed_out', (code) => {
    expect(databaseFailure(coded(code))).toBe('timed_out');
  });

  it('sees through a cause chain, an AggregateError and a 5xx problem built from one', () => {
    const wrapped = new Error('query failed', { cause: new Error('socket', { cause: coded('ECONNRESET') }) });
    expect(databaseFailure(wrapped)).toBe('unavailable');
    const both = Object.assign(
      new AggregateError([coded('ECONNREFUSED'), coded('ECONNREFUSED')], 'connect'),
      {
        code: undefined,
      },
    );
    expect(databaseFailure(both)).toBe('unavailable');
    expect(databaseFailure(problem('internal_error', { cause: coded('57P01') }))).toBe('unavailable');
    // A plain object with a code, as some drivers reject with.
    expect(databaseFailure({ code: 'CONNECTION_CLOSED', message: 'closed' })).toBe('unavailable');
  });

  it('leaves everything else alone: bugs, constraint errors, client problems', () => {
    for (const error of [
      new TypeError('x is undefined'),
      coded('23505'), // unique_violation: the handler's business
      coded('42P01'), // undefined_table: a bug
      coded('22P02'),
      coded('ENOENT'),
      coded('080'), // not a SQLSTATE
      { code: 57 },
      'CONNECTION_ENDED',
      null,
      undefined,
    ]) {
      expect(databaseFailure(error), JSON.stringify(String(error))).toBeUndefined();
    }
    // A 409 caused by a connection error is still a 409.
    const conflict = problem('version_conflict', { cause: coded('ECONNRESET') });
    expect(isProblemError(conflict) && conflict.status).toBe(409);
    expect(databaseFailure(conflict)).toBeUndefined();
    // Any error with a 4xx status, not only a problem of @holdfast/problem-details.
    expect(
      databaseFailure(Object.assign(new Error('gone'), { status: 410, cause: coded('57P01') })),
    ).toBeUndefined();
    expect(
      databaseFailure(Object.assign(new Error('bad gateway'), { status: 502, cause: coded('57P01') })),
    ).toBe('unavailable');
  });

  it.each([
    'Connection terminated unexpectedly',
    'Connection terminated',
    'Connection terminated due to connection timeout',
    'timeout exceeded when trying to connect',
    'Client has encountered a connection error and is not queryable',
    'Client was closed and is not queryable',
    'Cannot use a pool after calling end on the pool',
    'Query read timeout',
  ])('node-postgres: %s (an Error without a code) is unavailable', (message) => {
    expect(databaseFailure(new Error(message))).toBe('unavailable');
  });

  it("judges node-postgres's messages only on an Error without a code", () => {
    expect(databaseFailure(coded('23505', 'Connection terminated'))).toBeUndefined();
    expect(databaseFailure({ message: 'Connection terminated unexpectedly' })).toBeUndefined();
    expect(databaseFailure(new Error('the Connection terminated unexpectedly'))).toBeUndefined();
  });

  it('ends on a cause that is its own cause', () => {
    const loop = new Error('loop');
    Object.assign(loop, { cause: loop });
    expect(databaseFailure(loop)).toBeUndefined();
  });
});

/** A loopback port nobody listens on (one that was just freed). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe('real driver errors', () => {
  it('postgres.js against a port nobody listens on: unavailable', async () => {
    const port = await closedPort();
    const sql = postgres({ host: '127.0.0.1', port, connect_timeout: 5, max: 1, onnotice: () => {} });
    const error = await sql`select 1`.then(
      () => undefined,
      (e: unknown) => e,
    );
    await sql.end({ timeout: 0 });
    expect(databaseFailure(error)).toBe('unavailable');
  });

  it('node-postgres against a port nobody listens on, and a pool that cannot connect in time: unavailable', async () => {
    const refused = await closedPort();
    const pool = new pg.Pool({ host: '127.0.0.1', port: refused, max: 1 });
    const error = await pool.query('select 1').then(
      () => undefined,
      (e: unknown) => e,
    );
    await pool.end();
    expect(databaseFailure(error)).toBe('unavailable');

    // A listener that accepts and never answers: the pool gives up after its connect timeout.
    const sockets = new Set<import('node:net').Socket>();
    const silent = createServer((socket) => {
      sockets.add(socket);
    });
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const address = silent.address();
    const slow = new pg.Pool({
      host: '127.0.0.1',
      port: typeof address === 'object' && address ? address.port : 0,
      max: 1,
      connectionTimeoutMillis: 50,
    });
    const timedOut = await slow.query('select 1').then(
      () => undefined,
      (e: unknown) => e,
    );
    await slow.end();
    for (const socket of sockets) socket.destroy();
    await new Promise<void>((resolve) => silent.close(() => resolve()));
    expect(timedOut).toBeInstanceOf(Error);
    expect(databaseFailure(timedOut)).toBe('unavailable');
  });

  describe.skipIf(!realPostgres)('on PostgreSQL (needs DATABASE_URL)', () => {
    it('node-postgres: a terminated backend, a transaction on it, and a pool that was ended: unavailable', async () => {
      const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 2 });
      pool.on('error', () => {});
      const client = await pool.connect();
      client.on('error', () => {});
      const [pid] = (await client.query<{ pid: number }>('select pg_backend_pid() as pid')).rows;
      await client.query('begin');
      await pool.query('select pg_terminate_backend($1)', [pid?.pid]);
      const inTransaction = await client.query('select 1').then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(inTransaction).toBeInstanceOf(Error);
      expect(databaseFailure(inTransaction)).toBe('unavailable');
      const after = await client.query('rollback').then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(databaseFailure(after)).toBe('unavailable');
      client.release(true);
      await pool.end();
      const ended = await pool.query('select 1').then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(databaseFailure(ended)).toBe('unavailable');
    });

    let db: TestDatabase;
    beforeAll(async () => {
      db = await createTestDatabase();
    });
    afterAll(() => db?.close());

    it('a terminated backend (57P01) and a pool that was ended: unavailable', async () => {
      // On node-postgres, the driver the server runs on (postgres.js 3.4.x can hang or end the
      // process on its own terminated backend: porsager/postgres#1154, #1208).
      const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL ?? '', max: 1 });
      pool.on('error', () => {});
      const terminated = await pool.query('select pg_terminate_backend(pg_backend_pid())').then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(databaseFailure(terminated)).toBe('unavailable');
      await pool.end();
      const ended = await pool.query('select 1').then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(databaseFailure(ended)).toBe('unavailable');
    });

    it('a statement timeout (57014): timed_out; a unique violation: none', async () => {
      const timedOut = await db.sql
        .begin(async (tx) => {
          await tx`set local statement_timeout = 1`;
          await tx`select pg_sleep(5)`;
        })
        .then(
          () => undefined,
          (e: unknown) => e,
        );
      expect(databaseFailure(timedOut)).toBe('timed_out');
      await db.sql`create table t_unique (id int primary key)`;
      await db.sql`insert into t_unique values (1)`;
      const duplicate = await db.sql`insert into t_unique values (1)`.then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(databaseFailure(duplicate)).toBeUndefined();
    });
  });
});
