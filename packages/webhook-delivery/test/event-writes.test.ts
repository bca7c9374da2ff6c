import type { Db } from '@holdfast/db';
import { fromPostgres } from '@holdfast/db/postgres';
import { createTestDatabase, type TestDatabase } from '@holdfast/pg/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEndpoint, enqueueEvent, eventWrites, migrations } from '../src/index';

// eventWrites(): enqueueEvent's outbox as CTEs of the caller's statement, gated by a condition,
// numbered after the caller's own values.

let db: TestDatabase;
let store: Db;
const ACCOUNT = 'acct_event_writes';
const options = { allowPrivateDestinations: true };

beforeAll(async () => {
  db = await createTestDatabase();
  store = fromPostgres(db.sql);
  for (const migration of migrations()) await db.sql.unsafe(migration.sql);
  await db.sql`create table orders (id text primary key)`;
  await createEndpoint(
    store,
    { account: ACCOUNT, url: 'http://127.0.0.1:1024/a', eventTypes: ['order.created'] },
    options,
  );
  await createEndpoint(
    store,
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
    const first = eventWrites(
      { account: ACCOUNT, type: 'order.created', resourceId: 'ord_ew1', object },
      { now, offset: 1 },
    );
    // The business write's value is $1; the CTEs' are numbered after it.
    await store.query(`with created as (insert into orders (id) values ($1::text)), ${first.ctes} select 1`, [
      'ord_ew1',
      ...first.values,
    ]);
    const second = await db.sql.begin((tx) =>
      enqueueEvent(
        fromPostgres(tx),
        { account: ACCOUNT, type: 'order.created', resourceId: 'ord_ew1', object },
        { now },
      ),
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
    expect(await db.sql`select id from orders`).toEqual([{ id: 'ord_ew1' }]);
  });

  it('writes nothing when its condition does not hold, which may use the caller’s values', async () => {
    for (const [claimed, resourceId] of [
      [false, 'ord_ew2'],
      [true, 'ord_ew3'],
    ] as const) {
      const gated = eventWrites(
        { account: ACCOUNT, type: 'order.created', resourceId, object: { id: resourceId } },
        { offset: 1, when: '$1::boolean' },
      );
      await store.query(`with ${gated.ctes} select 1`, [claimed, ...gated.values]);
      const { events, deliveries } = await recorded(resourceId);
      expect([events.length, deliveries]).toEqual(claimed ? [1, 1] : [0, 0]);
      const [sequence] =
        await db.sql`select 1 from holdfast_resource_sequences where resource_id = ${resourceId}`;
      expect(sequence !== undefined).toBe(claimed);
    }
  });

  it('refuses an offset that is no count of values', () => {
    for (const offset of [-1, 1.5])
      expect(() =>
        eventWrites({ account: ACCOUNT, type: 't', resourceId: 'r', object: {} }, { offset }),
      ).toThrow(RangeError);
  });
});
