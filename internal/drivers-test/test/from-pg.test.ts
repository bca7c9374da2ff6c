import { statementName } from '@holdfast/db';
import { fromPg } from '@holdfast/db/pg';
import { realPostgres } from '@holdfast/pg/testing';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';

// node-postgres needs a real PostgreSQL (PGlite serves postgres.js here).
const clients: pg.Client[] = [];
afterEach(async () => {
  await Promise.all(clients.splice(0).map((client) => client.end()));
});

async function connect(): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: process.env.DATABASE_URL });
  clients.push(client);
  await client.connect();
  return client;
}

async function prepared(client: pg.Client): Promise<string[]> {
  const { rows } = await client.query<{ name: string; statement: string }>(
    `select name, statement from pg_prepared_statements where name like 'hf\\_%' order by prepare_time`,
  );
  // Each under the name its text gives, whichever module or package prepared it.
  for (const row of rows) expect(row.name).toBe(statementName(row.statement));
  return rows.map((row) => row.statement);
}

describe.skipIf(!realPostgres)('fromPg (needs DATABASE_URL)', () => {
  it('prepares each statement once per connection and runs distinct texts side by side', async () => {
    const client = await connect();
    const db = fromPg(client);
    const double = 'select ($1::int * 2) as n';
    const triple = 'select ($1::int * 3) as n';
    for (let i = 1; i <= 3; i += 1) {
      expect(await db.query<{ n: number }>(double, [i])).toEqual([{ n: i * 2 }]);
      expect(await db.query<{ n: number }>(triple, [i])).toEqual([{ n: i * 3 }]);
    }
    expect(await prepared(client)).toEqual([double, triple]);
    // A second connection prepares the same texts under the same names on its own.
    const other = await connect();
    expect(await fromPg(other).query<{ n: number }>(triple, [5])).toEqual([{ n: 15 }]);
    expect(await prepared(other)).toEqual([triple]);
  });

  it('keeps working on a connection after a prepared statement failed in an aborted transaction', async () => {
    const client = await connect();
    const db = fromPg(client);
    const text = 'select (10 / $1::int) as n';
    await client.query('begin');
    await expect(db.query(text, [0])).rejects.toMatchObject({ code: '22012' });
    await expect(db.query(text, [2])).rejects.toMatchObject({ code: '25P02' });
    await client.query('rollback');
    expect(await db.query<{ n: number }>(text, [2])).toEqual([{ n: 5 }]);
  });

  it('prepares nothing with prepare: false', async () => {
    const client = await connect();
    const db = fromPg(client, { prepare: false });
    expect(await db.query<{ n: number }>('select ($1::int + 1) as n', [1])).toEqual([{ n: 2 }]);
    expect(await prepared(client)).toEqual([]);
  });
});
