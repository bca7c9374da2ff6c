import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestServer, type TestServer } from './api-harness';

// POST /v1/orders claims its Idempotency-Key, inserts the order, records order.created and stores
// the answer in one statement, with the answer built before the insert. What that must keep: the
// answer is the order GET reads back (metadata in jsonb's key order included) and the event
// carries it; a key used twice, even at once, creates one order.

let t: TestServer;
const api = (method: string, path: string, options?: Parameters<typeof call>[3]) =>
  call(t.url, method, path, options);

beforeAll(async () => {
  t = await startTestServer();
});
afterAll(async () => {
  await t?.stop();
});

async function created(id: string): Promise<{ orders: number; events: number; payload?: string }> {
  const [row] = await t.server.db.query<{ orders: number; events: number; payload?: string }>(
    `select (select count(*)::int from holdfast_orders where id = $1) as orders,
            (select count(*)::int from holdfast_events where resource_id = $1) as events,
            (select payload from holdfast_events where resource_id = $1 and type = 'order.created') as payload`,
    [id],
  );
  return row ?? { orders: -1, events: -1 };
}

describe('POST /v1/orders in one statement', () => {
  it('answers the order exactly as GET reads it back, and its order.created event carries the same', async () => {
    const metadata = fc.dictionary(
      fc.string({ unit: 'binary', minLength: 1, maxLength: 10 }),
      fc.string({ unit: 'binary', maxLength: 8 }),
      {
        maxKeys: 6,
      },
    );
    await fc.assert(
      fc.asyncProperty(
        metadata,
        fc.option(fc.string({ maxLength: 20 }), { nil: undefined }),
        async (meta, description) => {
          fc.pre(!Object.keys(meta).some((key) => key === '__proto__'));
          fc.pre(
            ![...Object.keys(meta), ...Object.values(meta), description ?? ''].some((text) =>
              text.includes('\u0000'),
            ),
          );
          const body = {
            currency: 'EUR',
            total: 1234,
            metadata: meta,
            ...(description === undefined ? {} : { description }),
          };
          const answer = await api('POST', '/v1/orders', {
            body,
            headers: { 'idempotency-key': crypto.randomUUID() },
          });
          expect(answer.status, JSON.stringify(answer.body)).toBe(201);
          const id = String(answer.body.id);
          const read = await api('GET', `/v1/orders/${id}`);
          expect(JSON.stringify(answer.body)).toBe(JSON.stringify(read.body));
          expect(answer.headers.get('etag')).toBe(read.headers.get('etag'));
          expect(answer.headers.get('location')).toBe(`/v1/orders/${id}`);
          const { orders, events, payload } = await created(id);
          expect({ orders, events }).toEqual({ orders: 1, events: 1 });
          const event = JSON.parse(payload ?? '{}');
          expect(event.sequence).toBe(1);
          expect(JSON.stringify(event.data.object)).toBe(JSON.stringify(read.body));
        },
      ),
      { numRuns: 15 },
    );
  });

  it('creates one order for a key sent many times at once, and replays it after', async () => {
    const headers = { 'idempotency-key': `dup-${crypto.randomUUID()}` };
    const body = { currency: 'EUR', total: 77 };
    const answers = await Promise.all(
      Array.from({ length: 8 }, () => api('POST', '/v1/orders', { body, headers })),
    );
    // The first claims the key; a duplicate arriving while it runs is 409 idempotency_key_in_use
    // with Retry-After (the claim holds the key's lock, nobody waits on it), one arriving after
    // it committed gets its answer replayed: never a second order.
    for (const answer of answers) {
      if (answer.status === 409) {
        expect(answer.body.code).toBe('idempotency_key_in_use');
        expect(answer.headers.get('retry-after')).toMatch(/^\d+$/);
      } else expect(answer.status, JSON.stringify(answer.body)).toBe(201);
    }
    const done = answers.filter((answer) => answer.status === 201);
    expect(new Set(done.map((answer) => answer.body.id)).size).toBe(1);
    const fresh = done.filter((answer) => answer.headers.get('idempotent-replayed') === null);
    expect(fresh).toHaveLength(1);
    const first = fresh[0];
    const id = String(first?.body.id);
    expect(await created(id)).toMatchObject({ orders: 1, events: 1 });
    const replay = await api('POST', '/v1/orders', { body, headers });
    expect(replay.status).toBe(201);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.body).toEqual(first?.body);
    const reused = await api('POST', '/v1/orders', { body: { ...body, total: 78 }, headers });
    expect(reused.status).toBe(422);
    expect(await created(id)).toMatchObject({ orders: 1, events: 1 });
  });
});
