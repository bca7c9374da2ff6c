import { migrate } from '@holdfast/db/migrate';
import { fromPostgres, postgresTransaction } from '@holdfast/db/postgres';
import { createTestDatabase, type TestDatabase } from '@holdfast/pg/testing';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { allMigrations } from '../src/db';
import { INBOX_MAX_ATTEMPTS, processInbox } from '../src/inbox';

// The inbox processor (SPEC section 6, step 4): one event whose processing fails must not hold
// up the others, and a timestamp JavaScript can parse but PostgreSQL cannot store must not fail.

let db: TestDatabase;
const quiet = () => {};

beforeAll(async () => {
  db = await createTestDatabase({ max: 1 });
  await migrate(fromPostgres(db.sql), await allMigrations());
  // A real failure inside processing, for one resource only: PostgreSQL raises it.
  await db.sql.unsafe(`
    create function holdfast_test_poison() returns trigger language plpgsql as $$
    begin
      if new.resource = 'acct_1 ord_poison' then raise exception 'poisoned resource'; end if;
      return new;
    end $$;
    create trigger holdfast_test_poison before insert or update on holdfast_webhook_versions
      for each row execute function holdfast_test_poison();`);
});
afterAll(() => db.close());
beforeEach(async () => {
  await db.sql`delete from holdfast_webhook_inbox`;
  await db.sql`delete from holdfast_webhook_versions`;
});

let counter = 0;
async function enqueue(resourceId: string, object: Record<string, unknown> = {}, sequence: unknown = 1) {
  counter += 1;
  const id = `ie_${counter}`;
  await db.sql`
    insert into holdfast_webhook_inbox (id, scope, tenant, webhook_id, type, payload, body, received_at)
    values (${id}, 'orders', 'acct_1', ${`msg_${counter}`}, 'order.updated',
            ${db.sql.json({ type: 'order.updated', sequence, data: { object: { id: resourceId, ...object } } } as never)},
            ${new Uint8Array()}, now() - make_interval(secs => ${1000 - counter}))`;
  return id;
}

/** The database's clock (the one its `now()` reads), in ms since the epoch. */
async function databaseClock(): Promise<number> {
  const [found] = await db.sql<{ at: Date }[]>`select clock_timestamp() as at`;
  if (!found) throw new Error('no clock');
  return found.at.getTime();
}

async function statusOf(id: string) {
  const [row] =
    await db.sql`select status, attempts, next_attempt_at, last_error from holdfast_webhook_inbox where id = ${id}`;
  return row;
}

describe('processInbox', () => {
  it('processes the events around one that fails, and retries that one later with a growing delay', async () => {
    const before = await enqueue('ord_a');
    const poison = await enqueue('ord_poison');
    const after = await enqueue('ord_b');
    // Each retry's due time is checked on the database's clock, read before and after the round
    // that failed it: it lies in that window moved by the delay, however long the round took.
    const firstRound = await databaseClock();
    expect(
      await processInbox({ db: fromPostgres(db.sql), transaction: postgresTransaction(db.sql) }, 50, quiet),
    ).toBe(3);
    const firstEnd = await databaseClock();
    expect((await statusOf(before))?.status).toBe('processed');
    expect((await statusOf(after))?.status).toBe('processed');
    const first = await statusOf(poison);
    expect(first).toMatchObject({ status: 'pending', attempts: 1 });
    expect(first?.last_error).toMatch(/SQLSTATE P0001.*poisoned resource/);
    expect(first?.next_attempt_at.getTime()).toBeGreaterThanOrEqual(firstRound + 2000);
    expect(first?.next_attempt_at.getTime()).toBeLessThanOrEqual(firstEnd + 2000);
    // Not due yet: the next round leaves it alone.
    expect(
      await processInbox({ db: fromPostgres(db.sql), transaction: postgresTransaction(db.sql) }, 50, quiet),
    ).toBe(0);
    await db.sql`update holdfast_webhook_inbox set next_attempt_at = now() - interval '1 second' where id = ${poison}`;
    const secondRound = await databaseClock();
    expect(
      await processInbox({ db: fromPostgres(db.sql), transaction: postgresTransaction(db.sql) }, 50, quiet),
    ).toBe(1);
    const secondEnd = await databaseClock();
    const second = await statusOf(poison);
    expect(second?.attempts).toBe(2);
    // 2 s after the first failure, 4 s after the second.
    expect(second?.next_attempt_at.getTime()).toBeGreaterThanOrEqual(secondRound + 4000);
    expect(second?.next_attempt_at.getTime()).toBeLessThanOrEqual(secondEnd + 4000);
  });

  it(`sets an event aside as failed after ${INBOX_MAX_ATTEMPTS} attempts and says why`, async () => {
    const poison = await enqueue('ord_poison');
    const logged: string[] = [];
    for (let attempt = 1; attempt <= INBOX_MAX_ATTEMPTS; attempt += 1) {
      await db.sql`update holdfast_webhook_inbox set next_attempt_at = null where id = ${poison}`;
      expect(
        await processInbox(
          { db: fromPostgres(db.sql), transaction: postgresTransaction(db.sql) },
          50,
          (message) => logged.push(message),
        ),
      ).toBe(1);
    }
    expect(await statusOf(poison)).toMatchObject({
      status: 'failed',
      attempts: INBOX_MAX_ATTEMPTS,
      next_attempt_at: null,
    });
    expect(logged).toHaveLength(INBOX_MAX_ATTEMPTS);
    expect(logged.at(-1)).toMatch(/set aside/);
    expect(
      await processInbox({ db: fromPostgres(db.sql), transaction: postgresTransaction(db.sql) }, 50, quiet),
    ).toBe(0);
  });

  it('treats an updatedAt that is no valid date, or before 1970, as no version (the event is still processed)', async () => {
    const far = await enqueue('ord_far', { updatedAt: '10000-01-01T00:00:00.000Z' }, 'not a sequence');
    const negative = await enqueue('ord_neg', { updatedAt: '-000001-01-01T00:00:00.000Z' }, null);
    const usable = await enqueue('ord_ok', { updatedAt: '9999-12-31T23:59:59.999Z' }, null);
    expect(
      await processInbox({ db: fromPostgres(db.sql), transaction: postgresTransaction(db.sql) }, 50, quiet),
    ).toBe(3);
    for (const id of [far, negative, usable]) expect((await statusOf(id))?.status).toBe('processed');
    const versions = await db.sql`select resource from holdfast_webhook_versions order by resource`;
    expect(versions.map((v) => v.resource)).toEqual(['acct_1 ord_ok']);
  });
});
