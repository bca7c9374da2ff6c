import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Db, fromDrizzle, fromKysely, fromPg, fromPostgres, fromPrisma } from '@holdfast/db';
import { sql as drizzleSql } from 'drizzle-orm';
import { drizzle } from 'drizzle-orm/node-postgres';
import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import postgres from 'postgres';

/** One driver as a service holds it: its own transactions, each handed to Holdfast as a Db. */
export interface Driver {
  readonly name: string;
  /** Runs `work` in one transaction of this driver; a throw rolls it back and rethrows. */
  transaction<T>(work: (db: Db) => Promise<T>): Promise<T>;
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
  return {
    name: 'postgres.js',
    transaction: async (work) =>
      (await sql.begin((tx) => work(fromPostgres(tx)))) as Awaited<ReturnType<typeof work>>,
    close: () => sql.end({ timeout: 5 }),
  };
}

async function pgTransaction<T>(pool: pg.Pool, work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query('begin');
    const result = await work(client);
    await client.query('commit');
    return result;
  } catch (error) {
    await client.query('rollback');
    throw error;
  } finally {
    client.release();
  }
}

export function pgDriver(url: string): Driver {
  const pool = new pg.Pool({ connectionString: url, max: POOL });
  return {
    name: 'node-postgres',
    transaction: (work) => pgTransaction(pool, (client) => work(fromPg(client))),
    close: () => pool.end(),
  };
}

export function drizzleDriver(url: string): Driver {
  const pool = new pg.Pool({ connectionString: url, max: POOL });
  const db = drizzle(pool);
  return {
    name: 'Drizzle (node-postgres)',
    transaction: (work) => db.transaction((tx) => work(fromDrizzle(tx, drizzleSql))),
    close: () => pool.end(),
  };
}

export function kyselyDriver(url: string): Driver {
  const db = new Kysely<Record<string, never>>({
    dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: url, max: POOL }) }),
  });
  return {
    name: 'Kysely (node-postgres)',
    transaction: (work) => db.transaction().execute((trx) => work(fromKysely(trx))),
    close: () => db.destroy(),
  };
}

/** What the tests use of a generated Prisma client, typed here so tsc needs no generated code. */
interface PrismaClientLike {
  $transaction<T>(
    work: (tx: { $queryRawUnsafe(text: string, ...values: unknown[]): Promise<unknown> }) => Promise<T>,
    options: { maxWait: number; timeout: number },
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
  return {
    name: 'Prisma 7 (adapter-pg)',
    transaction: (work) =>
      prisma.$transaction((tx) => work(fromPrisma(tx)), { maxWait: 30_000, timeout: 30_000 }),
    close: () => prisma.$disconnect(),
  };
}
