import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Db } from '@holdfast/db';
import { drizzleTransaction } from '@holdfast/db/drizzle';
import { kyselyTransaction } from '@holdfast/db/kysely';
import { pgTransaction } from '@holdfast/db/pg';
import { postgresTransaction } from '@holdfast/db/postgres';
import { prismaTransaction } from '@holdfast/db/prisma';
import { sql as drizzleSql } from 'drizzle-orm';
import { drizzle } from 'drizzle-orm/node-postgres';
import { Kysely, sql as kyselySql, PostgresDialect } from 'kysely';
import pg from 'pg';
import postgres from 'postgres';

/** One driver as a service holds it: its own transactions, each handed to Holdfast as a Db. */
export interface Driver {
  readonly name: string;
  /** Runs `work` in one transaction of this driver; a throw rolls it back and rethrows. */
  transaction<T>(work: (db: Db) => Promise<T>): Promise<T>;
  /**
   * `select 41 + 1` through the driver's own transaction API (the `tx` the typed transaction
   * helper hands over, used without a cast) and the same through the Db beside it.
   */
  native(): Promise<[number, number]>;
  close(): Promise<void>;
}

/** The connection string of `schema` on the real PostgreSQL of DATABASE_URL. */
export function schemaUrl(schema: string): string {
  const url = new URL(process.env.DATABASE_URL ?? '');
  url.searchParams.set('options', `-c search_path=${schema}`);
  return url.toString();
}

const POOL = 25;

export function postgresJsDriver(url: string): Driver {
  const sql = postgres(url, { max: POOL, onnotice: () => {} });
  const transaction = postgresTransaction(sql);
  return {
    name: 'postgres.js',
    transaction: (work) => transaction((_, db) => work(db)),
    native: () =>
      transaction(async (tx, db) => {
        const [row] = await tx<{ n: number }[]>`select 41 + ${1}::int as n`;
        return [row?.n ?? 0, await one(db)];
      }),
    close: () => sql.end({ timeout: 5 }),
  };
}

/** `select 41 + 1` through the Db. */
async function one(db: Db): Promise<number> {
  const [row] = await db.query<{ n: number }>('select (41 + $1::int) as n', [1]);
  return row?.n ?? 0;
}

export function pgDriver(url: string): Driver {
  const pool = new pg.Pool({ connectionString: url, max: POOL });
  const transaction = pgTransaction(pool);
  return {
    name: 'node-postgres',
    transaction: (work) => transaction((_, db) => work(db)),
    native: () =>
      transaction(async (client, db) => {
        const { rows } = await client.query<{ n: number }>('select (41 + $1::int) as n', [1]);
        return [rows[0]?.n ?? 0, await one(db)];
      }),
    close: () => pool.end(),
  };
}

export function drizzleDriver(url: string): Driver {
  const pool = new pg.Pool({ connectionString: url, max: POOL });
  const transaction = drizzleTransaction(drizzle(pool), drizzleSql);
  return {
    name: 'Drizzle (node-postgres)',
    transaction: (work) => transaction((_, db) => work(db)),
    native: () =>
      transaction(async (tx, db) => {
        const { rows } = await tx.execute<{ n: number }>(drizzleSql`select (41 + ${1}::int) as n`);
        return [rows[0]?.n ?? 0, await one(db)];
      }),
    close: () => pool.end(),
  };
}

export function kyselyDriver(url: string): Driver {
  const db = new Kysely<Record<string, never>>({
    dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: url, max: POOL }) }),
  });
  const transaction = kyselyTransaction(db);
  return {
    name: 'Kysely (node-postgres)',
    transaction: (work) => transaction((_, hf) => work(hf)),
    native: () =>
      transaction(async (trx, hf) => {
        const { rows } = await kyselySql<{ n: number }>`select (41 + ${1}::int) as n`.execute(trx);
        return [rows[0]?.n ?? 0, await one(hf)];
      }),
    close: () => db.destroy(),
  };
}

/** What the tests use of a generated Prisma client, typed here so tsc needs no generated code. */
interface PrismaClientLike {
  $transaction<T>(
    work: (tx: { $queryRawUnsafe(text: string, ...values: unknown[]): Promise<unknown> }) => Promise<T>,
    options?: { maxWait?: number; timeout?: number },
  ): Promise<T>;
  $disconnect(): Promise<void>;
}

const prismaDir = join(dirname(fileURLToPath(import.meta.url)), 'prisma');

/**
 * Generates the Prisma client of `prisma/schema.prisma` (offline: the schema engine is not
 * used to generate a client, so PRISMA_SCHEMA_ENGINE_BINARY points at /bin/true instead of a
 * download) into the gitignored `prisma/generated`, unless it is there already.
 */
export function generatePrismaClient(): void {
  if (existsSync(join(prismaDir, 'generated', 'client.ts'))) return;
  execFileSync('npx', ['prisma', 'generate', '--schema', join(prismaDir, 'schema.prisma')], {
    env: { ...process.env, PRISMA_SCHEMA_ENGINE_BINARY: '/bin/true', PRISMA_HIDE_UPDATE_MESSAGE: '1' },
    stdio: 'pipe',
  });
}

export async function prismaDriver(url: string): Promise<Driver> {
  generatePrismaClient();
  // A path in a variable: tsc does not follow it, so typechecking needs no generated client.
  const clientPath = join(prismaDir, 'generated', 'client.ts');
  const { PrismaClient } = (await import(clientPath)) as {
    PrismaClient: new (options: { adapter: unknown }) => PrismaClientLike;
  };
  const { PrismaPg } = await import('@prisma/adapter-pg');
  const prisma = new PrismaClient({ adapter: new PrismaPg({ connectionString: url, max: POOL }) });
  const transaction = prismaTransaction(prisma, { maxWait: 30_000, timeout: 30_000 });
  return {
    name: 'Prisma 7 (adapter-pg)',
    transaction: (work) => transaction((_, db) => work(db)),
    native: () =>
      transaction(async (tx, db) => {
        const rows = await tx.$queryRawUnsafe('select (41 + $1::int) as n', 1);
        const n =
          Array.isArray(rows) && typeof rows[0] === 'object' && rows[0] !== null && 'n' in rows[0]
            ? rows[0].n
            : 0;
        return [Number(n), await one(db)];
      }),
    close: () => prisma.$disconnect(),
  };
}
