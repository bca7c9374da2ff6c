import { createTestDatabase } from '@holdfast/pg/testing';
import { migrate } from '@holdfast/pg-migrate';
import { expect, it } from 'vitest';
import { allMigrations } from '../src/db';

// The runner itself (advisory lock, rollback, ids never re-applied) is tested in
// @holdfast/pg-migrate. Here: the server's own data migrations move existing rows as they must.

it('moves an existing inbox into the receiver toolkit: events, their ids and versions (migration 540)', async () => {
  const db = await createTestDatabase({ max: 1 });
  try {
    const all = await allMigrations();
    // A database as it stood before: everything up to 530 applied, the toolkit's inbox absent.
    const before = all.filter(
      (m) =>
        m.id !== '540_inbox_in_the_verifier_toolkit' &&
        m.id !== '@holdfast/webhook-verifier/002_inbox' &&
        m.id !== '@holdfast/webhook-verifier/003_inbox_by_tenant',
    );
    await migrate(db.sql, before);
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
    expect(await migrate(db.sql, all)).toEqual([
      '@holdfast/webhook-verifier/002_inbox',
      '@holdfast/webhook-verifier/003_inbox_by_tenant',
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
