import { randomBytes } from 'node:crypto';
import { migrate } from '@holdfast/db/migrate';
import { fromPostgres } from '@holdfast/db/postgres';
import { createTestDatabase, realPostgres, type TestDatabase } from '@holdfast/pg/testing';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type IdempotencyStore, memoryIdempotencyStore, runIdempotent } from '../src/index';
import { idempotent, migrations, postgresIdempotencyStore } from '../src/postgres';
import { checkAgainstModel, type Execute, steps } from './model';

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
  await migrate(fromPostgres(db.sql), migrations);
  await db.sql`create table things (prefix text not null, execution int not null)`;
});
afterAll(() => db?.close());

const engine = realPostgres ? 'PostgreSQL' : 'PGlite';

function plain(store: IdempotencyStore): Execute {
  return (request, handler) => runIdempotent(store, request, () => handler(async () => {}));
}

describe('properties: random interleavings of repeats, changed bodies and failures match the model', () => {
  const cases: Array<[string, () => IdempotencyStore, number]> = [
    ['the in-memory store', () => memoryIdempotencyStore(), 200],
    [`the PostgreSQL store (${engine})`, () => postgresIdempotencyStore(db.sql), 50],
  ];
  for (const [name, makeStore, numRuns] of cases) {
    it(`plain flow over ${name}`, async () => {
      const store = makeStore();
      await fc.assert(
        fc.asyncProperty(steps({ interleave: true }), async (sequence) => {
          const result = await checkAgainstModel(sequence, plain(store), randomBytes(6).toString('hex'));
          expect(result.runs).toBe(result.expectedRuns);
        }),
        { numRuns },
      );
    });
  }

  // On PGlite one connection serves everything, so a transaction held in flight would block
  // the next request's claim: there the atomic flow is checked on sequences without overlap.
  it(`atomic idempotent() on ${engine}: committed business rows are exactly the stored non-problem answers`, async () => {
    await fc.assert(
      fc.asyncProperty(steps({ interleave: realPostgres }), async (sequence) => {
        const prefix = randomBytes(6).toString('hex');
        const execute: Execute = (request, handler) =>
          idempotent(db.sql, request, (tx) =>
            handler(async (execution) => {
              await tx`insert into things (prefix, execution) values (${prefix}, ${execution})`;
            }),
          );
        const result = await checkAgainstModel(sequence, execute, prefix);
        expect(result.runs).toBe(result.expectedRuns);
        const rows = await db.sql<{ execution: number }[]>`
          select execution from things where prefix = ${prefix} order by execution`;
        expect(rows.map((row) => row.execution)).toEqual([...result.committed].sort((a, b) => a - b));
      }),
      { numRuns: 50 },
    );
  });
});
