// Keyset against OFFSET at depth on 1,000,000 rows in PostgreSQL (issue 4, "Must show").
// Every accepted sort of the reference server's orders, one by one: sorts.ts.
// Usage: DATABASE_URL=postgres://postgres@127.0.0.1:5432/test \
//   npx tsx --conditions=@holdfast/source bench/pagination/run.ts
// Loads its own schema, prints one side-by-side table and the EXPLAIN plans, drops the schema.
// Two sorts: the default -createdAt (all terms descending: a row comparison) and total
// (ascending, then id descending: the expanded OR-of-ANDs predicate led by a bound on total).
import { randomBytes } from 'node:crypto';
import { cursorBinding, encodeCursor, type Keyring, paginate } from '@holdfast/cursor-pagination';
import { fromPostgres } from '@holdfast/db/postgres';
import { defineSortAllowlist, orderBy, parseSort, sortExpressions } from '@holdfast/sort-allowlist';
import postgres from 'postgres';
import { summary } from '../summary';

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
// The last statement sent and its parameters, so EXPLAIN runs exactly what paginate() ran.
let lastQuery: { text: string; parameters: postgres.ParameterOrJSON<never>[] } = { text: '', parameters: [] };
const sql = postgres(databaseUrl, {
  max: 1,
  onnotice: () => {},
  connection: { search_path: schema },
  debug: (_connection, text, parameters) => {
    lastQuery = { text, parameters };
  },
});

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
    // Each index has exactly the ORDER BY terms of its sort (nulls last included).
    await sql`create index orders_created on orders (account_id, created_at desc nulls last, id desc nulls last)`;
    await sql`create index orders_total_asc on orders (account_id, total asc nulls last, id desc nulls last)`;
    await sql`vacuum analyze orders`;
    const loadSeconds = (performance.now() - loadStart) / 1000;

    const select = 'id, created_at, total, status';
    const where = { text: 'account_id = $1', values: [account] };
    const [version] = await sql<{ server_version: string }[]>`show server_version`;
    console.log(
      `PostgreSQL ${version?.server_version ?? '?'}, ${ROWS.toLocaleString('en-US')} rows loaded and indexed in ${loadSeconds.toFixed(1)} s; ` +
        `page size ${LIMIT}, median of ${RUNS} runs after 3 warm-ups\n`,
    );
    const fmt = (ms: number) => ms.toFixed(2).padStart(11);
    const ratio = (deep: number, first: number) => `${(deep / first).toFixed(2)}x`.padStart(12);
    const lines = [
      '| sort                | method | page 1 (ms) | depth 500,000 (ms) | deep / first |',
      '|---------------------|--------|------------:|-------------------:|-------------:|',
    ];
    const plans: string[] = [];
    let defaultRatio = Number.NaN;

    for (const raw of ['-createdAt', 'total']) {
      const parsed = parseSort(orderSort, raw);
      if (!parsed.ok) throw parsed.error;
      const sort = parsed.value;
      const terms = sortExpressions(sort);

      // The cursor a client would hold after reading DEPTH rows: the values of the row there,
      // as paginate() takes them (each ORDER BY term as PostgreSQL's lossless text). The text
      // columns get their own names: an output column named like a sort column would be what a
      // bare name in ORDER BY sorts on.
      const keyText = terms.map((term, index) => `(${term.expression})::text as k${index}`).join(', ');
      const [at] = await sql
        .unsafe(
          `select ${keyText} from orders where ${where.text} order by ${orderBy(sort)} offset $2 limit 1`,
          [account, DEPTH - 1],
        )
        .values();
      if (!at) throw new Error('no row at depth');
      const values = at.map((value: unknown) => (typeof value === 'string' ? value : null));
      const deepCursor = await encodeCursor(keyring, {
        binding: await cursorBinding({ sort: sort.canonical, filter: {}, scope: binding }),
        values,
      });

      const keyset = (cursor: string | undefined) =>
        paginate(fromPostgres(sql), {
          from: 'orders',
          where,
          select,
          allowlist: orderSort,
          sort: raw,
          limit: LIMIT,
          cursor,
          binding,
          keyring,
        });
      const offsetText = `select ${select} from orders where ${where.text} order by ${orderBy(sort)} limit $2 offset $3`;
      const offset = (skip: number) => sql.unsafe(offsetText, [account, LIMIT + 1, skip]);

      // The deep keyset page must be exactly the rows OFFSET finds there.
      const [deepPage, offsetDeep] = await Promise.all([keyset(deepCursor), offset(DEPTH)]);
      const keysetIds = deepPage.data.map((row) => row.id).join();
      const offsetIds = offsetDeep
        .slice(0, LIMIT)
        .map((row) => row.id)
        .join();
      if (keysetIds !== offsetIds) throw new Error(`keyset and OFFSET disagree at depth for sort=${raw}`);

      const keysetFirst = await timed(() => keyset(undefined));
      const keysetDeep = await timed(() => keyset(deepCursor));
      const offsetFirst = await timed(() => offset(0));
      const offsetDeepMs = await timed(() => offset(DEPTH));
      if (raw === '-createdAt') defaultRatio = keysetDeep / keysetFirst;
      const label = `\`${raw}\``.padEnd(19);
      lines.push(
        `| ${label} | keyset | ${fmt(keysetFirst)} | ${fmt(keysetDeep).padStart(18)} | ${ratio(keysetDeep, keysetFirst)} |`,
      );
      lines.push(
        `| ${label} | OFFSET | ${fmt(offsetFirst)} | ${fmt(offsetDeepMs).padStart(18)} | ${ratio(offsetDeepMs, offsetFirst)} |`,
      );

      const explain = async (title: string, query: postgres.PendingQuery<postgres.Row[]>) => {
        plans.push(`\n${title}`);
        for (const row of await query) plans.push(`  ${String(row['QUERY PLAN'])}`);
      };
      await keyset(deepCursor);
      const ran = lastQuery;
      plans.push(
        `\nSQL paginate() sent for sort=${raw} at depth 500,000:\n  ${ran.text.replace(/\s+/g, ' ')}`,
      );
      await explain(
        `EXPLAIN (ANALYZE, BUFFERS) of that statement with its parameters`,
        sql.unsafe(`explain (analyze, buffers) ${ran.text}`, ran.parameters),
      );
      if (raw === '-createdAt') {
        await explain(
          `EXPLAIN (ANALYZE, BUFFERS): OFFSET 500000, sort=${raw}`,
          sql.unsafe(`explain (analyze, buffers) ${offsetText}`, [account, LIMIT + 1, DEPTH]),
        );
      }
    }

    console.log(lines.join('\n'));
    console.log(plans.join('\n'));
    summary(
      import.meta.url,
      `pagination: keyset deep/first ${defaultRatio.toFixed(2)}x for the default sort -createdAt (target <= 1.5): ${defaultRatio <= 1.5 ? 'met' : 'NOT met'}`,
    );
  } finally {
    await sql.unsafe(`drop schema if exists ${schema} cascade`);
    await sql.end({ timeout: 5 });
  }
}

await main();
