// Keyset against OFFSET at depth on 1,000,000 rows in PostgreSQL (issue 4, "Must show").
// Usage: DATABASE_URL=postgres://postgres@127.0.0.1:5432/test \
//   npx tsx --conditions=@holdfast/source bench/pagination/run.ts
// Loads its own schema, prints one side-by-side table and the EXPLAIN plans, drops the schema.
import { randomBytes } from 'node:crypto';
import { cursorBinding, encodeCursor, type Keyring } from '@holdfast/cursor-pagination';
import { keysetPredicate, paginate } from '@holdfast/cursor-pagination/postgres';
import { defineSortAllowlist, parseSort } from '@holdfast/sort-allowlist';
import { orderBy, sortExpressions } from '@holdfast/sort-allowlist/postgres';
import postgres from 'postgres';

const ROWS = 1_000_000;
const DEPTH = 500_000;
const LIMIT = 20;
const RUNS = 15;

const databaseUrl = process.env.DATABASE_URL;
if (!databaseUrl) {
  console.error('bench/pagination needs DATABASE_URL (a real PostgreSQL)');
  process.exit(1);
}

const schema = `bench_pagination_${randomBytes(4).toString('hex')}`;
const sql = postgres(databaseUrl, { max: 1, onnotice: () => {}, connection: { search_path: schema } });

const orderSort = defineSortAllowlist({
  fields: {
    createdAt: { column: 'created_at', type: 'timestamp' },
    total: { column: 'total', type: 'number' },
    status: { column: 'status', type: 'enum', rank: ['pending', 'shipped', 'cancelled'] },
  },
  id: { column: 'id' },
  default: '-createdAt',
});
const keyring: Keyring = { current: 'k1', keys: { k1: randomBytes(32) } };
const account = 'acct_bench';
const binding = { account, resource: 'orders' };

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? (sorted[middle] ?? 0) : ((sorted[middle - 1] ?? 0) + (sorted[middle] ?? 0)) / 2;
}

async function timed(run: () => Promise<unknown>): Promise<number> {
  for (let i = 0; i < 3; i++) await run(); // warm the cache and the prepared statement
  const samples: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const start = performance.now();
    await run();
    samples.push(performance.now() - start);
  }
  return median(samples);
}

async function main(): Promise<void> {
  await sql.unsafe(`create schema ${schema}`);
  try {
    const loadStart = performance.now();
    await sql`create table orders (
      id text primary key,
      account_id text not null,
      created_at timestamptz(3) not null,
      total bigint not null,
      status text not null
    )`;
    // Two rows per millisecond, so the id tiebreaker is exercised at every depth.
    await sql`insert into orders
      select 'ord_' || md5(n::text), ${account}, timestamptz '2026-01-01' + (n / 2) * interval '1 ms',
             (n::bigint * 7919) % 100000, (array['pending', 'shipped', 'cancelled'])[1 + n % 3]
      from generate_series(1, ${ROWS}) as n`;
    // The index has exactly the ORDER BY terms of sort=-createdAt (nulls last included).
    await sql`create index orders_account_created on orders (account_id, created_at desc nulls last, id desc nulls last)`;
    await sql`vacuum analyze orders`;
    const loadSeconds = (performance.now() - loadStart) / 1000;

    const parsed = parseSort(orderSort, undefined);
    if (!parsed.ok) throw parsed.error;
    const sort = parsed.value;
    const select = sql`id, created_at, total, status`;
    const where = sql`account_id = ${account}`;

    // The cursor a client would hold after reading DEPTH rows: built from the row there.
    const [at] = await sql<{ created_at: string; id: string }[]>`select created_at::text, id from orders
      where ${where} order by ${orderBy(sql, sort)} offset ${DEPTH - 1} limit 1`;
    if (!at) throw new Error('no row at depth');
    const deepCursor = await encodeCursor(keyring, {
      binding: await cursorBinding({ sort: sort.canonical, filter: {}, scope: binding }),
      values: [at.created_at, at.id],
    });

    const keyset = (cursor: string | undefined) =>
      paginate(sql, {
        from: sql`orders`,
        where,
        select,
        allowlist: orderSort,
        limit: LIMIT,
        cursor,
        binding,
        keyring,
      });
    const offset = (skip: number) =>
      sql`select ${select} from orders where ${where} order by ${orderBy(sql, sort)} limit ${LIMIT + 1} offset ${skip}`;

    // The deep keyset page must start right after the row the cursor names.
    const [deepPage, offsetDeep] = await Promise.all([keyset(deepCursor), offset(DEPTH)]);
    if (deepPage.data[0]?.id !== offsetDeep[0]?.id) throw new Error('keyset and OFFSET disagree at depth');

    const keysetFirst = await timed(() => keyset(undefined));
    const keysetDeep = await timed(() => keyset(deepCursor));
    const offsetFirst = await timed(() => offset(0));
    const offsetDeepMs = await timed(() => offset(DEPTH));

    const [version] = await sql<{ server_version: string }[]>`show server_version`;
    const fmt = (ms: number) => ms.toFixed(2).padStart(9);
    const ratio = (deep: number, first: number) => `${(deep / first).toFixed(2)}x`.padStart(10);
    console.log(
      `PostgreSQL ${version?.server_version ?? '?'}, ${ROWS.toLocaleString('en-US')} rows loaded in ${loadSeconds.toFixed(1)} s; ` +
        `page size ${LIMIT}, sort=-createdAt (id desc tiebreaker), median of ${RUNS} runs after 3 warm-ups\n`,
    );
    console.log('| method  | page 1 (ms) | depth 500,000 (ms) | deep / first |');
    console.log('|---------|------------:|-------------------:|-------------:|');
    console.log(
      `| keyset  |   ${fmt(keysetFirst)} |          ${fmt(keysetDeep)} |   ${ratio(keysetDeep, keysetFirst)} |`,
    );
    console.log(
      `| OFFSET  |   ${fmt(offsetFirst)} |          ${fmt(offsetDeepMs)} |   ${ratio(offsetDeepMs, offsetFirst)} |`,
    );
    console.log(
      `\nkeyset deep/first ${(keysetDeep / keysetFirst).toFixed(2)} (target <= 1.5): ${keysetDeep / keysetFirst <= 1.5 ? 'met' : 'NOT met'}`,
    );

    const decoded = [at.created_at, at.id];
    const terms = sortExpressions(sql, sort);
    const plan = async (title: string, query: postgres.PendingQuery<postgres.Row[]>) => {
      const rows = await query;
      console.log(`\n${title}`);
      for (const row of rows) console.log(`  ${String(row['QUERY PLAN'])}`);
    };
    await plan(
      'EXPLAIN (ANALYZE, BUFFERS): keyset page at depth 500,000 (the query paginate() runs)',
      sql`explain (analyze, buffers) select ${select} from orders
        where ${where} and ${keysetPredicate(sql, terms, decoded)}
        order by ${orderBy(sql, sort)} limit ${LIMIT + 1}`,
    );
    await plan(
      'EXPLAIN (ANALYZE, BUFFERS): OFFSET 500000',
      sql`explain (analyze, buffers) select ${select} from orders where ${where}
        order by ${orderBy(sql, sort)} limit ${LIMIT + 1} offset ${DEPTH}`,
    );
  } finally {
    await sql.unsafe(`drop schema if exists ${schema} cascade`);
    await sql.end({ timeout: 5 });
  }
}

await main();
