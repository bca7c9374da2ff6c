import { createTestDatabase, realPostgres } from '@holdfast/pg/testing';
import { expect, it } from 'vitest';
import { migrate, migrationFiles } from '../src/db';

// Issue 8: migrations run at start under a PostgreSQL advisory lock in one transaction, so two
// instances starting together do not race: both finish, each migration is applied once.

it.skipIf(!realPostgres)(
  'two instances migrating at once both succeed and apply each migration once (needs DATABASE_URL: several connections)',
  async () => {
    const db = await createTestDatabase({ max: 1 });
    const other = await db.connectAgain(1);
    try {
      const files = await migrationFiles();
      // A slow first migration widens the window in which an unlocked runner would race.
      const slow = [{ id: '000_slow', sql: 'select pg_sleep(0.3)' }, ...files];
      const [a, b] = await Promise.all([migrate(db.sql, [], slow), migrate(other.sql, [], slow)]);
      expect([...(a ?? []), ...(b ?? [])].sort()).toEqual(slow.map((m) => m.id).sort());
      const rows = await db.sql<{ id: string }[]>`select id from holdfast_migrations order by id`;
      expect(rows.map((r) => r.id)).toEqual(slow.map((m) => m.id).sort());
      expect(await migrate(db.sql, [], slow)).toEqual([]);
    } finally {
      await other.close();
      await db.close();
    }
  },
);

it('a failing migration rolls back whole and is not recorded', async () => {
  const db = await createTestDatabase({ max: 1 });
  try {
    const broken = [
      { id: '001_table', sql: 'create table holdfast_rollback_probe (id int)' },
      { id: '002_broken', sql: 'select * from no_such_table' },
    ];
    await expect(migrate(db.sql, [], broken)).rejects.toThrow();
    const [probe] = await db.sql`select to_regclass('holdfast_rollback_probe') as name`;
    expect(probe?.name).toBeNull();
  } finally {
    await db.close();
  }
});

it('moves an existing inbox into the receiver toolkit: events, their ids and versions (migration 540)', async () => {
  const db = await createTestDatabase({ max: 1 });
  try {
    const all = await migrationFiles();
    // A database as it stood before: everything up to 530 applied, the toolkit's inbox absent.
    const before = all.filter(
      (m) => m.id !== '540_inbox_in_the_verifier_toolkit' && m.id !== 'webhook-verifier/002_inbox',
    );
    await migrate(db.sql, [], before);
    await db.sql`
      insert into holdfast_inbound_events
        (id, receiver, account_id, webhook_id, event_type, payload, status, resource_id, sequence, attempts, raw_body)
      values
        ('inb_old1', 'billing', 'acct_1', 'msg_1', 'order.updated', ${db.sql.json({ sequence: 7 })}, 'processed', 'ord_1', 7, 1,
         ${new TextEncoder().encode('{"sequence":7}')}),
        ('inb_old2', 'billing', 'acct_1:live', 'msg_2', null, ${db.sql.json({ a: 1 })}, 'pending', null, null, 0, null)`;
    await db.sql`
      insert into holdfast_inbound_resource_versions (account_id, resource_id, sequence, updated_at, event_id)
      values ('acct_1', 'ord_1', 7, null, 'inb_old1'),
             ('acct_1', 'ord_2', null, '2026-11-22T10:00:00Z', 'inb_x')`;
    expect(await migrate(db.sql, [], all)).toEqual([
      'webhook-verifier/002_inbox',
      '540_inbox_in_the_verifier_toolkit',
    ]);
    const rows = await db.sql`
      select id, scope, tenant, webhook_id, type, status, resource, attempts, convert_from(body, 'UTF8') as text
      from holdfast_webhook_inbox order by id`;
    expect(rows).toEqual([
      {
        id: 'inb_old1',
        scope: 'billing',
        tenant: 'acct_1',
        webhook_id: 'msg_1',
        type: 'order.updated',
        status: 'processed',
        resource: 'ord_1',
        attempts: 1,
        text: '{"sequence":7}',
      },
      {
        id: 'inb_old2',
        scope: 'billing',
        tenant: 'acct_1:live',
        webhook_id: 'msg_2',
        type: null,
        status: 'pending',
        resource: null,
        attempts: 0,
        text: '{"a": 1}',
      },
    ]);
    const keys = await db.sql`select key from holdfast_webhook_dedup order by key`;
    expect(keys.map((k) => k.key)).toEqual(['billing msg_1', 'billing msg_2']);
    const versions =
      await db.sql`select resource, version::text from holdfast_webhook_versions order by resource`;
    expect(versions).toEqual([
      { resource: 'acct_1 ord_1', version: '7' },
      { resource: 'acct_1 ord_2', version: String(Date.parse('2026-11-22T10:00:00Z')) },
    ]);
    const [old] = await db.sql`select to_regclass('holdfast_inbound_events') as name`;
    expect(old?.name).toBeNull();
  } finally {
    await db.close();
  }
});
