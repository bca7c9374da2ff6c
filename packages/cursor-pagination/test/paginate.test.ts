import type { Db } from '@holdfast/db';
import { fromPg } from '@holdfast/db/pg';
import { fromPostgres, postgresTransaction } from '@holdfast/db/postgres';
import { childDatabaseUrl, createTestDatabase, realPostgres, type TestDatabase } from '@holdfast/pg/testing';
import { isProblemError } from '@holdfast/problem-details';
import { onProblem } from '@holdfast/problem-details/hono';
import { requestId } from '@holdfast/request-guards/hono';
import { orderBy, parseSort } from '@holdfast/sort-allowlist';
import fc from 'fast-check';
import { Hono } from 'hono';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, expectTypeOf, it } from 'vitest';
import { type Page, type PaginateOptions, paginate } from '../src/index';
import {
  createItems,
  type Item,
  insertItems,
  itemSort,
  itemsArbitrary,
  keyring,
  sampleItems,
  sortArbitrary,
} from './fixtures';

let db: TestDatabase;
// The pages go through the Db boundary: postgres.js here, node-postgres beside it below.
let sql: Db;
beforeAll(async () => {
  db = await createTestDatabase();
  sql = fromPostgres(db.sql);
  await createItems(db.sql);
});
afterAll(async () => {
  await db.close();
});

interface Request {
  sort?: string | undefined;
  limit?: string | undefined;
  cursor?: string | undefined;
  include?: string | undefined;
  account?: string;
  status?: string | null | undefined;
}

function list(request: Request): Promise<Page<{ id: string }>> {
  const account = request.account ?? 'acct_a';
  return paginate(sql, {
    from: 'items',
    where: { text: 'account = $1', values: [account] },
    allowlist: itemSort,
    sort: request.sort,
    cursor: request.cursor,
    limit: request.limit,
    include: request.include,
    filterColumns: { status: 'status' },
    filter: { status: request.status },
    binding: { account, resource: 'items' },
    keyring,
    map: (row) => ({ id: String(row.id) }),
  });
}

async function expectedIds(
  sort: string | undefined,
  account = 'acct_a',
  status?: string | null,
): Promise<string[]> {
  const parsed = parseSort(itemSort, sort);
  if (!parsed.ok) throw parsed.error;
  const filter = status === undefined ? 'true' : status === null ? 'status is null' : 'status = $2';
  const rows = await db.sql.unsafe<{ id: string }[]>(
    `select id from items where account = $1 and ${filter} order by ${orderBy(parsed.value)}`,
    status === undefined || status === null ? [account] : [account, status],
  );
  return rows.map((row) => row.id);
}

async function replace(items: readonly Item[]): Promise<void> {
  await db.sql`delete from items`;
  await insertItems(db.sql, items);
}

/** Follows nextCursor to the end; `between` runs after each page (for concurrent changes). */
async function walk(request: Request, between?: (page: number) => Promise<void>): Promise<string[]> {
  const seen: string[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < 500; page++) {
    const result = await list({ ...request, cursor });
    seen.push(...result.data.map((row) => row.id));
    if (!result.pageInfo.hasMore) {
      expect(result.pageInfo.nextCursor).toBeNull();
      return seen;
    }
    // Pagination rule 5: a page that says hasMore is full.
    expect(result.data).toHaveLength(Number(request.limit));
    expect(typeof result.pageInfo.nextCursor).toBe('string');
    cursor = result.pageInfo.nextCursor ?? undefined;
    await between?.(page);
  }
  throw new Error('walk did not end');
}

const limitArbitrary = fc.integer({ min: 1, max: 12 }).map(String);

describe('paginate: walking every page (SPEC section 4, pagination rules 4 and 5)', () => {
  it('property: the pages are exactly the rows of one full ORDER BY, in order', async () => {
    await fc.assert(
      fc.asyncProperty(
        itemsArbitrary('it_', 40),
        sortArbitrary,
        limitArbitrary,
        fc.constantFrom(undefined, 'pending', null),
        async (items, sort, limit, status) => {
          await replace(items);
          const walked = await walk({ sort, limit, status });
          expect(walked).toEqual(await expectedIds(sort, 'acct_a', status));
        },
      ),
      { numRuns: 150 },
    );
  });

  it('property: rows present throughout a walk appear exactly once, in order, while others come and go', async () => {
    await fc.assert(
      fc.asyncProperty(
        itemsArbitrary('it_', 30),
        sortArbitrary,
        fc.integer({ min: 1, max: 6 }).map(String),
        fc.array(fc.tuple(itemsArbitrary('new_', 3), fc.array(fc.nat(), { maxLength: 2 })), {
          minLength: 1,
          maxLength: 5,
        }),
        async (items, sort, limit, changes) => {
          await replace(items);
          const before = await expectedIds(sort);
          const deleted = new Set<string>();
          let generation = 0;
          const walked = await walk({ sort, limit }, async (page) => {
            const change = changes[page % changes.length];
            if (!change) return;
            const [inserts, deletes] = change;
            generation++;
            await insertItems(
              db.sql,
              inserts.map((item) => ({ ...item, id: `${item.id}_${generation}` })),
            );
            const present = await db.sql<{ id: string }[]>`select id from items order by id`;
            for (const index of deletes) {
              const victim = present[index % Math.max(present.length, 1)]?.id;
              if (victim === undefined) continue;
              deleted.add(victim);
              await db.sql`delete from items where id = ${victim}`;
            }
          });
          expect(new Set(walked).size).toBe(walked.length);
          const stable = before.filter((id) => !deleted.has(id));
          const stableSet = new Set(stable);
          expect(walked.filter((id) => stableSet.has(id))).toEqual(stable);
        },
      ),
      { numRuns: 80 },
    );
  });

  it('property: a select list that renames a sort column to another value does not change the order', async () => {
    await fc.assert(
      fc.asyncProperty(
        itemsArbitrary('it_', 25),
        sortArbitrary,
        limitArbitrary,
        async (items, sort, limit) => {
          await replace(items);
          const walked: string[] = [];
          let cursor: string | null = null;
          do {
            const page: Page<{ id: string }> = await paginate(sql, {
              from: 'items',
              where: { text: 'account = $1', values: ['acct_a'] },
              // Output columns named like sort columns but holding other values: ORDER BY must
              // still sort on the table's columns, as the keyset predicate does.
              select:
                "id, total::text as total, -extract(epoch from created_at) as created_at, upper(name) as name, 'x' as status",
              allowlist: itemSort,
              sort,
              limit,
              cursor,
              binding: { account: 'acct_a' },
              keyring,
              map: (row) => ({ id: String(row.id) }),
            });
            walked.push(...page.data.map((row) => row.id));
            cursor = page.pageInfo.nextCursor;
          } while (cursor !== null);
          expect(walked).toEqual(await expectedIds(sort));
        },
      ),
      { numRuns: 40 },
    );
  });

  it('keeps a caller condition with OR apart from the filters and the keyset predicate', async () => {
    const items = sampleItems('or_', 60, 7);
    expect(
      items.filter((item) => item.account === 'acct_a' && item.status === 'pending').length,
    ).toBeGreaterThan(5);
    await replace(items);
    const walked: string[] = [];
    let cursor: string | null = null;
    for (let guard = 0; guard < 100; guard++) {
      const page: Page<{ id: string }> = await paginate(sql, {
        from: 'items',
        where: { text: 'account = $1 or account = $2', values: ['acct_a', 'acct_a'] },
        allowlist: itemSort,
        limit: 2,
        cursor,
        filterColumns: { status: 'status' },
        filter: { status: 'pending' },
        binding: { account: 'acct_a' },
        keyring,
        map: (row) => ({ id: String(row.id) }),
      });
      walked.push(...page.data.map((row) => row.id));
      cursor = page.pageInfo.nextCursor;
      if (cursor === null) break;
    }
    expect(walked).toEqual(await expectedIds(undefined, 'acct_a', 'pending'));
  });

  it('keeps microsecond timestamps exact across pages (the cursor carries the compared value)', async () => {
    const base = { account: 'acct_a', created_at: '2026-01-01T00:00:00.000Z', total: null, score: null };
    const rest = { status: null, name: null, label: 'x' };
    await replace(
      ['2026-01-01T00:00:00.000001Z', '2026-01-01T00:00:00.000002Z', '2026-01-01T00:00:00.000003Z'].map(
        (updated, i) => ({
          id: `m${i}`,
          ...base,
          updated_at: updated,
          ...rest,
        }),
      ),
    );
    expect(await walk({ sort: 'updatedAt', limit: '1' })).toEqual(['m0', 'm1', 'm2']);
    expect(await walk({ sort: '-updatedAt', limit: '1' })).toEqual(['m2', 'm1', 'm0']);
  });
});

describe.runIf(realPostgres)('paginate: one statement for every driver', () => {
  let pool: pg.Pool;
  beforeAll(() => {
    pool = new pg.Pool({ connectionString: childDatabaseUrl(db), max: 2 });
  });
  afterAll(() => pool.end());

  it('property: paginate over postgres.js and over node-postgres give the same pages, cursors and totals', async () => {
    await fc.assert(
      fc.asyncProperty(
        itemsArbitrary('db_', 30),
        sortArbitrary,
        limitArbitrary,
        fc.constantFrom(undefined, 'pending', null),
        async (items, sort, limit, status) => {
          await replace(items);
          let cursor: string | null = null;
          for (let page = 0; page < 100; page += 1) {
            const options: PaginateOptions = {
              from: 'items',
              where: { text: 'account = $1', values: ['acct_a'] },
              select: 'id, total::text as total',
              allowlist: itemSort,
              sort,
              cursor,
              limit,
              include: 'total',
              filterColumns: { status: 'status' },
              filter: { status },
              binding: { account: 'acct_a', resource: 'items' },
              keyring,
            };
            const viaPostgres: Page<Record<string, unknown>> = await paginate(sql, options);
            const viaPg = await paginate(fromPg(pool), options);
            expect(viaPg).toEqual(viaPostgres);
            if (!viaPostgres.pageInfo.hasMore) return;
            cursor = viaPostgres.pageInfo.nextCursor;
          }
          throw new Error('walk did not end');
        },
      ),
      { numRuns: 60 },
    );
  });
});

describe('paginate: cursors (pagination rule 7, CONTRACT section 4)', () => {
  let cursor: string;
  const sort = '-status,total';
  beforeAll(async () => {
    const items = sampleItems('t_', 60, 42);
    await replace([
      ...items,
      ...Array.from({ length: 10 }, (_, i) => ({
        id: `p${i}`,
        account: 'acct_a',
        created_at: '2026-01-01T00:00:00.000Z',
        updated_at: null,
        total: String(i),
        score: null,
        status: 'pending',
        name: null,
        label: 'x',
      })),
    ]);
    const first = await list({ sort, limit: '3', status: 'pending' });
    expect(first.pageInfo.hasMore).toBe(true);
    cursor = first.pageInfo.nextCursor ?? '';
  });

  async function expectInvalidCursor(request: Request): Promise<void> {
    let page: unknown;
    try {
      page = await list(request);
    } catch (error) {
      expect(isProblemError(error)).toBe(true);
      if (!isProblemError(error)) throw error;
      expect([error.status, error.code]).toEqual([400, 'invalid_cursor']);
      expect(error.errors[0]?.field).toBe('cursor');
      return;
    }
    expect.fail(`expected invalid_cursor, got rows: ${JSON.stringify(page)}`);
  }

  it('accepts the untouched cursor', async () => {
    const second = await list({ sort, limit: '3', status: 'pending', cursor });
    expect(second.data.length).toBe(3);
  });

  it('accepts a cursor signed with the previous key after rotation', async () => {
    const oldRing = { current: 'k1', keys: { k1: keyring.keys.k1 ?? '' } };
    const first = await paginate(sql, {
      from: 'items',
      allowlist: itemSort,
      limit: 2,
      binding: { account: 'acct_a' },
      keyring: oldRing,
    });
    const next = await paginate(sql, {
      from: 'items',
      allowlist: itemSort,
      limit: 2,
      cursor: first.pageInfo.nextCursor,
      binding: { account: 'acct_a' },
      keyring,
    });
    expect(next.data).toHaveLength(2);
    expect(next.data[0]?.id).not.toBe(first.data[0]?.id);
  });

  it('property: any altered cursor is 400 invalid_cursor, never rows, never a 500', async () => {
    const json = () => JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    const reencode = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
    const jsonValue = fc.oneof(
      fc.string(),
      fc.integer(),
      fc.constant(null),
      fc.boolean(),
      fc.array(fc.string(), { maxLength: 3 }),
    );
    const alteration = fc.oneof(
      // a character replaced by any other
      fc.tuple(fc.nat(), fc.string({ minLength: 1, maxLength: 1, unit: 'binary' })).map(
        ([at, char]) =>
          (c: string) =>
            c.slice(0, at % c.length) + char + c.slice((at % c.length) + 1),
      ),
      // a bit flipped in one decoded byte
      fc.tuple(fc.nat(), fc.integer({ min: 0, max: 7 })).map(([at, bit]) => (c: string) => {
        const bytes = Buffer.from(c, 'base64url');
        const index = at % bytes.length;
        bytes[index] = (bytes[index] ?? 0) ^ (1 << bit);
        return bytes.toString('base64url');
      }),
      // truncation and extension
      fc.nat().map((n) => (c: string) => c.slice(0, n % c.length)),
      fc.string({ minLength: 1, maxLength: 8 }).map((tail) => (c: string) => c + tail),
      // a field changed and re-encoded (the signature kept)
      fc.tuple(fc.constantFrom('v', 'kid', 'b', 'k', 's', 'extra'), jsonValue).map(
        ([field, value]) =>
          () =>
            reencode({ ...json(), [field]: value }),
      ),
      fc.tuple(fc.nat(), fc.oneof(fc.string(), fc.constant(null))).map(([at, value]) => () => {
        const parsed = json();
        parsed.k[at % parsed.k.length] = value;
        return reencode(parsed);
      }),
      // the same content spelt differently
      fc.constant(() => reencode(json()).replace(/$/, '')),
      fc.constant((c: string) => Buffer.from(c, 'base64url').toString('base64')),
      fc.constant(() => Buffer.from(JSON.stringify(json(), null, 1)).toString('base64url')),
      fc.constant(() => reencode({ ...json(), kid: 'k1' })),
    );
    await fc.assert(
      fc.asyncProperty(alteration, async (alter) => {
        const altered = alter(cursor);
        fc.pre(altered !== cursor);
        await expectInvalidCursor({ sort, limit: '3', status: 'pending', cursor: altered });
      }),
      { numRuns: 150 },
    );
  });

  it('property: a cursor reused under another sort, filter or account is 400 invalid_cursor', async () => {
    const other = fc.oneof(
      sortArbitrary.filter((s) => s !== sort).map((s) => ({ sort: s })),
      fc.constantFrom(undefined, null, 'shipped', 'cancelled').map((status) => ({ status })),
      fc.constant({ account: 'acct_b' }),
      fc.constant({ sort: undefined }),
    );
    await fc.assert(
      fc.asyncProperty(other, fc.constantFrom('1', '3', '50'), async (change, limit) => {
        await expectInvalidCursor({ sort, status: 'pending', limit, cursor, ...change });
      }),
      { numRuns: 60 },
    );
  });

  it.each(['', ' ', 'null', 'x'.repeat(5000), '%00', 'eyJ9'])('refuses cursor %j', async (raw) => {
    await expectInvalidCursor({ sort, limit: '3', status: 'pending', cursor: raw });
  });
});

describe('paginate: parameters', () => {
  beforeAll(async () => {
    await db.sql`delete from items`;
    await db.sql`insert into items (id, account, created_at, total, status, label)
      select 'big_' || lpad(n::text, 6, '0'), 'acct_big', timestamptz '2026-01-01' + n * interval '1 ms',
             n, case when n % 3 = 0 then 'shipped' else 'pending' end, 'x'
      from generate_series(1, 10001) as n`;
  });

  it.each([
    [undefined, 20],
    ['abc', 20],
    ['0', 20],
    ['-4', 1],
    ['7', 7],
    ['100', 100],
    ['500', 100],
  ])('limit %j returns %i rows', async (limit, rows) => {
    const page = await list({ account: 'acct_big', limit });
    expect(page.data).toHaveLength(rows);
    expect(page.pageInfo.hasMore).toBe(true);
  });

  it('counts exactly up to 10,000 and caps above with totalCountCapped', async () => {
    const all = await list({ account: 'acct_big', include: 'total', limit: '1' });
    expect(all.pageInfo).toMatchObject({ totalCount: 10_000, totalCountCapped: true });
    const shipped = await list({ account: 'acct_big', include: 'total', status: 'shipped', limit: '1' });
    expect(shipped.pageInfo).toMatchObject({ totalCount: 3333, totalCountCapped: false });
    const none = await list({ account: 'acct_none', include: 'total' });
    expect(none).toEqual({
      data: [],
      pageInfo: { nextCursor: null, hasMore: false, totalCount: 0, totalCountCapped: false },
    });
    const without = await list({ account: 'acct_big', limit: '1' });
    expect(without.pageInfo).not.toHaveProperty('totalCount');
  });

  it('orders by the default -createdAt with id descending, and returns mapped rows without helper columns', async () => {
    const page = await paginate(sql, {
      from: 'items',
      where: { text: 'account = $1', values: ['acct_big'] },
      select: 'id, total',
      allowlist: itemSort,
      limit: '2',
      binding: { account: 'acct_big' },
      keyring,
    });
    expect(page.data).toEqual([
      { id: 'big_010001', total: '10001' },
      { id: 'big_010000', total: '10000' },
    ]);
  });

  it.each([
    ['bogus', 'invalid_sort'],
    ['total,total', 'invalid_sort'],
    ['--total', 'invalid_sort'],
    ['a,b,c,d', 'too_many_sort_keys'],
  ])('sort %j is 400 %s', async (sort, code) => {
    await expect(list({ sort })).rejects.toMatchObject({ status: 400, code });
  });

  it('include=bogus is 400 validation_failed', async () => {
    await expect(list({ include: 'bogus' })).rejects.toMatchObject({
      status: 400,
      code: 'validation_failed',
    });
  });

  it('refuses a filter that is not declared (a programming error)', async () => {
    await expect(
      paginate(sql, {
        from: 'items',
        allowlist: itemSort,
        filter: { label: 'x' },
        binding: { account: 'a' },
        keyring,
      }),
    ).rejects.toThrow(TypeError);
  });
});

describe('paginate: in a Hono app over HTTP semantics', () => {
  const app = new Hono();
  app.use(requestId());
  app.onError(onProblem());
  app.get('/v1/items', async (c) => {
    const q = c.req.query();
    const account = c.req.header('x-account') ?? 'acct_big';
    return c.json(
      await paginate(sql, {
        from: 'items',
        where: { text: 'account = $1', values: [account] },
        allowlist: itemSort,
        sort: q.sort,
        cursor: q.cursor,
        limit: q.limit,
        include: q.include,
        filterColumns: { status: 'status' },
        filter: { status: q.status },
        binding: { account, resource: 'items' },
        keyring,
        map: (row) => ({ id: String(row.id), total: Number(row.total) }),
      }),
    );
  });

  it('answers pages as JSON and every bad parameter as a 400 problem, never a 500', async () => {
    const first = await app.request('/v1/items?sort=-total&limit=2&include=total');
    expect(first.status).toBe(200);
    const body = (await first.json()) as { data: unknown[]; pageInfo: { nextCursor: string } };
    expect(body).toMatchObject({
      data: [
        { id: 'big_010001', total: 10001 },
        { id: 'big_010000', total: 10000 },
      ],
      pageInfo: { hasMore: true, totalCount: 10000, totalCountCapped: true },
    });
    const cursor = encodeURIComponent(body.pageInfo.nextCursor);
    const next = await app.request(`/v1/items?sort=-total&limit=2&cursor=${cursor}`);
    expect(((await next.json()) as { data: { id: string }[] }).data.map((row) => row.id)).toEqual([
      'big_009999',
      'big_009998',
    ]);
    for (const [path, code] of [
      ['/v1/items?sort=colour', 'invalid_sort'],
      ['/v1/items?sort=a,b,c,d', 'too_many_sort_keys'],
      [`/v1/items?sort=total&cursor=${cursor}`, 'invalid_cursor'],
      [`/v1/items?sort=-total&status=shipped&cursor=${cursor}`, 'invalid_cursor'],
      ['/v1/items?cursor=%FF%FE', 'invalid_cursor'],
      ['/v1/items?include=everything', 'validation_failed'],
    ] as const) {
      const response = await app.request(path);
      expect(response.status, path).toBe(400);
      expect(response.headers.get('content-type')).toContain('application/problem+json');
      expect(await response.json()).toMatchObject({ status: 400, code });
    }
    const otherAccount = await app.request(`/v1/items?sort=-total&limit=2&cursor=${cursor}`, {
      headers: { 'x-account': 'acct_a' },
    });
    expect(otherAccount.status).toBe(400);
  });

  it('runs inside a transaction and types rows by the mapper', async () => {
    const page = await postgresTransaction(db.sql)((_tx, tx) =>
      paginate(tx, {
        from: 'items',
        allowlist: itemSort,
        limit: '1',
        include: 'total',
        binding: { account: 'acct_big' },
        keyring,
        map: (row) => ({ id: String(row.id) }),
      }),
    );
    expectTypeOf(page.data).toEqualTypeOf<{ id: string }[]>();
    expect(page.data).toHaveLength(1);
    expect(page.pageInfo.totalCountCapped).toBe(true);
  });
});
