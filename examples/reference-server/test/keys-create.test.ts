import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { dbApiKeyStore } from '@holdfast/api-keys';
import { seedPgliteDataDir } from '@holdfast/pg/testing';
import { afterAll, describe, expect, it } from 'vitest';
import { type RunningServer, startServer } from '../src/server';
import { call, startTestServer } from './api-harness';
import { type Child, runCli, startServerProcess } from './process-harness';
import { createStorage, realPostgres } from './webhooks-harness';

// Issue 19, "Must show": `keys:create` against a running server, on embedded PGlite and on
// PostgreSQL: the new key works at once, the first request after the CLI exits answers 200 (a
// key the server never saw costs one lookup, nothing to wait for). Never two processes on one
// PGlite directory: the CLI writes through the server's own connection, a second server is
// refused.

const KEY_LINE = /^(hf_test_[A-Za-z0-9_-]+)$/m;

/** Creates a key with the CLI and returns it with what the CLI printed. */
async function createKeyWithCli(env: Record<string, string>): Promise<{ key: string; output: string }> {
  const { code, output } = await runCli(
    ['keys', 'create', '--account', 'acct_cli', '--scopes', 'orders:read'],
    env,
  );
  expect(code, output).toBe(0);
  const key = KEY_LINE.exec(output)?.[1];
  if (!key) throw new Error(`no key printed:\n${output}`);
  return { key, output };
}

/** The status of one `GET /v1/orders` with `key`. */
async function statusWith(url: string, key: string): Promise<number> {
  return (await call(url, 'GET', '/v1/orders', { key })).status;
}

describe('keys:create on embedded PGlite while the server runs', () => {
  let dir: string;
  let server: Child | undefined;
  let restarted: RunningServer | undefined;
  afterAll(async () => {
    await server?.stop();
    await restarted?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  // The server and the CLI are separate processes, as in use. The second opener and the restart
  // are this test's process: the lock is per process, so it is refused all the same.
  it('writes through the running server: the key works at once, and the directory is never opened twice', async () => {
    dir = await mkdtemp(join(tmpdir(), 'holdfast-keys-'));
    // A directory already initialised (the first start on an empty one is new-user.test.ts's).
    await seedPgliteDataDir(dir);
    const env = { DATABASE_URL: '', HOLDFAST_DATA_DIR: dir, HOLDFAST_SEED_DEMO_KEY: '0' };
    server = await startServerProcess(env);
    const url = server.url ?? '';
    expect(existsSync(join(dir, 'holdfast.lock'))).toBe(true);
    const { key, output } = await createKeyWithCli(env);
    expect(output).toMatch(new RegExp(`through the running server \\(process ${server.process.pid}\\)`));
    // The first request after the CLI exited: no retry, no wait.
    expect(await statusWith(url, key)).toBe(200);
    // A second server on the same directory is refused, naming the process that holds it.
    const serverEnv = { ...env, PORT: '0', HOST: '127.0.0.1', NODE_ENV: 'test' };
    const second = await startServer({ env: serverEnv }).then(
      (running) => running.close().then(() => 'started'),
      (error: Error) => error.message,
    );
    expect(second).toMatch(new RegExp(`in use by process ${server.process.pid}`));
    // The key survives a restart: it was written to the directory by its one owner.
    await server.stop();
    expect(existsSync(join(dir, 'holdfast.lock'))).toBe(false);
    restarted = await startServer({ env: serverEnv });
    expect(existsSync(join(dir, 'holdfast.lock'))).toBe(true);
    expect((await call(restarted.url, 'GET', '/v1/orders', { key })).status).toBe(200);
  }, 300_000);
});

describe.skipIf(!realPostgres)('keys:create on PostgreSQL while the server runs (needs DATABASE_URL)', () => {
  it('the new key answers 200 at once', async () => {
    const storage = await createStorage();
    const server = await startServerProcess({ ...storage.env, HOLDFAST_SEED_DEMO_KEY: '0' });
    try {
      const { key } = await createKeyWithCli(storage.env);
      expect(await statusWith(server.url ?? '', key)).toBe(200);
    } finally {
      await server.stop();
      await storage.drop();
    }
  }, 300_000);
});

it("a key refused while unknown is refused until the negative cache's second is over, then works (the cache is short)", async () => {
  // The server's clock, moved by hand (it starts at the real time: the workers run on it too).
  let now = Date.now();
  const t = await startTestServer({}, { now: () => now });
  try {
    const key = 'hf_test_createdLater00000000000000001';
    for (let i = 0; i < 3; i++) expect(await statusWith(t.url, key)).toBe(401);
    await dbApiKeyStore(t.server.db).save({ key, account: 'acct_later', scopes: ['*'] });
    // Remembered as unknown for one second from the first refusal: no lookup until then.
    expect(await statusWith(t.url, key)).toBe(401);
    now += 999;
    expect(await statusWith(t.url, key)).toBe(401);
    now += 1;
    expect(await statusWith(t.url, key)).toBe(200);
  } finally {
    await t.stop();
  }
});
