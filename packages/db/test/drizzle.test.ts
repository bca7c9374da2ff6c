import { realPostgres } from '@holdfast/pg/testing';
import { sql } from 'drizzle-orm';
import { drizzle } from 'drizzle-orm/node-postgres';
import fc from 'fast-check';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fromDrizzle } from '../src/drizzle';

// `fromDrizzle` hands Drizzle a statement's text cut at its numbered placeholders, each bound as
// a parameter. A `$1` that PostgreSQL does not read as a placeholder (in a string, a quoted
// identifier, a comment, a function's dollar-quoted body) must stay text: bound, it makes the
// parameter count disagree with the statement's, and the statement fails.

describe.skipIf(!realPostgres)('fromDrizzle on drizzle-orm/node-postgres (needs DATABASE_URL)', () => {
  let pool: pg.Pool;
  beforeAll(() => {
    pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 2 });
  });
  afterAll(() => pool.end());

  it('binds the placeholders only, not a $n in a string, an identifier, a comment or a dollar-quoted body', async () => {
    const hf = fromDrizzle(drizzle(pool), sql);
    const rows = await hf.query(
      `select $2::text as second, 'costs $1' as literal, E'it''s \\' $1' as escaped, -- $1 in a comment
              /* $1 /* nested $2 */ still $1 */ $$ $1 $$ as dollar, $fn$ $2 $fn$ as tagged,
              1 as "col$1", $1::int as first, $1::int + 1 as again`,
      [7, 'two'],
    );
    expect(rows).toEqual([
      {
        second: 'two',
        literal: 'costs $1',
        escaped: "it's ' $1",
        dollar: ' $1 ',
        tagged: ' $2 ',
        col$1: 1,
        first: 7,
        again: 8,
      },
    ]);
  });

  it('applies a function whose body names its own arguments $1 and $2, in a statement of no parameters', async () => {
    const hf = fromDrizzle(drizzle(pool), sql);
    await hf.query(`create or replace function pg_temp.holdfast_drizzle_add(integer, integer) returns integer
      language sql as $body$ select $1 + $2 $body$`);
    expect(await hf.query('select pg_temp.holdfast_drizzle_add($1::int, $2::int) as n', [40, 2])).toEqual([
      { n: 42 },
    ]);
  });

  it('returns every value where it was written, whatever literals, identifiers and comments hold (property)', async () => {
    const hf = fromDrizzle(drizzle(pool), sql);
    const tagOf = (value: string) => `$t${value.length}x$`;
    // The body ends at the first closing tag, so it must not come sooner.
    const dollarQuotable = (value: string) =>
      `${value}${tagOf(value)}`.indexOf(tagOf(value)) === value.length;
    // Text PostgreSQL takes in a string (no NUL), often holding placeholders, quotes and markers.
    const text = fc
      .array(
        fc.oneof(
          fc.constantFrom('$1', '$2', '$12', "'", '"', '\\', '$$', '$q$', '--', '/*', '*/', '\n', 'E'),
          fc.string(),
        ),
        {
          maxLength: 8,
        },
      )
      .map((pieces) => pieces.join('').replaceAll('\u0000', ''));
    const column = fc.oneof(
      fc.record({ kind: fc.constant('param' as const), value: text }),
      fc.record({
        kind: fc.constantFrom('quoted' as const, 'escaped' as const, 'dollar' as const),
        value: text,
      }),
    );
    const comment = fc.oneof(
      fc.constant(''),
      text.map((t) => `/* ${t.replaceAll('*/', '').replaceAll('/*', '')} */`),
      text.map((t) => `-- ${t.replaceAll('\n', ' ')}\n`),
    );
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(column, comment), { minLength: 1, maxLength: 6 }),
        async (columns) => {
          const values: string[] = [];
          const expressions = columns.map(([c, note], i) => {
            const alias = `"c$${i + 1}""x"`;
            let expression: string;
            if (c.kind === 'param') {
              values.push(c.value);
              expression = `$${values.length}::text`;
            } else if (c.kind === 'quoted') {
              expression = `'${c.value.replaceAll("'", "''")}'`;
            } else if (c.kind === 'escaped') {
              expression = `E'${c.value.replaceAll('\\', '\\\\').replaceAll("'", "\\'")}'`;
            } else {
              const tag = tagOf(c.value);
              expression = dollarQuotable(c.value) ? `${tag}${c.value}${tag}` : `''`;
            }
            return `${expression} ${note} as ${alias}`;
          });
          const rows = await hf.query<Record<string, string>>(`select ${expressions.join(', ')}`, values);
          const expected = Object.fromEntries(
            columns.map(([c], i) => [
              `c$${i + 1}"x`,
              c.kind === 'dollar' && !dollarQuotable(c.value) ? '' : c.value,
            ]),
          );
          expect(rows).toEqual([expected]);
        },
      ),
      { numRuns: 150 },
    );
  });
});
