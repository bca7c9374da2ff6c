// Every sort GET /v1/orders accepts, on an account with 1,000,000 orders (issue 35, "Must show":
// every accepted sort under 100 ms a page). Usage:
//   DATABASE_URL=postgres://postgres@127.0.0.1:5432/test \
//     npx tsx --conditions=@holdfast/source bench/pagination/sorts.ts
// Applies the reference server's own migrations in a schema of its own (so the indexes are the
// ones the server ships), loads the rows with generate_series, then times a first page and a
// deep page of each of the 78 sorts through the server's listOrders() (the list timeout
// included), alone and under the status filter, with what PostgreSQL itself spent on the
// slowest of those four statements (EXPLAIN ANALYZE's execution time: the machine's load does
// not inflate it), prints the table and the EXPLAIN (ANALYZE, BUFFERS) of a few deep pages,
// and drops the schema.
import { randomBytes } from 'node:crypto';
import { loadavg } from 'node:os';
import { cursorBinding, encodeCursor, type Keyring } from '@holdfast/cursor-pagination';
import { migrate } from '@holdfast/db/migrate';
import { fromPostgres, postgresTransaction } from '@holdfast/db/postgres';
import { acceptedSorts, parseSort, sortExpressions } from '@holdfast/sort-allowlist';
import postgres from 'postgres';
import { allMigrations } from '../../examples/reference-server/src/db';
import { listOrders } from '../../examples/reference-server/src/resources/orders/repository';
import { orderSort } from '../../examples/reference-server/src/resources/orders/schema';
import { summary } from '../summary';

const ROWS = 1_000_000;
const LIMIT = 20;
const RUNS = 5;
const TARGET_MS = 100;
// The row whose cursor the deep pages continue from: the middle created_at, status shipped (the
// middle rank), so it lies deep in every order and deep inside its run of equal statuses.
const MIDDLE = 499_999;
const EXPLAINED = ['status', '-status,createdAt', 'status,total', 'total,status', '-createdAt,total'];

const databaseUrl = process.env.DATABASE_URL;
if (!databaseUrl) {
  console.error('bench/pagination/sorts needs DATABASE_URL (a real PostgreSQL)');
  process.exit(1);
}

const schema = `bench_sorts_${randomBytes(4).toString('hex')}`;
// The last page statement sent, so EXPLAIN runs exactly what listOrders() ran.
let lastPage: { text: string; parameters: postgres.ParameterOrJSON<never>[] } = { text: '', parameters: [] };
const sql = postgres(databaseUrl, {
  max: 1,
  onnotice: () => {},
  connection: { search_path: schema },
  debug: (_connection, text, parameters) => {
    if (text.includes('_hf_sort_')) lastPage = { text, parameters };
  },
});
const keyring: Keyring = { current: 'k1', keys: { k1: randomBytes(32) } };
const account = 'acct_bench';

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
}

async function timed(run: () => Promise<unknown>): Promise<number> {
  await run(); // warm the cache and the prepared statement
  const samples: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const start = performance.now();
    await run();
    samples.push(performance.now() - start);
  }
  return median(samples);
}

/** The cursor a client holds when the row MIDDLE was the last of its page. */
async function middleCursor(raw: string, filter: Record<string, string>): Promise<string> {
  const parsed = parseSort(orderSort, raw);
  if (!parsed.ok) throw parsed.error;
  const terms = sortExpressions(parsed.value);
  const keyText = terms.map((term, index) => `(${term.expression})::text as k${index}`).join(', ');
  const [at] = await sql
    .unsafe(`select ${keyText} from holdfast_orders where id = $1`, [`ord_${MIDDLE}`])
    .values();
  if (!at) throw new Error('no middle row');
  return encodeCursor(keyring, {
    binding: await cursorBinding({
      sort: parsed.value.canonical,
      filter,
      scope: { account, resource: 'orders' },
    }),
    values: at.map((value: unknown) => (typeof value === 'string' ? value : null)),
  });
}

async function main(): Promise<void> {
  await sql.unsafe(`create schema ${schema}`);
  try {
    const loadStart = performance.now();
    await migrate(fromPostgres(sql), await allMigrations());
    // Build the orders' indexes after the load (the same definitions the migrations made).
    const indexes = await sql<{ indexdef: string; indexname: string }[]>`
      select indexname, indexdef from pg_indexes
      where schemaname = ${schema} and tablename = 'holdfast_orders' and indexname <> 'holdfast_orders_pkey'`;
    for (const index of indexes) await sql.unsafe(`drop index ${index.indexname}`);
    // Two rows per millisecond; every total ten times; statuses in turn.
    await sql`insert into holdfast_orders (id, account_id, status, currency, total, created_at, updated_at)
      select 'ord_' || n, ${account}, (array['pending', 'shipped', 'cancelled'])[1 + n % 3], 'EUR',
             (n::bigint * 7919) % 100000, timestamptz '2026-01-01' + (n / 2) * interval '1 ms',
             timestamptz '2026-01-01' + (n / 2) * interval '1 ms'
      from generate_series(1, ${ROWS}) as n`;
    for (const index of indexes) await sql.unsafe(index.indexdef);
    await sql`vacuum analyze holdfast_orders`;
    const loadSeconds = (performance.now() - loadStart) / 1000;
    const [version] = await sql<{ server_version: string }[]>`show server_version`;
    console.log(
      `PostgreSQL ${version?.server_version ?? '?'}, ${ROWS.toLocaleString('en-US')} orders of one account loaded, ` +
        `load average ${(loadavg()[0] ?? 0).toFixed(1)}, ` +
        `${indexes.length + 1} indexes built, in ${loadSeconds.toFixed(1)} s; page size ${LIMIT}, ` +
        `median of ${RUNS} runs after a warm-up; deep = the page after the middle row (ord_${MIDDLE})\n`,
    );

    const fmt = (ms: number) => ms.toFixed(2).padStart(8);
    const lines = [
      '| sort                       | page 1 (ms) | deep (ms) | status=shipped: page 1 (ms) | deep (ms) | slowest in PG (ms) |',
      '|----------------------------|------------:|----------:|----------------------------:|----------:|-----------------:|',
    ];
    const plans: string[] = [];
    let worst = { ms: 0, what: '' };
    let execution = 0;
    let slowestExecution = 0;
    const sorts = acceptedSorts(orderSort);
    for (const raw of sorts) {
      const cells: number[] = [];
      execution = 0;
      for (const filter of [{}, { status: 'shipped' }]) {
        const deepCursor = await middleCursor(raw, filter);
        const page = (cursor: string | undefined) =>
          listOrders({ db: fromPostgres(sql), transaction: postgresTransaction(sql) }, keyring, account, {
            sort: raw,
            limit: String(LIMIT),
            cursor,
            ...filter,
          });
        const first = await timed(() => page(undefined));
        const deep = await timed(() => page(deepCursor));
        // What PostgreSQL itself spends on each statement, apart from the machine's load.
        for (const cursor of [undefined, deepCursor]) {
          await page(cursor);
          const ran = lastPage;
          const [row] = await sql.unsafe(`explain (analyze, format json) ${ran.text}`, ran.parameters);
          const [plan] = (row?.['QUERY PLAN'] ?? []) as { 'Execution Time': number }[];
          execution = Math.max(execution, plan?.['Execution Time'] ?? Number.NaN);
        }
        for (const [ms, what] of [
          [first, 'page 1'],
          [deep, 'deep'],
        ] as const) {
          if (ms > worst.ms)
            worst = { ms, what: `sort=${raw}${'status' in filter ? '&status=shipped' : ''} ${what}` };
        }
        cells.push(first, deep);
        if (EXPLAINED.includes(raw) && !('status' in filter)) {
          await page(deepCursor);
          const ran = lastPage;
          plans.push(`\nEXPLAIN (ANALYZE, BUFFERS), sort=${raw}, the deep page:`);
          for (const row of await sql.unsafe(`explain (analyze, buffers) ${ran.text}`, ran.parameters)) {
            plans.push(`  ${String(row['QUERY PLAN'])}`);
          }
        }
      }
      const [a = 0, b = 0, c = 0, d = 0] = cells;
      slowestExecution = Math.max(slowestExecution, execution);
      lines.push(
        `| ${`\`${raw}\``.padEnd(26)} | ${fmt(a).padStart(11)} | ${fmt(b).padStart(9)} | ${fmt(c).padStart(27)} | ${fmt(d).padStart(9)} | ${fmt(execution).padStart(16)} |`,
      );
    }
    console.log(lines.join('\n'));
    console.log(plans.join('\n'));
    const [load = 0] = loadavg();
    summary(
      import.meta.url,
      `pagination sorts: all ${sorts.length} accepted order sorts on 1M orders, page 1 and deep, alone and under status=: ` +
        `slowest page ${worst.ms.toFixed(1)} ms (${worst.what}; median of ${RUNS}, load average ${load.toFixed(1)}), ` +
        `slowest statement in PostgreSQL ${slowestExecution.toFixed(2)} ms; target under ${TARGET_MS} ms a page: ${worst.ms < TARGET_MS ? 'met' : 'NOT met'}`,
    );
  } finally {
    await sql.unsafe(`drop schema if exists ${schema} cascade`);
    await sql.end({ timeout: 5 });
  }
}

await main();
