import { randomBytes } from 'node:crypto';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';
import { connect, type Database, pgliteClient, type Sql } from './index';

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

/**
 * Where the tarball of a freshly initialised PGlite data directory is, for test processes: set
 * by {@link preparePgliteTemplate} (the root vitest global setup), read by every PGlite a test
 * boots. Loading it takes a fraction of the CPU of PGlite's own initdb (about 1 s against 6 s).
 */
const TEMPLATE_VARIABLE = 'HOLDFAST_TEST_PGLITE_TEMPLATE';

/** The installed PGlite's version: a template is only valid for the PGlite that made it. */
async function pgliteVersion(): Promise<string> {
  const entry = createRequire(import.meta.url).resolve('@electric-sql/pglite');
  for (let dir = dirname(entry); dir !== dirname(dir); dir = dirname(dir)) {
    const text = await readFile(join(dir, 'package.json'), 'utf8').catch(() => undefined);
    if (text === undefined) continue;
    const manifest: unknown = JSON.parse(text);
    if (
      typeof manifest === 'object' &&
      manifest !== null &&
      'name' in manifest &&
      manifest.name === '@electric-sql/pglite' &&
      'version' in manifest &&
      typeof manifest.version === 'string'
    )
      return manifest.version;
  }
  throw new Error('cannot find the version of @electric-sql/pglite');
}

/**
 * Makes the data-directory template once (initdb in a PGlite, dumped as a tarball) in
 * `cacheDir`, named by the PGlite version so an upgrade makes a new one, and points this
 * process's environment (so the test processes forked after it) at it. For a vitest global setup.
 */
export async function preparePgliteTemplate(cacheDir: string): Promise<string> {
  const file = join(cacheDir, `pglite-${await pgliteVersion()}-datadir.tar`);
  const found = await readFile(file).then(
    (bytes) => bytes.length > 0,
    () => false,
  );
  if (!found) {
    const db = await PGlite.create('memory://');
    const dump = await db.dumpDataDir('none');
    await db.close();
    await mkdir(cacheDir, { recursive: true });
    // Written aside then renamed: a run stopped halfway never leaves half a template behind.
    const partial = `${file}.${process.pid}.partial`;
    await writeFile(partial, new Uint8Array(await dump.arrayBuffer()));
    await rename(partial, file);
  }
  process.env[TEMPLATE_VARIABLE] = file;
  return file;
}

/** The template's tarball when the global setup made one; otherwise PGlite runs initdb itself. */
async function template(): Promise<Blob | undefined> {
  const file = process.env[TEMPLATE_VARIABLE];
  if (!file) return undefined;
  return new Blob([new Uint8Array(await readFile(file))]);
}

/**
 * A new PGlite, in memory or in `dataDir` (which must not hold a database yet), started from the
 * template when there is one: what initdb would make, in a fraction of the time.
 */
export async function createTestPglite(dataDir = 'memory://'): Promise<PGlite> {
  const loadDataDir = await template();
  return PGlite.create({ dataDir, ...(loadDataDir ? { loadDataDir } : {}) });
}

/**
 * Fills the empty directory `dir` with a freshly initialised PGlite data directory (from the
 * template): for tests whose subject is not the first start, so a server or CLI started on it
 * finds a database instead of running initdb.
 */
export async function seedPgliteDataDir(dir: string): Promise<void> {
  const db = await createTestPglite(dir);
  await db.close();
}

/** A PGlite served on a loopback port, as pglite-socket serves it to postgres.js. */
async function servePglite(): Promise<{ host: string; port: number; stop(): Promise<void> }> {
  const db = await createTestPglite();
  const server = new PGLiteSocketServer({ db, host: '127.0.0.1', port: 0 });
  await server.start();
  const [host, port] = server.getServerConn().split(':');
  return {
    host: host ?? '127.0.0.1',
    port: Number(port),
    async stop() {
      await server.stop();
      await db.close();
    },
  };
}

/** Where the PGlite this test process shares listens: booted on first use, kept for every file. */
let engine: Promise<{ host: string; port: number }> | undefined;

function bootEngine(): Promise<{ host: string; port: number }> {
  return servePglite();
}

/**
 * The one client of the shared PGlite (PGlite has one session: one connection at a time). A
 * test may end it on purpose (to see the server answer 503); the next database opened gets a
 * new one, so one file's ending never breaks the next file.
 */
let client: Sql | undefined;

async function alive(sql: Sql): Promise<boolean> {
  try {
    await sql`select 1`;
    return true;
  } catch {
    return false;
  }
}

/** The schema the shared session is on now, the file it is for and how many databases use it. */
let current: { schema: string; file: string; users: number } | undefined;

/**
 * Boots the PGlite this test process shares, unless `DATABASE_URL` is set: call it from a
 * `beforeAll` (the root `vitest.setup.ts` does), so the boot counts against the hook timeout
 * instead of the first test that opens a database.
 */
export async function warmUpTestDatabase(): Promise<void> {
  if (process.env.DATABASE_URL) return;
  engine ??= bootEngine();
  await engine;
}

/** A PGlite of its own, as every test database had before they were shared: for a second one open at once. */
async function ownPglite(): Promise<TestDatabase> {
  const served = await servePglite();
  const sql = pgliteClient(served.host, served.port);
  return {
    sql,
    kind: 'pglite',
    description: 'embedded PGlite (in memory, of this test alone)',
    async close() {
      await sql.end({ timeout: 5 });
      await served.stop();
    },
    schema: 'public',
    connectAgain: async () => {
      throw new Error('PGlite serves one connection: this test needs DATABASE_URL');
    },
  };
}

/** Openings run one at a time, so two opened together (Promise.all) see each other. */
let opening: Promise<unknown> = Promise.resolve();

function pgliteTestDatabase(): Promise<TestDatabase> {
  const next = opening.then(openPgliteTestDatabase, openPgliteTestDatabase);
  opening = next.catch(() => {});
  return next;
}

async function openPgliteTestDatabase(): Promise<TestDatabase> {
  // A file that opens a second database while its first is open (two servers side by side)
  // gets a PGlite of its own for it: one session cannot hold two schemas at once.
  if (current !== undefined && current.file === currentTestFile() && current.users > 0) return ownPglite();
  engine ??= bootEngine();
  const { host, port } = await engine;
  let fresh = false;
  if (client === undefined || !(await alive(client))) {
    client = pgliteClient(host, port);
    fresh = true;
  }
  const sql = client;
  const file = currentTestFile();
  // One schema per test file: databases opened together in a file share it (one session, so
  // one search_path); a new file, or the last one closed, starts a fresh schema.
  if (current === undefined || current.file !== file) {
    const schema = `t_${randomBytes(6).toString('hex')}`;
    await sql.unsafe(`create schema ${schema}; set search_path to ${schema}`);
    current = { schema, file, users: 0 };
  } else if (fresh) {
    await sql.unsafe(`set search_path to ${current.schema}`);
  }
  const mine = current;
  mine.users += 1;
  let closed = false;
  return {
    sql,
    kind: 'pglite',
    description: 'embedded PGlite (in memory, shared by this test process)',
    schema: mine.schema,
    connectAgain: async () => {
      throw new Error('PGlite serves one connection: this test needs DATABASE_URL');
    },
    async close() {
      if (closed) return;
      closed = true;
      mine.users -= 1;
      if (mine.users > 0) return;
      const last = current === mine;
      if (last) current = undefined;
      // The client may have been ended by the test; the schema then goes with the next file's.
      await sql
        .unsafe(`${last ? 'set search_path to public; ' : ''}drop schema if exists ${mine.schema} cascade`)
        .catch(() => {});
    },
  };
}

/**
 * A database for one test file. On PGlite: a fresh schema of the PGlite this test process
 * shares across its files (booting PGlite takes seconds; a schema takes milliseconds); a second
 * database opened while the first is open gets a PGlite of its own, since PGlite has one
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
