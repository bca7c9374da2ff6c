import { randomBytes } from 'node:crypto';
import type { Db } from '@holdfast/db';
import { migrate } from '@holdfast/db/migrate';
import { fromPostgres, postgresTransaction } from '@holdfast/db/postgres';
import { createTestDatabase, type TestDatabase } from '@holdfast/pg/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { maintainInbox, migrations, postgresInbox } from '../src/postgres';
import type { WebhookEvent } from '../src/receiver';

// The inbox in time partitions: the migration moves existing entries into them, duplicates stay
// out across partitions, and retention drops whole partitions, never one with a pending entry.

const DAY_MS = 86_400_000;
let db: TestDatabase;
const schemas: string[] = [];

beforeAll(async () => {
  db = await createTestDatabase({ max: 2 });
});
afterAll(async () => {
  for (const schema of schemas) await db.sql.unsafe(`drop schema if exists ${schema} cascade`);
  await db?.close();
});

/** A schema of its own for each test, with the migrations (or the first `upTo`) applied. */
async function freshSchema(upTo?: number): Promise<string> {
  const schema = `inbox_parts_${randomBytes(5).toString('hex')}`;
  schemas.push(schema);
  const all = migrations({ schema });
  await migrate(fromPostgres(db.sql), upTo === undefined ? all : all.slice(0, upTo), { schema });
  return schema;
}

function event(id: string): WebhookEvent {
  const payload = `{"type":"order.paid","id":"${id}"}`;
  return {
    id,
    timestamp: 0,
    type: undefined,
    payload: JSON.parse(payload),
    body: new TextEncoder().encode(payload),
  };
}

async function partitions(schema: string): Promise<string[]> {
  const rows = await db.sql<{ name: string }[]>`
    select c.relname as name from pg_inherits i
    join pg_class c on c.oid = i.inhrelid
    where i.inhparent = ${`${schema}.holdfast_webhook_inbox`}::regclass
    order by c.relname`;
  return rows.map((row) => row.name);
}

const dayName = (ms: number) =>
  `holdfast_webhook_inbox_p${new Date(ms).toISOString().slice(0, 10).replaceAll('-', '')}`;

describe('the partitioned inbox', () => {
  it('moves the entries of an unpartitioned inbox into partitions of their days, and processes them after', async () => {
    const schema = await freshSchema(3);
    const day1 = Date.parse('2031-01-10T08:00:00Z');
    await db.sql.unsafe(`
      insert into ${schema}.holdfast_webhook_inbox (id, scope, webhook_id, payload, body, status, received_at)
      values ('inb_a', 'billing', 'msg_a', '{}', '\\x7b7d', 'processed', '${new Date(day1).toISOString()}'),
             ('inb_b', 'billing', 'msg_b', '{}', '\\x7b7d', 'pending', '${new Date(day1 + DAY_MS).toISOString()}')`);
    await migrate(fromPostgres(db.sql), migrations({ schema }), { schema });

    const names = await partitions(schema);
    expect(names).toContain(dayName(day1));
    expect(names).toContain(dayName(day1 + DAY_MS));
    const rows = await db.sql.unsafe(
      `select id, status, tableoid::regclass::text as part from ${schema}.holdfast_webhook_inbox order by id`,
    );
    expect(rows.map((row) => [row.id, row.status])).toEqual([
      ['inb_a', 'processed'],
      ['inb_b', 'pending'],
    ]);
    expect(rows[1]?.part).toContain(dayName(day1 + DAY_MS));

    const inbox = postgresInbox(fromPostgres(db.sql), { schema });
    const seen: string[] = [];
    const handled = await inbox.process(postgresTransaction(db.sql), {
      handle: (entry) => {
        seen.push(entry.webhookId);
      },
    });
    expect(handled).toBe(1);
    expect(seen).toEqual(['msg_b']);
    const [after] = await db.sql.unsafe(
      `select status from ${schema}.holdfast_webhook_inbox where id = 'inb_b'`,
    );
    expect(after?.status).toBe('processed');
  });

  it('keeps a duplicate out when the first copy is in another partition and its claim has expired', async () => {
    const schema = await freshSchema();
    const inbox = postgresInbox(fromPostgres(db.sql), { schema });
    const first = await inbox.enqueue(event('msg_twice'), { scope: 'billing' });
    expect(first.duplicate).toBe(false);
    // The first copy moves to a partition of an earlier day, and its claim is gone.
    await maintainInbox(fromPostgres(db.sql), { schema, now: () => Date.now() - 3 * DAY_MS, aheadDays: 0 });
    await db.sql.unsafe(`
      update ${schema}.holdfast_webhook_inbox set received_at = received_at - interval '3 days';
      delete from ${schema}.holdfast_webhook_dedup;`);
    const [moved] = await db.sql.unsafe(
      `select tableoid::regclass::text as part from ${schema}.holdfast_webhook_inbox where webhook_id = 'msg_twice'`,
    );
    expect(moved?.part).toContain(dayName(Date.now() - 3 * DAY_MS));

    const again = await inbox.enqueue(event('msg_twice'), { scope: 'billing' });
    expect(again).toEqual({ duplicate: true, receipt: first.receipt });
    const [count] = await db.sql.unsafe(`select count(*)::int as n from ${schema}.holdfast_webhook_inbox`);
    expect(count?.n).toBe(1);
  });

  it('makes the partition of today on enqueue when the maintenance never ran', async () => {
    const schema = await freshSchema();
    const today = dayName(Date.now());
    await db.sql.unsafe(`drop table ${schema}.${today}`);
    const inbox = postgresInbox(fromPostgres(db.sql), { schema });
    expect((await inbox.enqueue(event('msg_late'), { scope: 'billing' })).duplicate).toBe(false);
    expect(await partitions(schema)).toContain(today);
  });

  it('over 40 days, drops whole partitions past retention, never deletes, and keeps every pending entry', async () => {
    const schema = await freshSchema();
    // Every DELETE that reaches an entry of any partition, present or future, is recorded.
    await db.sql.unsafe(`
      create table ${schema}.deleted (id text);
      create function ${schema}.record_delete() returns trigger language plpgsql as $$
        begin insert into ${schema}.deleted values (old.id); return old; end $$;
      create trigger record_delete after delete on ${schema}.holdfast_webhook_inbox
        for each row execute function ${schema}.record_delete();`);
    const sent: string[] = [];
    const base = fromPostgres(db.sql);
    const watched: Db = {
      query: (text, values) => {
        sent.push(text);
        return base.query(text, values);
      },
    };
    const inbox = postgresInbox(fromPostgres(db.sql), { schema });
    const start = Date.parse('2032-03-01T00:00:00Z');
    const kept = new Set<string>();
    let held: string[] = [];
    for (let day = 0; day < 40; day += 1) {
      const midnight = start + day * DAY_MS;
      const run = await maintainInbox(watched, {
        schema,
        now: () => midnight + 6 * 3_600_000,
        retentionDays: 7,
        aheadDays: 2,
      });
      held = run.held;
      // Three entries received this day: processed, except on days 3 and 20 one stays pending
      // (not due for years), as an entry the app has not processed yet.
      for (let n = 0; n < 3; n += 1) {
        const pending = (day === 3 || day === 20) && n === 1;
        const id = `inb_${day}_${n}`;
        if (pending) kept.add(id);
        await db.sql.unsafe(
          `insert into ${schema}.holdfast_webhook_inbox (id, scope, webhook_id, payload, body, received_at, next_attempt_at)
           values ($1, 'billing', $1, '{}', '\\x7b7d', $2, $3)`,
          [
            id,
            new Date(midnight + (n + 8) * 3_600_000).toISOString(),
            pending ? '2100-01-01T00:00:00Z' : null,
          ],
        );
      }
      await inbox.process(postgresTransaction(db.sql), { batch: 10 });
    }

    expect(sent.filter((text) => /\bdelete\b/i.test(text))).toEqual([]);
    expect(await db.sql.unsafe(`select id from ${schema}.deleted`)).toEqual([]);
    const names = await partitions(schema);
    // The last run (day 39) kept days 32..41: retention of 7 days from day 39, 06:00, and two ahead.
    const expected = [3, 20, ...Array.from({ length: 10 }, (_, i) => 32 + i)].map((day) =>
      dayName(start + day * DAY_MS),
    );
    expect(names).toEqual(expected.sort());
    expect(held).toEqual([dayName(start + 3 * DAY_MS), dayName(start + 20 * DAY_MS)]);
    const pending = await db.sql.unsafe(
      `select id from ${schema}.holdfast_webhook_inbox where status = 'pending' order by id`,
    );
    expect(new Set(pending.map((row) => row.id))).toEqual(kept);
    const [count] = await db.sql.unsafe(`select count(*)::int as n from ${schema}.holdfast_webhook_inbox`);
    // Days 32..39 hold three each, and days 3 and 20 their three.
    expect(count?.n).toBe(8 * 3 + 2 * 3);
  });
});
