import { fromPg } from '@holdfast/db/pg';
import { createTestDatabase, realPostgres, type TestDatabase } from '@holdfast/pg/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEndpoint, enqueueEvent, migrations } from '../src/index';
import { endPools, pgPool } from './fixtures/db';

afterAll(endPools);

// A session keeps the plans its first runs of a function's statements got. An idle deployment's
// queue is empty, and autovacuum analyzes it so; a session whose first deliveries were written
// then must not scan the whole queue for every delivery it writes once a backlog has built up.

const ENDPOINTS = 20;
const EVENTS = 40;

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
  for (const migration of migrations()) await db.sql.unsafe(migration.sql);
});
afterAll(() => db?.close());

describe.skipIf(!realPostgres)('plans of the queue triggers', () => {
  it('a session that first wrote on an empty, analyzed queue reads one queue row per delivery written', async () => {
    // One session writes everything, as one pooled connection of a service does.
    const writer = fromPg(pgPool(db, 1));
    const reader = fromPg(pgPool(db, 1));
    const account = 'acct_plans';
    for (let i = 0; i < ENDPOINTS; i += 1) {
      await createEndpoint(
        writer,
        { account, url: `http://127.0.0.1:1024/hook/${i}` },
        { allowPrivateDestinations: true },
      );
    }
    await writer.query('analyze holdfast_delivery_queue, holdfast_endpoint_queue, holdfast_endpoint_pacing');

    const counters = async () => {
      // The writer's counters reach the statistics when it next goes idle.
      await writer.query('select pg_stat_force_next_flush()');
      await writer.query('select 1');
      const rows = await reader.query<{ relname: string; seq: string; idx: string }>(
        `select relname, seq_tup_read::text as seq, coalesce(idx_scan, 0)::text as idx
         from pg_stat_user_tables where schemaname = current_schema()
           and relname in ('holdfast_delivery_queue', 'holdfast_endpoint_queue')`,
      );
      return new Map(rows.map((r) => [r.relname, { seq: Number(r.seq), idx: Number(r.idx) }]));
    };
    const before = await counters();
    for (let e = 0; e < EVENTS; e += 1) {
      await enqueueEvent(writer, { account, type: 'order.created', resourceId: `ord_${e}`, object: { e } });
    }
    const after = await counters();
    const delta = (table: string) => ({
      seq: (after.get(table)?.seq ?? 0) - (before.get(table)?.seq ?? 0),
      idx: (after.get(table)?.idx ?? 0) - (before.get(table)?.idx ?? 0),
    });
    const queue = delta('holdfast_delivery_queue');
    const turns = delta('holdfast_endpoint_queue');
    // Every delivery's queue row and its endpoint's turn found through their keys...
    expect(queue.idx).toBeGreaterThanOrEqual(ENDPOINTS * EVENTS);
    expect(turns.idx).toBeGreaterThanOrEqual(ENDPOINTS * EVENTS);
    // ...and no row read by scanning either table.
    expect(queue.seq).toBe(0);
    expect(turns.seq).toBe(0);
  });
});
