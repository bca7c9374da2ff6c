import { migrate } from '@holdfast/db/migrate';
import { fromPostgres } from '@holdfast/db/postgres';
import { createTestDatabase, realPostgres, type TestDatabase } from '@holdfast/pg/testing';
import { problem } from '@holdfast/problem-details';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { IdempotentRequest } from '../src/index';
import { idempotent, migrations } from '../src/postgres';
import { testApp } from './fixtures/app';
import { deferred, freshKey, manualClock, problemOf } from './store-suite';

let db: TestDatabase;

beforeAll(async () => {
  db = await createTestDatabase();
  await migrate(fromPostgres(db.sql), migrations);
  await db.sql`create table payments (id serial primary key, key text not null, amount int not null)`;
});
afterAll(() => db?.close());

const request = (key: string | null, amount = 500): IdempotentRequest => ({
  key,
  account: 'acct_1',
  method: 'POST',
  path: '/v1/payments',
  body: { amount, currency: 'EUR' },
  required: true,
});

async function payments(key: string): Promise<number> {
  const [row] = await db.sql<{ n: number }[]>`select count(*)::int as n from payments where key = ${key}`;
  return row?.n ?? 0;
}

async function answered(key: string): Promise<boolean> {
  const [row] = await db.sql<{ n: number }[]>`
    select count(*)::int as n from holdfast_idempotency_keys where key = ${key} and response_status is not null`;
  return row?.n === 1;
}

describe(`idempotent(): business write and answer in one transaction (${realPostgres ? 'PostgreSQL' : 'PGlite'})`, () => {
  it('commits the write with the answer, then replays without running', async () => {
    const key = freshKey();
    const pay = (amount = 500) =>
      idempotent(db.sql, request(key, amount), async (tx) => {
        const [row] = await tx<
          { id: number }[]
        >`insert into payments (key, amount) values (${key}, ${amount}) returning id`;
        return {
          status: 201,
          headers: { Location: `/v1/payments/pay_${row?.id}` },
          body: { id: row?.id, amount },
        };
      });
    const first = await pay();
    expect(first.status).toBe(201);
    const body = await first.json();
    expect(await payments(key)).toBe(1);
    expect(await answered(key)).toBe(true);
    const again = await pay();
    expect(again.headers.get('Idempotent-Replayed')).toBe('true');
    expect(again.headers.get('Location')).toBe(first.headers.get('Location'));
    expect(await again.json()).toEqual(body);
    expect(await payments(key)).toBe(1);
    const changed = await problemOf(pay(501));
    expect(changed.code).toBe('idempotency_key_reused');
    expect(await payments(key)).toBe(1);
  });

  it('rolls a 5xx back with its writes and releases the key', async () => {
    const key = freshKey();
    const failed = await idempotent(db.sql, request(key), async (tx) => {
      await tx`insert into payments (key, amount) values (${key}, 500)`;
      return { status: 502, body: { upstream: 'down' } };
    });
    expect(failed.status).toBe(502);
    expect(await payments(key)).toBe(0);
    const retried = await idempotent(db.sql, request(key), async (tx) => {
      await tx`insert into payments (key, amount) values (${key}, 500)`;
      return { status: 201, body: {} };
    });
    expect(retried.headers.get('Idempotent-Replayed')).toBeNull();
    expect(await payments(key)).toBe(1);
  });

  it('rolls a crash back with its writes and releases the key', async () => {
    const key = freshKey();
    await expect(
      idempotent(db.sql, request(key), async (tx) => {
        await tx`insert into payments (key, amount) values (${key}, 500)`;
        throw new Error('card network exploded');
      }),
    ).rejects.toThrow('card network exploded');
    expect(await payments(key)).toBe(0);
    const [row] = await db.sql`select 1 from holdfast_idempotency_keys where key = ${key}`;
    expect(row).toBeUndefined();
  });

  it("releases the key when the handler's own SQL fails (even with the division by zero the lease check uses)", async () => {
    const key = freshKey();
    await expect(
      idempotent(db.sql, request(key), async (tx) => {
        await tx`insert into payments (key, amount) values (${key}, 500)`;
        await tx`select 1 / 0`;
        return { status: 201 };
      }),
    ).rejects.toMatchObject({ code: '22012' });
    expect(await payments(key)).toBe(0);
    const retried = await idempotent(db.sql, request(key), async () => ({ status: 201 }));
    expect(retried.headers.get('Idempotent-Replayed')).toBeNull();
  });

  it('rolls a thrown 4xx problem back and stores it as the answer', async () => {
    const key = freshKey();
    const refuse = () =>
      idempotent(db.sql, { ...request(key), requestId: 'req_a' }, async (tx) => {
        await tx`insert into payments (key, amount) values (${key}, 500)`;
        throw problem('unprocessable', { detail: 'Card declined.' });
      });
    expect((await problemOf(refuse())).code).toBe('unprocessable');
    expect(await payments(key)).toBe(0);
    const replay = await idempotent(db.sql, { ...request(key), requestId: 'req_b' }, async () => ({
      status: 201,
    }));
    expect(replay.status).toBe(422);
    expect(await replay.json()).toMatchObject({ code: 'unprocessable', requestId: 'req_b' });
  });

  it('commits a returned 4xx with its writes', async () => {
    const key = freshKey();
    const first = await idempotent(db.sql, request(key), async (tx) => {
      await tx`insert into payments (key, amount) values (${key}, 0)`;
      return { status: 402, body: { declined: true } };
    });
    expect(first.status).toBe(402);
    expect(await payments(key)).toBe(1);
    expect(await answered(key)).toBe(true);
  });

  it('answers 400 before running anything when the required key is missing', async () => {
    const error = await problemOf(
      idempotent(db.sql, request(null), async () => {
        throw new Error('must not run');
      }),
    );
    expect([error.status, error.code]).toEqual([400, 'idempotency_key_required']);
  });

  it('runs a keyless optional request in one transaction, rolling back a 5xx', async () => {
    const key = freshKey();
    const optional = { ...request(null), required: false };
    const ok = await idempotent(db.sql, optional, async (tx) => {
      await tx`insert into payments (key, amount) values (${key}, 1)`;
      return { status: 201 };
    });
    const failed = await idempotent(db.sql, optional, async (tx) => {
      await tx`insert into payments (key, amount) values (${key}, 2)`;
      return { status: 500 };
    });
    expect([ok.status, failed.status]).toEqual([201, 500]);
    expect(await payments(key)).toBe(1);
  });
});

describe('withIdempotency(): the atomic flow from a Hono route', () => {
  const pay = (app: ReturnType<typeof testApp>, key: string | undefined, amount = 500) =>
    app.request('/v1/payments', {
      method: 'POST',
      headers: {
        'Content-Type': 'application/json',
        ...(key === undefined ? {} : { 'Idempotency-Key': key }),
      },
      body: JSON.stringify({ currency: 'EUR', amount }),
    });

  it('requires the key, runs once, replays with a new Request-Id and without Set-Cookie', async () => {
    const app = testApp(db.sql);
    const missing = await pay(app, undefined);
    expect(missing.status).toBe(400);
    expect(await missing.json()).toMatchObject({
      code: 'idempotency_key_required',
      requestId: missing.headers.get('Request-Id'),
    });
    const key = freshKey();
    const first = await pay(app, key);
    expect(first.status).toBe(201);
    expect(first.headers.get('Set-Cookie')).toBe('x=1');
    const again = await pay(app, `"${key}"`);
    expect(again.status).toBe(201);
    expect(again.headers.get('Idempotent-Replayed')).toBe('true');
    expect(again.headers.get('Set-Cookie')).toBeNull();
    expect(again.headers.get('Location')).toBe(first.headers.get('Location'));
    expect(again.headers.get('Request-Id')).not.toBe(first.headers.get('Request-Id'));
    expect(await again.json()).toEqual(await first.json());
    expect((await pay(app, key, 1)).status).toBe(422);
    expect(await payments(key)).toBe(1);
  });
});

describe.skipIf(!realPostgres)(
  'idempotent() with concurrent attempts (needs DATABASE_URL: several connections)',
  () => {
    it('answers 409 then 422 while the first runs, then replays', async () => {
      const key = freshKey();
      const gate = deferred();
      const started = deferred();
      const first = idempotent(db.sql, request(key), async (tx) => {
        await tx`insert into payments (key, amount) values (${key}, 500)`;
        started.resolve();
        await gate.promise;
        return { status: 201, body: { ok: true } };
      });
      await started.promise;
      const busy = await problemOf(idempotent(db.sql, request(key), async () => ({ status: 201 })));
      expect([busy.status, busy.code]).toEqual([409, 'idempotency_key_in_use']);
      const changed = await problemOf(idempotent(db.sql, request(key, 7), async () => ({ status: 201 })));
      expect(changed.code).toBe('idempotency_key_reused');
      gate.resolve();
      expect((await first).status).toBe(201);
      expect(
        (await idempotent(db.sql, request(key), async () => ({ status: 201 }))).headers.get(
          'Idempotent-Replayed',
        ),
      ).toBe('true');
      expect(await payments(key)).toBe(1);
    });

    it('rolls back an attempt whose lease was taken over: exactly one execution commits', async () => {
      const key = freshKey();
      const clock = manualClock();
      // A long lease, so its renewal (every third of it, in real time) never fires during the test.
      const options = { leaseMs: 60_000, now: clock.now };
      const gate = deferred();
      const started = deferred();
      const slow = idempotent(
        db.sql,
        request(key),
        async (tx) => {
          await tx`insert into payments (key, amount) values (${key}, 1)`;
          started.resolve();
          await gate.promise;
          return { status: 201, body: { who: 'slow' } };
        },
        options,
      );
      await started.promise;
      clock.advance(60_000);
      const takeover = await idempotent(
        db.sql,
        request(key),
        async (tx) => {
          await tx`insert into payments (key, amount) values (${key}, 2)`;
          return { status: 201, body: { who: 'takeover' } };
        },
        options,
      );
      expect(await takeover.json()).toEqual({ who: 'takeover' });
      gate.resolve();
      const lost = await problemOf(slow);
      expect(lost.code).toBe('idempotency_key_in_use');
      expect(await payments(key)).toBe(1);
      const replay = await idempotent(db.sql, request(key), async () => ({ status: 500 }), options);
      expect(await replay.json()).toEqual({ who: 'takeover' });
    });
  },
);
