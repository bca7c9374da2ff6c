import { createTestDatabase, type TestDatabase } from '@holdfast/pg/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEndpoint, enqueueEvent, eventWrites, migrations } from '../src/postgres';

// eventWrites(): enqueueEvent's outbox as CTEs of the caller's statement, gated by a condition.

let db: TestDatabase;
const ACCOUNT = 'acct_event_writes';
const options = { allowPrivateDestinations: true };

beforeAll(async () => {
  db = await createTestDatabase();
  for (const migration of migrations) await db.sql.unsafe(migration.sql);
  await createEndpoint(
    db.sql,
    { account: ACCOUNT, url: 'http://127.0.0.1:1024/a', eventTypes: ['order.created'] },
    options,
  );
  await createEndpoint(
    db.sql,
    { account: ACCOUNT, url: 'http://127.0.0.1:1024/b', eventTypes: ['order.refunded'] },
    options,
  );
});
afterAll(() => db.close());

async function recorded(resourceId: string) {
  const events = await db.sql<{ id: string; sequence: string; payload: string }[]>`
    select id, sequence::text, payload from holdfast_events where resource_id = ${resourceId} order by sequence`;
  const [deliveries] = await db.sql<{ n: number }[]>`
    select count(*)::int as n from holdfast_deliveries d join holdfast_events e on e.id = d.event_id
    where e.resource_id = ${resourceId}`;
  return { events, deliveries: deliveries?.n ?? -1 };
}

describe('eventWrites()', () => {
  it('writes the event enqueueEvent would, with its sequence, and fans out to subscribed endpoints', async () => {
    const object = { id: 'ord_ew1', total: 5, updatedAt: '2026-11-25T00:00:00.000Z' };
    const now = () => Date.parse('2026-11-25T00:00:00.000Z');
    const first = eventWrites(db.sql, {
      account: ACCOUNT,
      type: 'order.created',
      resourceId: 'ord_ew1',
      object,
      now,
    });
    await db.sql`with ${first.ctes} select 1`;
    const second = await db.sql.begin((tx) =>
      enqueueEvent(tx, { account: ACCOUNT, type: 'order.created', resourceId: 'ord_ew1', object, now }),
    );
    const { events, deliveries } = await recorded('ord_ew1');
    expect(events.map((e) => e.sequence)).toEqual(['1', '2']);
    expect(events[0]?.id).toBe(first.id);
    expect(JSON.parse(events[0]?.payload ?? '{}')).toEqual({
      id: first.id,
      type: 'order.created',
      createdAt: '2026-11-25T00:00:00.000Z',
      sequence: 1,
      data: { object },
    });
    expect(JSON.parse(events[1]?.payload ?? '{}')).toEqual({ ...second, sequence: 2 });
    expect(deliveries).toBe(2); // one per event, to the endpoint subscribed to order.created
  });

  it('writes nothing when its condition does not hold', async () => {
    const gated = eventWrites(db.sql, {
      account: ACCOUNT,
      type: 'order.created',
      resourceId: 'ord_ew2',
      object: { id: 'ord_ew2' },
      when: db.sql`false`,
    });
    await db.sql`with ${gated.ctes} select 1`;
    expect(await recorded('ord_ew2')).toEqual({ events: [], deliveries: 0 });
    const [sequence] = await db.sql`select 1 from holdfast_resource_sequences where resource_id = 'ord_ew2'`;
    expect(sequence).toBeUndefined();
  });
});
