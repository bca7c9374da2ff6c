import { migrate } from '@holdfast/db/migrate';
import { fromPostgres } from '@holdfast/db/postgres';
import { createTestDatabase, realPostgres, type TestDatabase } from '@holdfast/pg/testing';
import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  createEndpoint,
  deleteEndpoint,
  endpointScope,
  endpointTenants,
  enqueueEvent,
  holdsDeliveryData,
  lockedEndpointCount,
  migrations,
  queuedEventTypes,
} from '../src/index';

let db: TestDatabase;
// Endpoints on the loopback address, never called: no name to resolve.
const local = { allowPrivateDestinations: true };

beforeAll(async () => {
  db = await createTestDatabase({ max: 4 });
  await migrate(fromPostgres(db.sql), migrations());
});
afterAll(() => db?.close());

it("answers about tenants' endpoints and deliveries through a Db", async () => {
  const pool = fromPostgres(db.sql);
  expect(await endpointTenants(pool)).toEqual([]);
  expect(await holdsDeliveryData(pool)).toBe(false);

  const { endpoint: orders } = await createEndpoint(
    pool,
    {
      account: 'acct_b',
      url: 'http://127.0.0.1:9999/hooks',
      eventTypes: ['order.created'],
    },
    local,
  );
  const { endpoint: gone } = await createEndpoint(
    pool,
    {
      account: 'acct_a',
      url: 'http://127.0.0.1:9999/other',
      eventTypes: [],
    },
    local,
  );
  await deleteEndpoint(pool, { account: 'acct_a', id: gone.id });
  expect(await endpointTenants(pool)).toEqual(['acct_a', 'acct_b']);
  expect(await holdsDeliveryData(pool)).toBe(true);

  // Deleted endpoints do not count, and the count is taken under the tenant's lock.
  expect(await db.sql.begin((tx) => lockedEndpointCount(fromPostgres(tx), 'acct_a'))).toBe(0);
  expect(await db.sql.begin((tx) => lockedEndpointCount(fromPostgres(tx), 'acct_b'))).toBe(1);

  expect(await endpointScope(pool, { account: 'acct_b', id: orders.id }, 'share')).toEqual({
    eventTypes: ['order.created'],
    status: 'active',
  });
  expect(await endpointScope(pool, { account: 'acct_a', id: orders.id }, 'update')).toBeUndefined();
  expect(await endpointScope(pool, { account: 'acct_a', id: gone.id }, 'update')).toBeUndefined();

  expect(await queuedEventTypes(pool, orders.id)).toEqual([]);
  await enqueueEvent(pool, {
    account: 'acct_b',
    type: 'order.created',
    resourceId: 'ord_1',
    object: { id: 'ord_1' },
  });
  expect(await queuedEventTypes(pool, orders.id)).toEqual(['order.created']);
});

it.skipIf(!realPostgres)(
  'serialises creations of one tenant: a second count waits for the first transaction',
  async () => {
    const order: string[] = [];
    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const first = db.sql.begin(async (tx) => {
      await lockedEndpointCount(fromPostgres(tx), 'acct_c');
      order.push('first counted');
      await held;
      order.push('first done');
    });
    await expect.poll(() => order.length).toBe(1);
    const second = db.sql.begin(async (tx) => {
      await lockedEndpointCount(fromPostgres(tx), 'acct_c');
      order.push('second counted');
    });
    const other = db.sql.begin(async (tx) => {
      await lockedEndpointCount(fromPostgres(tx), 'acct_d');
      order.push('other tenant counted');
    });
    await other;
    release();
    await Promise.all([first, second]);
    expect(order).toEqual(['first counted', 'other tenant counted', 'first done', 'second counted']);
  },
);
