import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../src/testing';

describe('createTestDatabase', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(async () => {
    await db.close();
  });

  it('runs parameterised SQL and transactions through postgres.js', async () => {
    await db.sql`create table things (id text primary key, n bigint not null)`;
    await db.sql.begin(async (tx) => {
      await tx`insert into things ${tx([
        { id: 'a', n: 1 },
        { id: 'b', n: -2 },
      ])}`;
    });
    const rows = await db.sql<{ id: string; n: string }[]>`select id, n from things order by n`;
    expect(rows.map((r) => [r.id, r.n])).toEqual([
      ['b', '-2'],
      ['a', '1'],
    ]);
  });

  it('rolls a failed transaction back', async () => {
    await expect(
      db.sql.begin(async (tx) => {
        await tx`insert into things values ('c', 3)`;
        throw new Error('boom');
      }),
    ).rejects.toThrow('boom');
    const [row] = await db.sql`select count(*)::int as c from things where id = 'c'`;
    expect(row?.c).toBe(0);
  });
});
