import { randomBytes } from 'node:crypto';
import { connect, type Database, type Sql } from './index';

export type { Database, Sql };

/** True when tests run against a real PostgreSQL (`DATABASE_URL` set), as CI does. */
export const realPostgres: boolean = Boolean(process.env.DATABASE_URL);

export interface TestDatabase extends Database {
  /** The schema this test database lives in (real PostgreSQL), or `public` on PGlite. */
  readonly schema: string;
  /** Opens another pool on the same schema: for tests that need several connections. */
  connectAgain(max?: number): Promise<Database>;
}

/**
 * A database for one test file. On PGlite: a fresh in-memory instance. On PostgreSQL
 * (`DATABASE_URL`): a fresh schema with a random name, dropped on close, so test files
 * running in parallel never see each other's tables.
 */
export async function createTestDatabase(options: { max?: number } = {}): Promise<TestDatabase> {
  const databaseUrl = process.env.DATABASE_URL;
  if (!databaseUrl) {
    const db = await connect();
    return {
      ...db,
      schema: 'public',
      connectAgain: async () => {
        throw new Error('PGlite serves one connection: this test needs DATABASE_URL');
      },
    };
  }
  const schema = `t_${randomBytes(6).toString('hex')}`;
  const admin = await connect({ databaseUrl, max: 1 });
  await admin.sql.unsafe(`create schema ${schema}`);
  await admin.close();
  const db = await connect({ databaseUrl, max: options.max ?? 4, searchPath: schema });
  return {
    ...db,
    schema,
    connectAgain: (max = 4) => connect({ databaseUrl, max, searchPath: schema }),
    async close() {
      await db.sql.unsafe(`drop schema if exists ${schema} cascade`);
      await db.close();
    },
  };
}

/** A connection string for a child process that must see the same schema as `db`. */
export function childDatabaseUrl(db: TestDatabase): string {
  const databaseUrl = process.env.DATABASE_URL;
  if (!databaseUrl) throw new Error('child processes need DATABASE_URL');
  const url = new URL(databaseUrl);
  url.searchParams.set('options', `-c search_path=${db.schema}`);
  return url.toString();
}
