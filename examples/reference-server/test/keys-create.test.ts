import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { postgresApiKeyStore } from '@holdfast/api-keys/postgres';
import { seedPgliteDataDir } from '@holdfast/pg/testing';
import { afterAll, describe, expect, it } from 'vitest';
import { type RunningServer, startServer } from '../src/server';
import { call, startTestServer } from './api-harness';
import { type Child, runCli, startServerProcess } from './process-harness';
import { createStorage, realPostgres } from './webhooks-harness';

// Issue 19, "Must show": `keys:create` against a running server, on embedded PGlite and on
// PostgreSQL: the new key answers 200 within one second. Never two processes on one PGlite
// directory: the CLI writes through the server's own connection, a second server is refused.

const KEY_LINE = /^(hf_test_[A-Za-z0-9_-]+)$/m;

/** Creates a key with the CLI and returns it with the time the CLI finished. */
async function createKeyWithCli(
  env: Record<string, string>,
): Promise<{ key: string; at: number; output: string }> {
  const { code, output } = await runCli(
    ['keys', 'create', '--account', 'acct_cli', '--scopes', 'orders:read'],
    env,
  );
  expect(code, output).toBe(0);
  const key = KEY_LINE.exec(output)?.[1];
  if (!key) throw new Error(`no key printed:\n${output}`);
  return { key, at: Date.now(), output };
}

/** The key's first 200 on `url`, asked every 50 ms: how long after `since` it came. */
async function acceptedWithin(url: string, key: string, since: number): Promise<number> {
  for (;;) {
    const answer = await call(url, 'GET', '/v1/orders', { key });
    if (answer.status === 200) return Date.now() - since;
    expect(answer.status).toBe(401);
    if (Date.now() - since > 5000) return Number.POSITIVE_INFINITY;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
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
    const { key, at, output } = await createKeyWithCli(env);
    expect(output).toMatch(new RegExp(`through the running server \\(process ${server.process.pid}\\)`));
    const ms = await acceptedWithin(url, key, at);
    console.log(`PGlite: the new key answered 200 ${ms} ms after keys:create exited`);
    expect(ms).toBeLessThan(1000);
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
  it('the new key answers 200 within one second', async () => {
    const storage = await createStorage();
    const server = await startServerProcess({ ...storage.env, HOLDFAST_SEED_DEMO_KEY: '0' });
    try {
      const { key, at } = await createKeyWithCli(storage.env);
      const ms = await acceptedWithin(server.url ?? '', key, at);
      console.log(`PostgreSQL: the new key answered 200 ${ms} ms after keys:create exited`);
      expect(ms).toBeLessThan(1000);
    } finally {
      await server.stop();
      await storage.drop();
    }
  }, 300_000);
});

it('a key refused while unknown works within a second of being created (the negative cache is short)', async () => {
  const t = await startTestServer();
  try {
    const key = 'hf_test_createdLater00000000000000001';
    for (let i = 0; i < 3; i++) expect((await call(t.url, 'GET', '/v1/orders', { key })).status).toBe(401);
    await postgresApiKeyStore(t.server.sql).save({ key, account: 'acct_later', scopes: ['*'] });
    const ms = await acceptedWithin(t.url, key, Date.now());
    expect(ms).toBeLessThan(1000 + 200);
  } finally {
    await t.stop();
  }
});
