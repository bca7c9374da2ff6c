/**
 * The one thing every Holdfast statement needs from a database driver: run `text` (placeholders
 * `$1..$n`) with positional `values` and hand back the rows. Any driver satisfies it in a few
 * lines, so a statement that must join the caller's transaction (the idempotency claim and
 * answer, the outbox write, the page query) runs on whatever connection or transaction the
 * caller already holds. Statements cast in SQL so every driver returns the same JS types.
 *
 * @example
 * ```ts
 * const db: Db = { query: async (text, values) => (await pool.query(text, values as unknown[])).rows };
 * ```
 */
export interface Db {
  query<Row = Record<string, unknown>>(text: string, values?: readonly unknown[]): Promise<Row[]>;
}

/** The slice of a postgres.js `Sql` or transaction an adapter needs. */
export interface PostgresJsLike {
  unsafe(text: string, values?: unknown[], options?: { prepare?: boolean }): PromiseLike<unknown>;
}

/** The slice of a node-postgres `Pool`, `Client` or `PoolClient` an adapter needs. */
export interface PgLike {
  query(config: { name?: string; text: string; values: unknown[] }): PromiseLike<{ rows: unknown[] }>;
}

/**
 * The slice of a Drizzle database or transaction an adapter needs (node-postgres or
 * postgres.js); `Query` is Drizzle's `SQL`.
 */
export interface DrizzleLike<Query> {
  execute(query: Query): PromiseLike<unknown>;
}

/**
 * The slice of Drizzle's `sql` tag an adapter needs, passed in so drizzle-orm is no dependency:
 * `Chunk` is Drizzle's `SQLChunk`, `Query` its `SQL`.
 */
export interface DrizzleSqlTag<Chunk, Query> {
  raw(text: string): Chunk;
  param(value: unknown): Chunk;
  join(chunks: Chunk[]): Query;
}

/** A raw compiled query as Kysely's `CompiledQuery.raw(text, values)` builds it. */
export interface KyselyRawQuery {
  readonly sql: string;
  readonly parameters: readonly unknown[];
  readonly query: {
    readonly kind: 'RawNode';
    readonly sqlFragments: readonly string[];
    readonly parameters: readonly never[];
  };
  readonly queryId: { readonly queryId: string };
}

/** The slice of a Kysely instance or transaction an adapter needs. */
export interface KyselyLike {
  executeQuery(query: KyselyRawQuery): PromiseLike<{ rows: unknown[] }>;
}

/** The slice of a Prisma client or interactive transaction an adapter needs. */
export interface PrismaLike {
  $queryRawUnsafe(text: string, ...values: unknown[]): PromiseLike<unknown>;
}

function rowsOf<Row>(result: unknown): Row[] {
  if (Array.isArray(result)) return result;
  if (typeof result === 'object' && result !== null && 'rows' in result && Array.isArray(result.rows)) {
    return result.rows;
  }
  throw new TypeError('the driver returned neither rows nor a result with rows');
}

/**
 * A postgres.js `Sql` (the pool) or transaction as a {@link Db}; statements are prepared.
 *
 * @example
 * ```ts
 * await sql.begin((tx) => enqueueEvent(fromPostgres(tx), event));
 * ```
 */
export function fromPostgres(sql: PostgresJsLike): Db {
  return {
    async query<Row>(text: string, values: readonly unknown[] = []) {
      return rowsOf<Row>(await sql.unsafe(text, [...values], { prepare: true }));
    },
  };
}

/**
 * A node-postgres `Pool`, `Client` or `PoolClient` as a {@link Db}. Pass the client that ran
 * `BEGIN` to work in its transaction (a `Pool` runs each statement on any connection).
 *
 * Each statement is prepared once per connection (a named statement, as postgres.js does by
 * default), so later runs skip parsing and planning it again. Pass `{ prepare: false }` behind
 * a pooler that cannot keep named statements (PgBouncer in transaction mode before 1.21).
 *
 * @example
 * ```ts
 * const client = await pool.connect();
 * await client.query('begin');
 * await enqueueEvent(fromPg(client), event);
 * await client.query('commit');
 * ```
 */
export function fromPg(client: PgLike, options: { readonly prepare?: boolean } = {}): Db {
  const prepare = options.prepare ?? true;
  return {
    async query<Row>(text: string, values: readonly unknown[] = []) {
      const config = prepare
        ? { name: statementName(text), text, values: [...values] }
        : { text, values: [...values] };
      return rowsOf<Row>(await client.query(config));
    },
  };
}

// Statement names, one per distinct text, never reused for another text (node-postgres refuses
// a name already prepared on the connection with different text). Bounded: past the limit the
// map starts over and a text seen again gets a fresh name.
const STATEMENT_NAMES_LIMIT = 1000;
const statementNames = new Map<string, string>();
let statementCount = 0;

function statementName(text: string): string {
  let name = statementNames.get(text);
  if (name !== undefined) return name;
  if (statementNames.size >= STATEMENT_NAMES_LIMIT) statementNames.clear();
  statementCount += 1;
  name = `holdfast_${statementCount}`;
  statementNames.set(text, name);
  return name;
}

// `$1..$n` outside quotes; Holdfast statements hold no `$` in literals or dollar quotes.
const PLACEHOLDER = /\$(\d+)/g;

function splitPlaceholders(text: string): { parts: string[]; indexes: number[] } {
  const parts: string[] = [];
  const indexes: number[] = [];
  let last = 0;
  for (const match of text.matchAll(PLACEHOLDER)) {
    parts.push(text.slice(last, match.index));
    indexes.push(Number(match[1]) - 1);
    last = match.index + match[0].length;
  }
  parts.push(text.slice(last));
  return { parts, indexes };
}

/**
 * A Drizzle database or transaction (on node-postgres or postgres.js) as a {@link Db}. Pass
 * your own `sql` tag from drizzle-orm, so this package needs no drizzle-orm of its own.
 *
 * @example
 * ```ts
 * import { sql } from 'drizzle-orm';
 * await db.transaction((tx) => enqueueEvent(fromDrizzle(tx, sql), event));
 * ```
 */
export function fromDrizzle<Chunk, Query>(tx: DrizzleLike<Query>, sql: DrizzleSqlTag<Chunk, Query>): Db {
  return {
    async query<Row>(text: string, values: readonly unknown[] = []) {
      const { parts, indexes } = splitPlaceholders(text);
      const chunks: Chunk[] = [];
      parts.forEach((part, i) => {
        chunks.push(sql.raw(part));
        const index = indexes[i];
        if (index !== undefined) chunks.push(sql.param(values[index]));
      });
      return rowsOf<Row>(await tx.execute(sql.join(chunks)));
    },
  };
}

let kyselyQueries = 0;

/**
 * A Kysely instance or transaction as a {@link Db}: the statement goes through
 * `executeQuery` as the raw compiled query `CompiledQuery.raw(text, values)` would build.
 *
 * @example
 * ```ts
 * await db.transaction().execute((trx) => enqueueEvent(fromKysely(trx), event));
 * ```
 */
export function fromKysely(trx: KyselyLike): Db {
  return {
    async query<Row>(text: string, values: readonly unknown[] = []) {
      kyselyQueries += 1;
      const result = await trx.executeQuery({
        sql: text,
        parameters: [...values],
        query: { kind: 'RawNode', sqlFragments: [text], parameters: [] },
        queryId: { queryId: `holdfast_${kyselyQueries}` },
      });
      return rowsOf<Row>(result);
    },
  };
}

/**
 * A Prisma client or interactive transaction (Prisma 7 with `@prisma/adapter-pg`) as a
 * {@link Db}, through `$queryRawUnsafe(text, ...values)`: the values stay parameters.
 *
 * @example
 * ```ts
 * await prisma.$transaction((tx) => enqueueEvent(fromPrisma(tx), event));
 * ```
 */
export function fromPrisma(tx: PrismaLike): Db {
  return {
    async query<Row>(text: string, values: readonly unknown[] = []) {
      return rowsOf<Row>(await tx.$queryRawUnsafe(text, ...values));
    },
  };
}

/** Bytes as lower-case hex, for `decode($n, 'hex')`: the same text every driver passes. */
export function toHex(bytes: Uint8Array): string {
  let out = '';
  for (const byte of bytes) out += byte.toString(16).padStart(2, '0');
  return out;
}

/** Lower-case hex from `encode(column, 'hex')` back to bytes. */
export function fromHex(hex: string): Uint8Array {
  const bytes = new Uint8Array(hex.length >> 1);
  for (let i = 0; i < bytes.length; i += 1) bytes[i] = Number.parseInt(hex.slice(i * 2, i * 2 + 2), 16);
  return bytes;
}
