import { fromPostgres } from '@holdfast/db/postgres';
import { createTestDatabase, type TestDatabase } from '@holdfast/pg/testing';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  checkFilter,
  createEndpoint,
  type EventFilter,
  enqueueEvent,
  eventWrites,
  FILTER_LIMITS,
  getEndpoint,
  migrations,
  sendTestEvent,
  updateEndpoint,
} from '../src/index';

// Payload filters: evaluated by the fan-out statement (holdfast_filter_match) on the real
// database, checked against a reference evaluator written here from the README's rules.

let db: TestDatabase;
const options = { allowPrivateDestinations: true };
const URL_ = 'http://127.0.0.1:1024/hook';

beforeAll(async () => {
  db = await createTestDatabase();
  for (const migration of migrations()) await db.sql.unsafe(migration.sql);
});
afterAll(() => db.close());

// ---- The reference evaluator (the README's "Filters" section, written independently) ----

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
const isObject = (v: unknown): v is { [key: string]: Json } =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

function valueAt(doc: Json, path: string): Json | undefined {
  let cur: Json | undefined = doc;
  for (const segment of path.split('.')) {
    if (isObject(cur)) cur = Object.hasOwn(cur, segment) ? cur[segment] : undefined;
    else if (Array.isArray(cur) && /^(0|[1-9][0-9]{0,8})$/.test(segment)) cur = cur[Number(segment)];
    else return undefined;
    if (cur === undefined) return undefined;
  }
  return cur;
}

function jsonEqual(a: Json, b: Json): boolean {
  if (Array.isArray(a))
    return Array.isArray(b) && a.length === b.length && a.every((x, i) => jsonEqual(x, b[i] as Json));
  if (isObject(a)) {
    if (!isObject(b)) return false;
    const keys = Object.keys(a);
    return (
      keys.length === Object.keys(b).length &&
      keys.every((k) => Object.hasOwn(b, k) && jsonEqual(a[k] as Json, b[k] as Json))
    );
  }
  return a === b;
}

/** Strings compare by Unicode code point (not UTF-16 unit, as JavaScript's `<` does). */
function codePointCompare(a: string, b: string): number {
  const x = Array.from(a, (c) => c.codePointAt(0) ?? 0);
  const y = Array.from(b, (c) => c.codePointAt(0) ?? 0);
  for (let i = 0; i < Math.min(x.length, y.length); i += 1) {
    if (x[i] !== y[i]) return (x[i] ?? 0) - (y[i] ?? 0);
  }
  return x.length - y.length;
}

function order(op: string, v: Json | undefined, arg: Json): boolean {
  let c: number;
  if (typeof v === 'number' && typeof arg === 'number') c = v === arg ? 0 : v < arg ? -1 : 1;
  else if (typeof v === 'string' && typeof arg === 'string') c = codePointCompare(v, arg);
  else return false;
  return op === '$gt' ? c > 0 : op === '$gte' ? c >= 0 : op === '$lt' ? c < 0 : c <= 0;
}

function matches(filter: { [key: string]: Json }, doc: Json): boolean {
  return Object.entries(filter).every(([key, want]) => {
    if (key === '$and') return (want as { [key: string]: Json }[]).every((f) => matches(f, doc));
    if (key === '$or') return (want as { [key: string]: Json }[]).some((f) => matches(f, doc));
    if (key === '$not') return !matches(want as { [key: string]: Json }, doc);
    const v = valueAt(doc, key);
    if (isObject(want) && Object.keys(want).some((k) => k.startsWith('$'))) {
      return Object.entries(want).every(([op, arg]) => {
        const eq = v !== undefined && jsonEqual(v, arg);
        const inList = () => v !== undefined && (arg as Json[]).some((x) => jsonEqual(v, x));
        if (op === '$eq') return eq;
        if (op === '$ne') return !eq;
        if (op === '$in') return inList();
        if (op === '$nin') return !inList();
        if (op === '$exists') return (v !== undefined) === arg;
        return order(op, v, arg);
      });
    }
    return v !== undefined && jsonEqual(v, want);
  });
}

// ---- Generators, within the bounds and from small palettes so matches are frequent ----

const strings = fc.constantFrom('', 'a', 'b', 'ab', 'B', 'é', '\uffff', '😀', 'pending', 'shipped', '10');
// What a filter may hold: finite, at most 2^53 - 1 in magnitude (-0 included: it is stored as 0).
const numbers = fc.oneof(
  fc.constantFrom(
    0,
    -0,
    1,
    -1,
    10,
    10000,
    9999.5,
    2 ** 53 - 1,
    -(2 ** 53 - 1),
    0.1,
    0.30000000000000004,
    5e-324,
  ),
  fc.integer({ min: -20, max: 20 }),
  fc.double({ noNaN: true, min: -Number.MAX_SAFE_INTEGER, max: Number.MAX_SAFE_INTEGER }),
);
// What an event may hold: any finite number.
const eventNumbers = fc.oneof(
  numbers,
  fc.constantFrom(1e21, 2 ** 53, -(2 ** 60)),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
);
const scalar: fc.Arbitrary<Json> = fc.oneof(fc.constant(null), fc.boolean(), numbers, strings);
const value: fc.Arbitrary<Json> = fc.oneof(
  { weight: 4, arbitrary: scalar },
  { weight: 1, arbitrary: fc.array(scalar, { maxLength: 3 }) },
  { weight: 1, arbitrary: fc.dictionary(fc.constantFrom('k', 'j'), scalar, { maxKeys: 2 }) },
);
const paths = fc.constantFrom(
  'type',
  'test',
  'data',
  'data.object.total',
  'data.object.status',
  'data.object.tags',
  'data.object.tags.0',
  'data.object.tags.1',
  'data.object.meta.k',
  'data.object.meta',
  'data.object.missing',
  'data.object.s.x',
);

const comparison: fc.Arbitrary<{ [key: string]: Json }> = fc.oneof(
  value.map((v) => ({ $eq: v })),
  value.map((v) => ({ $ne: v })),
  fc.array(value, { maxLength: 4 }).map((v) => ({ $in: v })),
  fc.array(value, { maxLength: 4 }).map((v) => ({ $nin: v })),
  fc.boolean().map((v) => ({ $exists: v })),
  fc
    .tuple(fc.constantFrom('$gt', '$gte', '$lt', '$lte'), fc.oneof(numbers, strings))
    .map(([op, v]) => ({ [op]: v })),
  // Two operators on one path: both must hold.
  fc.tuple(numbers, numbers).map(([lo, hi]) => ({ $gte: lo, $lt: hi })),
);
// A literal to compare with: never an object with a `$` key (that is an operator object).
const leaf = fc.tuple(paths, fc.oneof(value, comparison)).map(([path, v]) => ({ [path]: v }));
const { filter: filterArb } = fc.letrec<{ filter: { [key: string]: Json } }>((tie) => ({
  filter: fc.oneof(
    { depthSize: 'small', maxDepth: 3 },
    {
      weight: 4,
      arbitrary: fc.array(leaf, { minLength: 1, maxLength: 3 }).map((parts) => Object.assign({}, ...parts)),
    },
    fc.array(tie('filter'), { minLength: 1, maxLength: 3 }).map((fs) => ({ $and: fs })),
    fc.array(tie('filter'), { minLength: 1, maxLength: 3 }).map((fs) => ({ $or: fs })),
    tie('filter').map((f) => ({ $not: f })),
  ),
}));
const eventObject = fc.record(
  {
    id: fc.constant('ord_f'),
    total: eventNumbers,
    status: fc.oneof(strings, scalar),
    tags: fc.array(scalar, { maxLength: 3 }),
    meta: fc.oneof(fc.dictionary(fc.constantFrom('k', 'j'), value, { maxKeys: 2 }), scalar),
    s: value,
  },
  { requiredKeys: ['id'] },
);

async function deliveredEndpoints(eventId: string): Promise<Set<string>> {
  const rows = await db.sql<{ endpoint_id: string }[]>`
    select endpoint_id from holdfast_deliveries where event_id = ${eventId}`;
  return new Set(rows.map((r) => r.endpoint_id));
}

let run = 0;
// Both outcomes must occur, or the property would hold of a fan-out that ignores filters.
const outcomes = { matched: 0, unmatched: 0 };

describe('payload filters at fan-out', () => {
  it('creates a delivery exactly when the reference evaluator says the filter matches', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(filterArb, { minLength: 1, maxLength: 6 }),
        fc.constantFrom('order.created', 'order.updated'),
        eventObject,
        async (filters, type, object) => {
          // Deep nests can pass 50 conditions; those are validation's cases, below.
          fc.pre(
            filters.every((filter) => !checkFilter(filter).some((i) => i.code === 'too_many_conditions')),
          );
          for (const filter of filters) expect(checkFilter(filter)).toEqual([]);
          run += 1;
          const account = `acct_filter_${run}`;
          const endpoints: { id: string; filter: { [key: string]: Json } }[] = [];
          for (const filter of filters) {
            const { endpoint } = await createEndpoint(
              fromPostgres(db.sql),
              { account, url: URL_, filter },
              options,
            );
            // Answered back as stored, on every driver: its JSON text (-0 written as 0).
            expect(endpoint.filter).toEqual(JSON.parse(JSON.stringify(filter)));
            endpoints.push({ id: endpoint.id, filter });
          }
          const event = await db.sql.begin((tx) =>
            enqueueEvent(fromPostgres(tx), { account, type, resourceId: `ord_f${run}`, object }),
          );
          const [stored] = await db.sql<
            { payload: string }[]
          >`select payload from holdfast_events where id = ${event.id}`;
          const doc = JSON.parse(stored?.payload ?? 'null') as Json;
          const delivered = await deliveredEndpoints(event.id);
          for (const { id, filter } of endpoints) {
            const expected = matches(filter, doc);
            outcomes[expected ? 'matched' : 'unmatched'] += 1;
            expect(delivered.has(id)).toBe(expected);
          }
        },
      ),
      { numRuns: 120 },
    );
    expect(outcomes.matched).toBeGreaterThan(20);
    expect(outcomes.unmatched).toBeGreaterThan(20);
  });

  // The README's rules, one example each (the same table the README shows).
  const object = {
    id: 'ord_1',
    total: 12000,
    status: 'pending',
    currency: 'EUR',
    description: null,
    tags: ['gift', 'eu'],
    metadata: { channel: 'web' },
    label: '10',
  };
  const cases: [string, EventFilter, boolean][] = [
    ['equality', { type: 'order.created', 'data.object.currency': 'EUR' }, true],
    ['operators', { 'data.object.total': { $gte: 10000, $lt: 20000 } }, true],
    ['null equals only null', { 'data.object.description': null }, true],
    ['a missing path never equals null', { 'data.object.missing': null }, false],
    ['$ne matches a missing path', { 'data.object.missing': { $ne: 1 } }, true],
    ['$exists is true for null', { 'data.object.description': { $exists: true } }, true],
    ['$exists false for a missing path', { 'data.object.missing': { $exists: false } }, true],
    ['$in', { 'data.object.status': { $in: ['pending', 'shipped'] } }, true],
    ['$nin', { 'data.object.status': { $nin: ['pending'] } }, false],
    ['a number is not compared with a string', { 'data.object.label': { $gt: 9 } }, false],
    ['strings compare with strings', { 'data.object.label': { $gt: '09' } }, true],
    ['numbers by value, not by text', { 'data.object.total': 12000.0 }, true],
    ['no implicit array membership', { 'data.object.tags': 'gift' }, false],
    ['array index', { 'data.object.tags.0': 'gift' }, true],
    ['whole arrays equal in order', { 'data.object.tags': ['eu', 'gift'] }, false],
    ['objects equal whatever the key order', { 'data.object.metadata': { channel: 'web' } }, true],
    [
      '$or',
      { $or: [{ 'data.object.total': { $lt: 100 } }, { 'data.object.metadata.channel': 'web' }] },
      true,
    ],
    ['$not', { $not: { 'data.object.status': 'pending' } }, false],
    ['$and', { $and: [{ type: 'order.created' }, { 'data.object.total': { $gt: 12000 } }] }, false],
    ['an empty filter matches every event', {}, true],
  ];
  it.each(cases)('%s', async (_name, filter, expected) => {
    run += 1;
    const account = `acct_filter_case_${run}`;
    const { endpoint } = await createEndpoint(fromPostgres(db.sql), { account, url: URL_, filter }, options);
    const event = await db.sql.begin((tx) =>
      enqueueEvent(fromPostgres(tx), { account, type: 'order.created', resourceId: `ord_c${run}`, object }),
    );
    expect((await deliveredEndpoints(event.id)).has(endpoint.id)).toBe(expected);
    expect(
      matches(
        filter as { [key: string]: Json },
        JSON.parse(JSON.stringify({ type: 'order.created', data: { object } })),
      ),
    ).toBe(expected);
  });

  it('applies in eventWrites() too, and follows updates and removal', async () => {
    const account = 'acct_filter_writes';
    const { endpoint } = await createEndpoint(
      fromPostgres(db.sql),
      { account, url: URL_, filter: { 'data.object.total': { $gte: 100 } } },
      options,
    );
    const send = async (total: number) => {
      const event = eventWrites({
        account,
        type: 'order.created',
        resourceId: 'ord_w',
        object: { id: 'ord_w', total },
      });
      await fromPostgres(db.sql).query(`with ${event.ctes} select 1`, event.values);
      return (await deliveredEndpoints(event.id)).has(endpoint.id);
    };
    expect([await send(99), await send(100)]).toEqual([false, true]);
    const updated = await updateEndpoint(fromPostgres(db.sql), {
      account,
      id: endpoint.id,
      filter: { 'data.object.total': 5 },
    });
    expect(updated?.filter).toEqual({ 'data.object.total': 5 });
    expect([await send(100), await send(5)]).toEqual([false, true]);
    const cleared = await updateEndpoint(fromPostgres(db.sql), { account, id: endpoint.id, filter: null });
    expect(cleared?.filter).toBeNull();
    expect(await send(1)).toBe(true);
    const untouched = await updateEndpoint(fromPostgres(db.sql), {
      account,
      id: endpoint.id,
      description: 'x',
    });
    expect(untouched?.filter).toBeNull();
  });
});

describe('events jsonb cannot hold', () => {
  it('still commit, and match no filter (U+0000 and lone surrogates), through both outbox writes', async () => {
    const account = 'acct_filter_unsafe';
    const { endpoint: filtered } = await createEndpoint(
      fromPostgres(db.sql),
      { account, url: URL_, filter: { $not: { type: 'nothing' } } },
      options,
    );
    const { endpoint: open } = await createEndpoint(fromPostgres(db.sql), { account, url: URL_ }, options);
    const { endpoint: safeFiltered } = await createEndpoint(
      fromPostgres(db.sql),
      { account, url: URL_, filter: { 'data.object.note': { $exists: true } } },
      options,
    );
    for (const note of ['nul \u0000 here', 'lone \ud800', 'lone \udc00 low']) {
      const viaEnqueue = await db.sql.begin((tx) =>
        enqueueEvent(fromPostgres(tx), {
          account,
          type: 'order.created',
          resourceId: 'ord_u',
          object: { id: 'ord_u', note },
        }),
      );
      const viaWrites = eventWrites({
        account,
        type: 'order.created',
        resourceId: 'ord_u',
        object: { id: 'ord_u', note },
      });
      await fromPostgres(db.sql).query(`with ${viaWrites.ctes} select 1`, viaWrites.values);
      for (const id of [viaEnqueue.id, viaWrites.id]) {
        const delivered = await deliveredEndpoints(id);
        expect([delivered.has(filtered.id), delivered.has(open.id), delivered.has(safeFiltered.id)]).toEqual([
          false,
          true,
          false,
        ]);
      }
    }
    // An escaped backslash before "u0000" is ordinary text: filters apply.
    const plain = await db.sql.begin((tx) =>
      enqueueEvent(fromPostgres(tx), {
        account,
        type: 'order.created',
        resourceId: 'ord_u',
        object: { id: 'ord_u', note: 'C:\\u0000' },
      }),
    );
    const delivered = await deliveredEndpoints(plain.id);
    expect([delivered.has(filtered.id), delivered.has(safeFiltered.id)]).toEqual([true, true]);
  });
});

describe('filter validation', () => {
  const big = Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`data.k${i}`, i]));
  const cases: [string, unknown, string, string][] = [
    ['not an object', [1], '', 'invalid_filter'],
    ['unknown operator', { 'data.object.total': { $gtx: 1 } }, 'data.object.total/$gtx', 'unknown_operator'],
    ['unknown top-level operator', { $where: 'x' }, '$where', 'unknown_operator'],
    ['combinator after a path', { a: { $or: [] } }, 'a/$or', 'unknown_operator'],
    ['empty path segment', { 'data..total': 1 }, 'data..total', 'invalid_path'],
    ['trailing dot', { 'data.': 1 }, 'data.', 'invalid_path'],
    ['$ segment', { 'data.$x': 1 }, 'data.$x', 'invalid_path'],
    ['path too long', { ['a'.repeat(257)]: 1 }, 'a'.repeat(257), 'invalid_path'],
    ['$in not an array', { a: { $in: 1 } }, 'a/$in', 'invalid_filter'],
    ['$exists not a boolean', { a: { $exists: 1 } }, 'a/$exists', 'invalid_filter'],
    ['$gt of an object', { a: { $gt: {} } }, 'a/$gt', 'invalid_filter'],
    ['mixed operator object', { a: { $gt: 1, b: 2 } }, 'a/b', 'invalid_filter'],
    ['$and empty', { $and: [] }, '$and', 'invalid_filter'],
    ['$or of a non-object', { $or: [1] }, '$or/0', 'invalid_filter'],
    ['$not of an array', { $not: [] }, '$not', 'invalid_filter'],
    ['too many conditions', big, '', 'too_many_conditions'],
    ['too large', { a: 'x'.repeat(FILTER_LIMITS.bytes) }, '', 'too_large'],
    ['U+0000', { a: 'x\u0000' }, '', 'invalid_filter'],
    ['a lone surrogate', { 'a\ud800': 1 }, '', 'invalid_filter'],
    [
      'too deep',
      JSON.parse(`${'{"$not":'.repeat(9)}{"a":1}${'}'.repeat(9)}`),
      '$not/$not/$not/$not/$not/$not/$not/$not/$not',
      'invalid_filter',
    ],
  ];
  it.each(cases)('%s is refused, naming the place', (_name, filter, place, code) => {
    const issues = checkFilter(filter);
    expect(issues.map((i) => [i.path.join('/'), i.code])).toContainEqual([place, code]);
  });

  it('createEndpoint refuses an invalid filter with validation_failed naming it, and writes nothing', async () => {
    const account = 'acct_filter_invalid';
    await expect(
      createEndpoint(
        fromPostgres(db.sql),
        { account, url: URL_, filter: { 'a.b': { $regex: 'x' } } },
        options,
      ),
    ).rejects.toMatchObject({
      code: 'validation_failed',
      errors: [{ field: 'filter.a.b.$regex', pointer: '#/filter/a.b/%24regex', code: 'unknown_operator' }],
    });
    const [row] = await db.sql<{ n: number }[]>`
      select count(*)::int as n from holdfast_webhook_endpoints where account_id = ${account}`;
    expect(row?.n).toBe(0);
  });

  it('bounds what it reports: at most 21 issues for a filter with many faults', () => {
    const faults = Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`$bad${i}`, 1]));
    expect(checkFilter(faults).length).toBe(21);
  });
});

describe('filter numbers', () => {
  // Each number is stored as JSON text and compared as numeric: exact only when finite and, as an
  // integer, at most 2^53 - 1. JSON.stringify writes Infinity and NaN as null.
  const outside = fc.oneof(
    fc.constantFrom(
      Number.POSITIVE_INFINITY,
      Number.NEGATIVE_INFINITY,
      Number.NaN,
      2 ** 53,
      -(2 ** 53),
      1e21,
      Number.MAX_VALUE,
    ),
    fc.double({ min: 2 ** 53, noNaN: true }),
    fc.double({ max: -(2 ** 53), noNaN: true }),
  );
  // Every place a number can be: a literal, inside a literal array or object, each operand.
  const places: [string, (n: number) => EventFilter, string][] = [
    ['a literal', (n) => ({ 'data.object.total': n }), 'data.object.total'],
    ['in a literal array', (n) => ({ 'data.object.tags': ['a', n] }), 'data.object.tags/1'],
    ['in a literal object', (n) => ({ 'data.object.meta': { k: n } }), 'data.object.meta/k'],
    ['$eq', (n) => ({ 'data.object.total': { $eq: n } }), 'data.object.total/$eq'],
    ['$ne', (n) => ({ 'data.object.total': { $ne: [n] } }), 'data.object.total/$ne/0'],
    ['$in', (n) => ({ 'data.object.total': { $in: [1, n] } }), 'data.object.total/$in/1'],
    ['$nin', (n) => ({ 'data.object.total': { $nin: [n] } }), 'data.object.total/$nin/0'],
    ['$gt', (n) => ({ 'data.object.total': { $gt: n } }), 'data.object.total/$gt'],
    ['$lte', (n) => ({ 'data.object.total': { $gte: 0, $lte: n } }), 'data.object.total/$lte'],
    [
      'under $and',
      (n) => ({ $and: [{ type: 'x' }, { 'data.object.total': n }] }),
      '$and/1/data.object.total',
    ],
    ['under $or', (n) => ({ $or: [{ 'data.object.total': { $lt: n } }] }), '$or/0/data.object.total/$lt'],
    ['under $not', (n) => ({ $not: { 'data.object.total': n } }), '$not/data.object.total'],
  ];

  it('refuses a number that is not finite or beyond 2^53 - 1, wherever it is, naming the place', () => {
    fc.assert(
      fc.property(outside, fc.constantFrom(...places), (n, [, place, at]) => {
        const issues = checkFilter(place(n));
        expect(issues.map((i) => [i.path.join('/'), i.code])).toEqual([[at, 'invalid_filter']]);
      }),
      { numRuns: 300 },
    );
  });

  it('accepts every finite number up to 2^53 - 1 in magnitude, wherever it is', () => {
    fc.assert(
      fc.property(numbers, fc.constantFrom(...places), (n, [, place]) => {
        expect(checkFilter(place(n))).toEqual([]);
      }),
      { numRuns: 300 },
    );
  });

  it.each([
    ['1e400 (Infinity)', Number.POSITIVE_INFINITY, 'a finite number'],
    ['-1e400', Number.NEGATIVE_INFINITY, 'a finite number'],
    ['NaN', Number.NaN, 'a finite number'],
    ['2^53', 2 ** 53, 'at most 2^53 - 1'],
    ['-(2^53)', -(2 ** 53), 'at most 2^53 - 1'],
    ['1e21', 1e21, 'at most 2^53 - 1'],
  ])('%s is refused with validation_failed, stored nowhere and matched never', async (_name, n, says) => {
    const account = `acct_filter_num_${String(n)}`;
    // The finding: { "data.object.description": 1e400 } was stored as null and matched orders
    // without a description.
    await expect(
      createEndpoint(
        fromPostgres(db.sql),
        { account, url: URL_, filter: { 'data.object.description': n } },
        options,
      ),
    ).rejects.toMatchObject({
      code: 'validation_failed',
      errors: [
        {
          field: 'filter.data.object.description',
          pointer: '#/filter/data.object.description',
          code: 'invalid_filter',
          detail: expect.stringContaining(says),
        },
      ],
    });
    const { endpoint } = await createEndpoint(
      fromPostgres(db.sql),
      { account, url: URL_, filter: { type: 'order.created' } },
      options,
    );
    await expect(
      updateEndpoint(fromPostgres(db.sql), {
        account,
        id: endpoint.id,
        filter: { 'data.object.total': { $lte: n } },
      }),
    ).rejects.toMatchObject({
      code: 'validation_failed',
      errors: [{ field: 'filter.data.object.total.$lte' }],
    });
    expect((await getEndpoint(fromPostgres(db.sql), { account, id: endpoint.id }))?.filter).toEqual({
      type: 'order.created',
    });
    const [row] = await db.sql<{ n: number }[]>`
      select count(*)::int as n from holdfast_webhook_endpoints where account_id = ${account}`;
    expect(row?.n).toBe(1);
  });

  it('accepts 2^53 - 1 and -(2^53 - 1), answered back and compared exactly', async () => {
    const account = 'acct_filter_num_safe';
    const max = Number.MAX_SAFE_INTEGER;
    const { endpoint } = await createEndpoint(
      fromPostgres(db.sql),
      { account, url: URL_, filter: { 'data.object.total': { $gte: -max, $lte: max } } },
      options,
    );
    expect(endpoint.filter).toEqual({ 'data.object.total': { $gte: -max, $lte: max } });
    const matched = async (total: number) => {
      const event = await db.sql.begin((tx) =>
        enqueueEvent(fromPostgres(tx), {
          account,
          type: 'order.created',
          resourceId: 'ord_n',
          object: { id: 'ord_n', total },
        }),
      );
      return (await deliveredEndpoints(event.id)).has(endpoint.id);
    };
    expect([
      await matched(max),
      await matched(-max),
      await matched(2 ** 53),
      await matched(-(2 ** 53)),
    ]).toEqual([true, true, false, false]);
  });

  it('stores -0 as 0 and answers back 0 on every driver, wherever it is', async () => {
    const account = 'acct_filter_negative_zero';
    const filter = {
      type: { $gt: -0 },
      'data.object.total': { $gte: -0 },
      'data.object.tags': [-0],
      'data.object.meta': { k: -0 },
      'data.object.status': { $in: [-0, 'x'] },
    };
    const stored = {
      type: { $gt: 0 },
      'data.object.total': { $gte: 0 },
      'data.object.tags': [0],
      'data.object.meta': { k: 0 },
      'data.object.status': { $in: [0, 'x'] },
    };
    // toEqual tells -0 from 0 (Object.is), so each of these fails if a -0 comes back.
    const { endpoint } = await createEndpoint(fromPostgres(db.sql), { account, url: URL_, filter }, options);
    expect(endpoint.filter).toEqual(stored);
    expect((await getEndpoint(fromPostgres(db.sql), { account, id: endpoint.id }))?.filter).toEqual(stored);
    const updated = await updateEndpoint(fromPostgres(db.sql), {
      account,
      id: endpoint.id,
      filter: { type: { $gt: -0 } },
    });
    expect(updated?.filter).toEqual({ type: { $gt: 0 } });
    // -0 and 0 compare equal: { $gte: -0 } matches a total of 0 and of -0, { $gt: -0 } neither.
    const { endpoint: gte } = await createEndpoint(
      fromPostgres(db.sql),
      { account, url: URL_, filter: { 'data.object.total': { $gte: -0 } } },
      options,
    );
    const { endpoint: gt } = await createEndpoint(
      fromPostgres(db.sql),
      { account, url: URL_, filter: { 'data.object.total': { $gt: -0 } } },
      options,
    );
    for (const total of [0, -0]) {
      const event = await db.sql.begin((tx) =>
        enqueueEvent(fromPostgres(tx), {
          account,
          type: 'order.created',
          resourceId: 'ord_z',
          object: { id: 'ord_z', total },
        }),
      );
      const delivered = await deliveredEndpoints(event.id);
      expect([delivered.has(gte.id), delivered.has(gt.id)]).toEqual([true, false]);
    }
  });
});

describe('sendTestEvent()', () => {
  it('delivers one event marked test to that endpoint only, whatever its filter, and moves no sequence', async () => {
    const account = 'acct_filter_test_event';
    const { endpoint } = await createEndpoint(
      fromPostgres(db.sql),
      { account, url: URL_, filter: { type: 'never' } },
      options,
    );
    const { endpoint: other } = await createEndpoint(fromPostgres(db.sql), { account, url: URL_ }, options);
    const sent = await sendTestEvent(
      fromPostgres(db.sql),
      {
        account,
        endpointId: endpoint.id,
        type: 'order.created',
        object: { id: 'ord_example', total: 4200 },
      },
      { now: () => Date.parse('2026-11-26T10:00:00.000Z') },
    );
    expect(sent?.delivery).toMatchObject({
      endpoint: endpoint.id,
      status: 'pending',
      eventType: 'order.created',
    });
    const [stored] = await db.sql<{ payload: string; sequence: string }[]>`
      select payload, sequence::text from holdfast_events where id = ${sent?.event.id ?? ''}`;
    expect(JSON.parse(stored?.payload ?? '{}')).toEqual({
      id: sent?.event.id,
      type: 'order.created',
      createdAt: '2026-11-26T10:00:00.000Z',
      sequence: 0,
      test: true,
      data: { object: { id: 'ord_example', total: 4200 } },
    });
    expect([...(await deliveredEndpoints(sent?.event.id ?? ''))]).toEqual([endpoint.id]);
    expect((await deliveredEndpoints(sent?.event.id ?? '')).has(other.id)).toBe(false);
    const seq = await db.sql`select 1 from holdfast_resource_sequences where resource_id = 'ord_example'`;
    expect(seq.length).toBe(0);
  });

  it('is undefined for another account’s endpoint, and writes nothing', async () => {
    const { endpoint } = await createEndpoint(
      fromPostgres(db.sql),
      { account: 'acct_filter_owner', url: URL_ },
      options,
    );
    const sent = await sendTestEvent(fromPostgres(db.sql), {
      account: 'acct_filter_intruder',
      endpointId: endpoint.id,
      type: 'order.created',
      object: { id: 'ord_x' },
    });
    expect(sent).toBeUndefined();
    const rows = await db.sql`select 1 from holdfast_events where account_id = 'acct_filter_intruder'`;
    expect(rows.length).toBe(0);
  });
});
