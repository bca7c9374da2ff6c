import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type ApiResponse,
  api,
  KEYS,
  type Receiver,
  startReceiver,
  startTestServer,
  type TestServer,
} from './webhooks-harness';

// CONTRACT section 12, "Filter numbers", over real HTTP with the client's own JSON text: a
// filter number that is not finite (1e400 parses to Infinity) or an integer beyond 2^53 - 1 in
// magnitude is 400 validation_failed naming the place; before, 1e400 was stored as null and
// { "data.object.description": 1e400 } matched orders without a description.

let server: TestServer;
let receiver: Receiver;

beforeAll(async () => {
  receiver = await startReceiver();
  server = await startTestServer({ HOLDFAST_RETRY_SCHEDULE: '1h' });
});

afterAll(async () => {
  await server?.close();
  await receiver?.close();
});

const call = (method: string, path: string, options: Parameters<typeof api>[3] = {}) =>
  api(server.url, method, path, options);

function expectRefused(response: ApiResponse, pointer: string): void {
  expect(response.status, JSON.stringify(response.body)).toBe(400);
  expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  expect(response.body.code).toBe('validation_failed');
  expect(response.body.errors.map((e: { pointer: string }) => e.pointer)).toContain(pointer);
}

const total = async () => (await call('GET', '/v1/webhook-endpoints?include=total')).body.pageInfo.totalCount;

/** POST then PATCH with `filterText` as the filter's JSON text, exactly as a client wrote it. */
async function refusedEverywhere(filterText: string, pointer: string): Promise<void> {
  const before = await total();
  const created = await call('POST', '/v1/webhook-endpoints', {
    rawBody: `{"url":${JSON.stringify(receiver.url)},"filter":${filterText}}`,
  });
  expectRefused(created, pointer);
  expect(await total()).toBe(before);
  const target = await call('POST', '/v1/webhook-endpoints', {
    body: { url: receiver.url, filter: { type: 'order.created' } },
  });
  expect(target.status).toBe(201);
  const patched = await call('PATCH', `/v1/webhook-endpoints/${target.body.id}`, {
    rawBody: `{"filter":${filterText}}`,
  });
  expectRefused(patched, pointer);
  expect((await call('GET', `/v1/webhook-endpoints/${target.body.id}`)).body.filter).toEqual({
    type: 'order.created',
  });
  expect((await call('DELETE', `/v1/webhook-endpoints/${target.body.id}`)).status).toBe(204);
}

describe('filter numbers', () => {
  it.each([
    [
      '1e400 (Infinity), the finding',
      '{"data.object.description":1e400}',
      '#/filter/data.object.description',
    ],
    ['-1e400', '{"data.object.total":{"$gte":-1e400}}', '#/filter/data.object.total/%24gte'],
    ['$lte 1e400', '{"data.object.total":{"$lte":1e400}}', '#/filter/data.object.total/%24lte'],
    ['2^53', '{"data.object.total":9007199254740992}', '#/filter/data.object.total'],
    ['-(2^53 + 1)', '{"data.object.total":{"$eq":-9007199254740993}}', '#/filter/data.object.total/%24eq'],
    ['1e21 in $in', '{"data.object.total":{"$in":[1,1e21]}}', '#/filter/data.object.total/%24in/1'],
    ['1e400 under $or', '{"$or":[{"data.object.total":1e400}]}', '#/filter/%24or/0/data.object.total'],
    ['1e400 in a literal object', '{"data.object.meta":{"k":1e400}}', '#/filter/data.object.meta/k'],
  ])(
    'refuses %s with 400 validation_failed naming the place; nothing stored',
    async (_name, text, pointer) => {
      await refusedEverywhere(text, pointer);
    },
  );

  it('refuses $lte: 1e-400 (a non-zero literal that reads as 0, which was stored as 0); 0e-400 is 0', async () => {
    const before = await total();
    for (const text of [
      '{"data.object.total":{"$lte":1e-400}}',
      `{"data.object.total":0.${'0'.repeat(400)}1}`,
    ]) {
      const created = await call('POST', '/v1/webhook-endpoints', {
        rawBody: `{"url":${JSON.stringify(receiver.url)},"filter":${text}}`,
      });
      expect(created.status, JSON.stringify(created.body)).toBe(400);
      expect(created.body.code).toBe('validation_failed');
      expect(created.body.detail).toContain('reads as 0');
    }
    expect(await total()).toBe(before);
    const zero = await call('POST', '/v1/webhook-endpoints', {
      rawBody: `{"url":${JSON.stringify(receiver.url)},"filter":{"data.object.total":{"$lte":0e-400}}}`,
    });
    expect(zero.status, JSON.stringify(zero.body)).toBe(201);
    expect(zero.body.filter).toEqual({ 'data.object.total': { $lte: 0 } });
    await call('DELETE', `/v1/webhook-endpoints/${zero.body.id}`);
  });

  it('refuses any integer literal beyond 2^53 - 1 in magnitude, as the client wrote it', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.bigInt({ min: 2n ** 53n, max: 10n ** 30n }),
        fc.boolean(),
        async (magnitude, negative) => {
          const literal = `${negative ? '-' : ''}${magnitude}`;
          await refusedEverywhere(
            `{"data.object.total":{"$gt":${literal}}}`,
            '#/filter/data.object.total/%24gt',
          );
        },
      ),
      { numRuns: 10 },
    );
  });

  it('accepts 2^53 - 1, and answers -0 back as 0', async () => {
    const created = await call('POST', '/v1/webhook-endpoints', {
      rawBody: `{"url":${JSON.stringify(receiver.url)},"filter":{"data.object.total":{"$gte":-0,"$lte":9007199254740991}}}`,
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body.filter).toEqual({ 'data.object.total': { $gte: 0, $lte: 9007199254740991 } });
    try {
      // The text itself, where -0 and 0 differ: written as 0 on every driver. (Not "no -0
      // anywhere": a random endpoint id may hold those two characters.)
      const fetched = await fetch(new URL(`/v1/webhook-endpoints/${created.body.id}`, server.url), {
        headers: { authorization: `Bearer ${KEYS.all}` },
      });
      expect(fetched.status).toBe(200);
      const text = await fetched.text();
      expect(text).toContain('"$gte":0,');
      expect(text).not.toContain('"$gte":-0');
    } finally {
      // Deleted whatever failed above, so the next test's order does not match this filter.
      expect((await call('DELETE', `/v1/webhook-endpoints/${created.body.id}`)).status).toBe(204);
    }
  });

  it('never matches: an order without a description creates no delivery for a refused filter', async () => {
    // The refused filter left no endpoint behind, so the only endpoint is this control, whose
    // filter asks for a description of null: it matches, and it alone gets the delivery.
    const control = await call('POST', '/v1/webhook-endpoints', {
      body: { url: receiver.url, eventTypes: ['order.created'], filter: { 'data.object.description': null } },
    });
    expect(control.status).toBe(201);
    const refused = await call('POST', '/v1/webhook-endpoints', {
      rawBody: `{"url":${JSON.stringify(receiver.url)},"eventTypes":["order.created"],"filter":{"data.object.description":1e400}}`,
    });
    expectRefused(refused, '#/filter/data.object.description');
    const order = await call('POST', '/v1/orders', { body: { currency: 'EUR', total: 100 } });
    expect(order.status, JSON.stringify(order.body)).toBe(201);
    const events = await call('GET', '/v1/events?limit=100');
    const event = events.body.data.find(
      (e: { type: string; data: { object: { id: string } } }) =>
        e.type === 'order.created' && e.data.object.id === order.body.id,
    );
    expect(event).toBeDefined();
    const deliveries = await call('GET', `/v1/deliveries?limit=100`);
    const of = deliveries.body.data.filter((d: { event: string }) => d.event === event.id);
    expect(of.map((d: { endpoint: string }) => d.endpoint)).toEqual([control.body.id]);
    await call('DELETE', `/v1/webhook-endpoints/${control.body.id}`);
  });
});
