import { realPostgres } from '@holdfast/pg/testing';
import pg from 'pg';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Listener } from '../src/index';
import { pgListener } from '../src/pg';
import { postgresListener } from '../src/postgres';

const url = process.env.DATABASE_URL ?? '';

/** Resolves with the next payload `listener` hears on `channel` that satisfies `accept`. */
function next(heard: string[], accept: (payload: string) => boolean): Promise<string> {
  return new Promise((resolve) => {
    const check = setInterval(() => {
      const found = heard.find(accept);
      if (found !== undefined) {
        clearInterval(check);
        resolve(found);
      }
    }, 5);
  });
}

describe.skipIf(!realPostgres)('listeners (needs DATABASE_URL)', () => {
  let pool: pg.Pool;
  let sql: postgres.Sql;
  beforeAll(() => {
    pool = new pg.Pool({ connectionString: url, max: 3 });
    sql = postgres(url, { max: 2, onnotice: () => {} });
  });
  afterAll(async () => {
    await pool.end();
    await sql.end();
  });

  const cases: [string, () => Listener][] = [
    ['pgListener', () => pgListener(pool)],
    ['postgresListener', () => postgresListener(sql)],
  ];
  for (const [name, make] of cases) {
    it(`${name}: hears '' on connect, each payload on its channel, none on another, nothing after stop`, async () => {
      const channel = `holdfast.test "${name}"`;
      const heard: string[] = [];
      const stop = await make().listen(channel, (payload) => heard.push(payload));
      await next(heard, (p) => p === '');
      await pool.query('select pg_notify($1, $2)', ['another channel', 'no']);
      await pool.query('select pg_notify($1, $2)', [channel, 'one']);
      await next(heard, (p) => p === 'one');
      expect(heard).not.toContain('no');
      await stop();
      const count = heard.length;
      await pool.query('select pg_notify($1, $2)', [channel, 'two']);
      await pool.query('select pg_sleep(0.05)');
      expect(heard.length).toBe(count);
    });
  }

  it('pgListener: a terminated listening connection is replaced, and says so with another ""', async () => {
    const channel = 'holdfast.test.reconnect';
    const heard: string[] = [];
    const stop = await pgListener(pool).listen(channel, (payload) => heard.push(payload));
    try {
      await next(heard, (p) => p === '');
      await pool.query(
        `select pg_terminate_backend(pid) from pg_stat_activity where query = $1 and pid <> pg_backend_pid()`,
        [`listen "${channel}"`],
      );
      await next(heard, () => heard.filter((p) => p === '').length >= 2);
      await pool.query('select pg_notify($1, $2)', [channel, 'after']);
      await next(heard, (p) => p === 'after');
    } finally {
      await stop();
    }
  });
});
