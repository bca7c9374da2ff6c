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

/** The test file running now (vitest), so that each file starts on a schema of its own. */
function currentTestFile(): string {
  const state = (globalThis as { __vitest_worker__?: { filepath?: string } }).__vitest_worker__;
  return state?.filepath ?? '';
}

/** One embedded PGlite per test process, booted on first use (5 to 7 s) and kept for every file. */
let sharedPglite: Promise<Database> | undefined;

/** The schema the shared PGlite's one connection is on now, the file it is for and its users. */
let current: { schema: string; file: string; users: number } | undefined;

/**
 * Boots the PGlite this test process shares, unless `DATABASE_URL` is set: call it from a
 * `beforeAll` (the root `vitest.setup.ts` does), so the boot counts against the hook timeout
 * instead of the first test that opens a database.
 */
export async function warmUpTestDatabase(): Promise<void> {
  if (process.env.DATABASE_URL) return;
  sharedPglite ??= connect();
  await sharedPglite;
}

async function pgliteTestDatabase(): Promise<TestDatabase> {
  sharedPglite ??= connect();
  const db = await sharedPglite;
  const file = currentTestFile();
  // One schema per test file: databases opened together in a file share it (PGlite has one
  // session, so one search_path); a new file, or the last one closed, starts a fresh schema.
  if (current === undefined || current.file !== file) {
    const schema = `t_${randomBytes(6).toString('hex')}`;
    await db.sql.unsafe(`create schema ${schema}; set search_path to ${schema}`);
    current = { schema, file, users: 0 };
  }
  const mine = current;
  mine.users += 1;
  let closed = false;
  return {
    sql: db.sql,
    kind: db.kind,
    description: db.description,
    schema: mine.schema,
    connectAgain: async () => {
      throw new Error('PGlite serves one connection: this test needs DATABASE_URL');
    },
    async close() {
      if (closed) return;
      closed = true;
      mine.users -= 1;
      if (mine.users > 0) return;
      if (current === mine) {
        current = undefined;
        await db.sql.unsafe(`set search_path to public; drop schema ${mine.schema} cascade`);
      } else {
        await db.sql.unsafe(`drop schema if exists ${mine.schema} cascade`);
      }
    },
  };
}

/**
 * A database for one test file. On PGlite: a fresh schema of the PGlite this test process
 * shares across its files (booting PGlite takes seconds; a schema takes milliseconds); every
 * database a file opens while another is open shares that file's schema, since PGlite has one
 * session. On PostgreSQL (`DATABASE_URL`): a fresh schema with a random name, dropped on close,
 * so test files running in parallel never see each other's tables.
 */
export async function createTestDatabase(options: { max?: number } = {}): Promise<TestDatabase> {
  const databaseUrl = process.env.DATABASE_URL;
  if (!databaseUrl) return pgliteTestDatabase();
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
