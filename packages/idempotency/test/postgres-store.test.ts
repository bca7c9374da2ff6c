import { createTestDatabase, type TestDatabase } from '@holdfast/pg/testing';
import { afterAll, beforeAll } from 'vitest';
import { PostgresIdempotencyStore, schema } from '../src/postgres';
import { storeBehaviour } from './store-suite';

let db: TestDatabase;
let store: PostgresIdempotencyStore;

beforeAll(async () => {
  db = await createTestDatabase();
  await db.sql.unsafe(schema);
  await db.sql.unsafe(schema); // idempotent DDL
  store = new PostgresIdempotencyStore(db.sql);
});
afterAll(() => db?.close());

storeBehaviour(
  `PostgresIdempotencyStore (${process.env.DATABASE_URL ? 'PostgreSQL' : 'PGlite'})`,
  () => store,
);
