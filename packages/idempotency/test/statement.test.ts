import { migrate } from '@holdfast/db/migrate';
import { fromPostgres } from '@holdfast/db/postgres';
import { createTestDatabase, realPostgres, type TestDatabase } from '@holdfast/pg/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { IdempotentRequest } from '../src/index';
import { type Fragment, idempotent, idempotentStatement, migrations } from '../src/postgres';
import { deferred, freshKey, manualClock, problemOf } from './store-suite';

// idempotentStatement(): the key's claim (written already answered), the business writes and
// the answer in ONE statement; the transaction flow of idempotent() when the key is there.

let db: TestDatabase;

beforeAll(async () => {
  db = await createTestDatabase();
  await migrate(fromPostgres(db.sql), migrations);
  await db.sql`create table statement_orders (id text primary key, key text not null, total int not null check (total >= 0))`;
  await db.sql`create table statement_events (order_id text not null, type text not null)`;
});
afterAll(() => db?.close());

const request = (key: string | null, total = 500): IdempotentRequest => ({
  key,
  account: 'acct_1',
  method: 'POST',
  path: '/v1/orders',
  body: { total },
});

let ids = 0;

/** An order and its event as two CTEs gated on `claimed`; `sleep` holds the statement open. */
function order(key: string | null, total = 500, sleep = 0) {
  ids += 1;
  const id = `ord_${ids}_${Math.random().toString(36).slice(2)}`;
  const label = key ?? 'none';
  return {
    id,
    answer: { status: 201, headers: { Location: `/v1/orders/${id}` }, body: { id, total } },
    writes: (claimed: Fragment) => db.sql`
      created as (
        insert into statement_orders (id, key, total)
        select ${id}, ${label}, ${total}::int from (select pg_sleep(${sleep})) s where ${claimed}
        returning id
      ),
      event as (insert into statement_events (order_id, type) select id, 'order.created' from created)`,
  };
}

async function counts(key: string): Promise<{ orders: number; events: number; keys: number }> {
  const [row] = await db.sql<{ orders: number; events: number; keys: number }[]>`
    select (select count(*)::int from statement_orders where key = ${key}) as orders,
           (select count(*)::int from statement_events e join statement_orders o on o.id = e.order_id
             where o.key = ${key}) as events,
           (select count(*)::int from holdfast_idempotency_keys where key = ${key}) as keys`;
  return row ?? { orders: -1, events: -1, keys: -1 };
}

describe(`idempotentStatement(): claim, writes and answer in one statement (${realPostgres ? 'PostgreSQL' : 'PGlite'})`, () => {
  it('writes once with the answer stored, replays it after success, refuses another body with 422', async () => {
    const key = freshKey();
    const first = order(key);
    const created = await idempotentStatement(db.sql, request(key), first);
    expect(created.status).toBe(201);
    expect(created.headers.get('Idempotent-Replayed')).toBeNull();
    const body = await created.json();
    expect(body).toEqual({ id: first.id, total: 500 });
    expect(await counts(key)).toEqual({ orders: 1, events: 1, keys: 1 });
    const [stored] = await db.sql`
      select token, response_status, response_headers from holdfast_idempotency_keys where key = ${key}`;
    expect(stored).toMatchObject({ token: null, response_status: 201 });
    expect(stored?.response_headers).toMatchObject({ location: `/v1/orders/${first.id}` });

    // A retry builds another row (another id): nothing of it is written, the first answer comes back.
    const replay = await idempotentStatement(db.sql, request(key), order(key));
    expect(replay.status).toBe(201);
    expect(replay.headers.get('Idempotent-Replayed')).toBe('true');
    expect(replay.headers.get('Location')).toBe(`/v1/orders/${first.id}`);
    expect(await replay.json()).toEqual(body);
    expect(await counts(key)).toEqual({ orders: 1, events: 1, keys: 1 });

    const reused = await problemOf(idempotentStatement(db.sql, request(key, 501), order(key, 501)));
    expect(reused.status).toBe(422);
    expect(reused.code).toBe('idempotency_key_reused');
    expect(await counts(key)).toEqual({ orders: 1, events: 1, keys: 1 });
  });

  it('a concurrent duplicate waits for the first to commit, then gets its answer; a different body gets 422', async () => {
    const key = freshKey();
    const first = order(key, 500, 0.3);
    const running = idempotentStatement(db.sql, request(key), first);
    await new Promise((resolve) => setTimeout(resolve, 50));
    const [duplicate, other] = await Promise.allSettled([
      idempotentStatement(db.sql, request(key), order(key)),
      idempotentStatement(db.sql, request(key, 700), order(key, 700)),
    ]);
    const response = await running;
    expect(response.status).toBe(201);
    expect(duplicate.status).toBe('fulfilled');
    if (duplicate.status === 'fulfilled') {
      expect(duplicate.value.headers.get('Idempotent-Replayed')).toBe('true');
      expect(await duplicate.value.json()).toEqual({ id: first.id, total: 500 });
    }
    expect(other.status).toBe('rejected');
    if (other.status === 'rejected')
      expect(await problemOf(Promise.reject(other.reason))).toMatchObject({ status: 422 });
    expect(await counts(key)).toEqual({ orders: 1, events: 1, keys: 1 });
  });

  it('many concurrent identical requests write exactly once', async () => {
    const key = freshKey();
    const answers = await Promise.all(
      Array.from({ length: 12 }, () => idempotentStatement(db.sql, request(key), order(key))),
    );
    expect(answers.map((r) => r.status)).toEqual(answers.map(() => 201));
    expect(answers.filter((r) => r.headers.get('Idempotent-Replayed') === null)).toHaveLength(1);
    const locations = new Set(answers.map((r) => r.headers.get('Location')));
    expect(locations.size).toBe(1);
    expect(await counts(key)).toEqual({ orders: 1, events: 1, keys: 1 });
  });

  it('a statement that fails leaves nothing half-written, the key included, and the retry runs', async () => {
    const key = freshKey();
    const broken = order(key, -1); // the check constraint refuses it, after the key's insert
    await expect(idempotentStatement(db.sql, request(key, -1), broken)).rejects.toThrow();
    expect(await counts(key)).toEqual({ orders: 0, events: 0, keys: 0 });
    const retried = await idempotentStatement(db.sql, request(key, -1), order(key, 5));
    expect(retried.status).toBe(201);
    expect(retried.headers.get('Idempotent-Replayed')).toBeNull();
    expect(await counts(key)).toEqual({ orders: 1, events: 1, keys: 1 });
  });

  // Needs two connections: PGlite's one is held by the first request's transaction.
  it.skipIf(!realPostgres)('answers 409 while the transaction flow holds the key', async () => {
    const key = freshKey();
    const release = deferred();
    const started = deferred();
    const slow = idempotent(db.sql, request(key), async () => {
      started.resolve();
      await release.promise;
      return { status: 201, body: { slow: true } };
    });
    await started.promise;
    const busy = await problemOf(idempotentStatement(db.sql, request(key), order(key)));
    expect(busy.status).toBe(409);
    expect(busy.code).toBe('idempotency_key_in_use');
    expect(await counts(key)).toMatchObject({ orders: 0, events: 0 });
    release.resolve();
    expect((await slow).status).toBe(201);
  });

  it('takes over an expired answer, writing through the transaction flow', async () => {
    const clock = manualClock();
    const later = freshKey();
    const options = { now: clock.now };
    await idempotentStatement(db.sql, request(later), order(later), options);
    clock.advance(25 * 60 * 60 * 1000); // past the 24 h retention
    const again = order(later);
    const taken = await idempotentStatement(db.sql, request(later), again, options);
    expect(taken.status).toBe(201);
    expect(taken.headers.get('Idempotent-Replayed')).toBeNull();
    expect(await taken.json()).toEqual({ id: again.id, total: 500 });
    expect(await counts(later)).toEqual({ orders: 2, events: 2, keys: 1 });
  });

  it('without a key the writes run alone, and no key is stored', async () => {
    const first = order(null);
    const response = await idempotentStatement(db.sql, request(null), first);
    expect(response.status).toBe(201);
    expect(await counts('none')).toMatchObject({ orders: 1, events: 1, keys: 0 });
  });
});
