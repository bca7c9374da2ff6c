import { PGLiteSocketServer } from '@electric-sql/pglite-socket';
import { createTestDatabase, createTestPglite, realPostgres } from '@holdfast/pg/testing';
import pg from 'pg';

export interface TestPool {
  readonly pool: pg.Pool;
  readonly description: string;
  close(): Promise<void>;
}

/**
 * A node-postgres pool for one test file. With DATABASE_URL: a fresh schema of that PostgreSQL
 * (made and dropped by `createTestDatabase`), four connections. Without: a PGlite of this file's
 * own, served on a loopback socket that pg speaks to like any server, one connection (PGlite
 * has one session, so a second connection would share its transaction).
 *
 * @example
 * ```ts
 * const db = await openTestPool();
 * await migrate(db.pool);
 * ```
 */
export async function openTestPool(): Promise<TestPool> {
  if (realPostgres) {
    const db = await createTestDatabase();
    const url = new URL(process.env.DATABASE_URL ?? '');
    url.searchParams.set('options', `-c search_path=${db.schema}`);
    const pool = new pg.Pool({ connectionString: url.toString(), max: 4 });
    return {
      pool,
      description: `PostgreSQL, schema ${db.schema}`,
      async close() {
        await pool.end();
        await db.close();
      },
    };
  }
  const engine = await createTestPglite();
  const server = new PGLiteSocketServer({ db: engine, host: '127.0.0.1', port: 0 });
  await server.start();
  const [host, port] = server.getServerConn().split(':');
  const pool = new pg.Pool({ host, port: Number(port), user: 'postgres', database: 'postgres', max: 1 });
  return {
    pool,
    description: 'embedded PGlite',
    async close() {
      await pool.end();
      await server.stop();
      await engine.close();
    },
  };
}
