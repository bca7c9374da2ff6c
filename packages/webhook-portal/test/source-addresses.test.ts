import { createKey, dbApiKeyStore, migrations as keyMigrations } from '@holdfast/api-keys';
import { fromPostgres, postgresTransaction } from '@holdfast/db/postgres';
import { createTestDatabase, type TestDatabase } from '@holdfast/pg/testing';
import { migrations as deliveryMigrations } from '@holdfast/webhook-delivery';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  migrations,
  publishSourceAddresses,
  readSourceAddresses,
  SOURCE_ADDRESSES_CHANGED,
} from '../src/index';

let database: TestDatabase;
const store = () => ({ db: fromPostgres(database.sql), transaction: postgresTransaction(database.sql) });

beforeAll(async () => {
  database = await createTestDatabase();
  for (const migration of [...keyMigrations(), ...deliveryMigrations(), ...migrations()])
    await database.sql.unsafe(migration.sql);
  await createKey(dbApiKeyStore(fromPostgres(database.sql)), 'acct_src', ['*']);
});
afterAll(() => database?.close());

const T0 = Date.parse('2026-11-27T10:00:00.000Z');
const proxied = { egress: { proxy: 'http://127.0.0.1:3128', ranges: ['203.0.113.0/24'] } };

describe('source addresses', () => {
  it('publishes once, keeps the date while the list is the same, and notifies every account of a change', async () => {
    const notices = async () =>
      (
        await database.sql<{ account_id: string; message: string }[]>`
          select account_id, message from holdfast_notifications where type = ${SOURCE_ADDRESSES_CHANGED}
          order by account_id`
      ).map((row) => row.account_id);

    // Nothing stored yet: reading publishes this configuration's list, and tells nobody.
    expect(await readSourceAddresses(store(), {}, () => T0)).toEqual({
      addresses: [],
      configured: false,
      updatedAt: '2026-11-27T10:00:00.000Z',
    });
    const same = await publishSourceAddresses(store(), {}, () => T0 + 60_000);
    expect(same).toMatchObject({ updatedAt: '2026-11-27T10:00:00.000Z', changedFrom: undefined });
    expect(await notices()).toEqual([]);

    const changed = await publishSourceAddresses(store(), proxied, () => T0 + 120_000);
    expect(changed).toEqual({
      addresses: ['203.0.113.0/24'],
      configured: true,
      updatedAt: '2026-11-27T10:02:00.000Z',
      changedFrom: [],
    });
    // Both modes of the one account with a key.
    expect((await notices()).length).toBe(2);
    expect(await readSourceAddresses(store(), {}, () => T0 + 180_000)).toEqual({
      addresses: ['203.0.113.0/24'],
      configured: true,
      updatedAt: '2026-11-27T10:02:00.000Z',
    });
  });

  it('notifies once when processes publish the same change together', async () => {
    const before = await database.sql`select count(*)::int as n from holdfast_notifications`;
    const other = { egress: { proxy: 'http://127.0.0.1:3128', ranges: ['198.51.100.0/24'] } };
    const results = await Promise.all(
      [0, 1, 2].map(() => publishSourceAddresses(store(), other, () => T0 + 240_000)),
    );
    expect(results.filter((result) => result.changedFrom !== undefined)).toHaveLength(1);
    const after = await database.sql`select count(*)::int as n from holdfast_notifications`;
    expect(Number(after[0]?.n) - Number(before[0]?.n)).toBe(2);
  });
});
