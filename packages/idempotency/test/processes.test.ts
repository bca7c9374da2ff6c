import { type ChildProcess, spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { migrate } from '@holdfast/db/migrate';
import { fromPostgres } from '@holdfast/db/postgres';
import { childDatabaseUrl, createTestDatabase, realPostgres, type TestDatabase } from '@holdfast/pg/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrations } from '../src/postgres';

const SERVER = fileURLToPath(new URL('./fixtures/server.ts', import.meta.url));
const PACKAGE = fileURLToPath(new URL('..', import.meta.url));

interface Server {
  readonly url: string;
  readonly child: ChildProcess;
  /** Resolves at the next "started" line the server prints. */
  started(): Promise<void>;
}

async function startServer(db: TestDatabase, env: Record<string, string>): Promise<Server> {
  const child = spawn(process.execPath, ['--conditions=@holdfast/source', '--import', 'tsx', SERVER], {
    cwd: PACKAGE,
    env: { ...process.env, ...env, DATABASE_URL: childDatabaseUrl(db) },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const waiters: Array<() => void> = [];
  let buffered = '';
  const port = await new Promise<number>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`server exited with ${code}`)));
    child.stdout?.on('data', (chunk: Buffer) => {
      buffered += chunk.toString();
      for (let newline = buffered.indexOf('\n'); newline >= 0; newline = buffered.indexOf('\n')) {
        const line = buffered.slice(0, newline);
        buffered = buffered.slice(newline + 1);
        const listening = /^listening (\d+)$/.exec(line);
        if (listening) resolve(Number(listening[1]));
        if (line === 'started') waiters.shift()?.();
      }
    });
  });
  return {
    url: `http://127.0.0.1:${port}`,
    child,
    started: () => new Promise<void>((resolve) => waiters.push(resolve)),
  };
}

function stop(server: Server | undefined): void {
  if (server && server.child.exitCode === null && server.child.signalCode === null)
    server.child.kill('SIGTERM');
}

const pay = (server: Server, key: string) =>
  fetch(`${server.url}/v1/payments`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'Idempotency-Key': key },
    body: JSON.stringify({ amount: 500, currency: 'EUR' }),
  });

describe.skipIf(!realPostgres)(
  'two server processes on one database (needs DATABASE_URL: several connections)',
  () => {
    let db: TestDatabase;
    const servers: Server[] = [];

    beforeAll(async () => {
      db = await createTestDatabase();
      await migrate(fromPostgres(db.sql), migrations);
      await db.sql`create table payments (id serial primary key, key text not null, amount int not null)`;
      servers.push(
        ...(await Promise.all([startServer(db, { SLEEP_MS: '300' }), startServer(db, { SLEEP_MS: '300' })])),
      );
    });
    afterAll(async () => {
      for (const server of servers) stop(server);
      await db?.close();
    });

    async function executions(key: string): Promise<number> {
      const [row] = await db.sql<{ n: number }[]>`select count(*)::int as n from payments where key = ${key}`;
      return row?.n ?? 0;
    }

    it('50 concurrent identical requests over two processes execute once; the rest are replays or 409', async () => {
      const key = 'concurrent-key';
      const responses = await Promise.all(
        Array.from({ length: 50 }, (_, i) => servers[i % 2]).map(async (server) => {
          if (!server) throw new Error('no server');
          const response = await pay(server, key);
          return { response, body: await response.json() };
        }),
      );
      expect(await executions(key)).toBe(1);
      const originals = responses.filter(
        ({ response }) => response.status === 201 && !response.headers.has('Idempotent-Replayed'),
      );
      expect(originals).toHaveLength(1);
      const original = originals[0]?.body;
      for (const { response, body } of responses) {
        if (response.status === 409) {
          expect(body.code).toBe('idempotency_key_in_use');
          expect(response.headers.get('Retry-After')).toBe('1');
        } else {
          expect(response.status).toBe(201);
          expect(body).toEqual(original);
        }
      }
      expect(responses.some(({ response }) => response.status === 409)).toBe(true);
      // Every client that got 409 retries (as Retry-After says, sooner here) on the same server
      // until it gets the stored answer: all 50 end with the one original body.
      const retried = await Promise.all(
        responses.map(async ({ response, body }, i) => {
          const server = servers[i % 2];
          if (!server) throw new Error('no server');
          let last = { response, body };
          for (let attempt = 0; last.response.status === 409 && attempt < 100; attempt++) {
            await new Promise((resolve) => setTimeout(resolve, 50));
            const again = await pay(server, key);
            last = { response: again, body: await again.json() };
          }
          return last;
        }),
      );
      for (const { response, body } of retried) {
        expect(response.status).toBe(201);
        expect(body).toEqual(original);
      }
      expect(
        retried.filter(({ response }) => response.headers.get('Idempotent-Replayed') === 'true'),
      ).toHaveLength(49);
      expect(await executions(key)).toBe(1);
    });

    it('a process killed with SIGKILL mid-handler leaves no execution; its key is free when the lease runs out, not a millisecond before', async () => {
      const lease = 3_000;
      // One clock for both processes, moved by hand: the lease runs out when the test says.
      const clockFile = join(await mkdtemp(join(tmpdir(), 'holdfast-clock-')), 'now');
      const start = Date.parse('2026-11-27T12:00:00.000Z');
      const setClock = (ms: number) => writeFileSync(clockFile, String(ms));
      setClock(start);
      const env = { LEASE_MS: String(lease), CLOCK_FILE: clockFile };
      const [doomed, survivor] = await Promise.all([
        startServer(db, { ...env, SLEEP_MS: '60000' }),
        startServer(db, env),
      ]);
      servers.push(doomed, survivor);
      const key = 'crash-key';
      const started = doomed.started();
      const inFlight = pay(doomed, key).catch((error: unknown) => error);
      await started;
      doomed.child.kill('SIGKILL');
      expect(await inFlight).toBeInstanceOf(Error);
      await new Promise((resolve) => doomed.child.once('exit', resolve));
      // The dead process's transaction rolled back: its payment row never committed.
      expect(await executions(key)).toBe(0);
      // Its claim holds the key for the lease from `start` (a renewal before the kill, on the
      // same clock, set the same instant): 409 up to the last millisecond, then a fresh run.
      const during = await pay(survivor, key);
      expect(during.status).toBe(409);
      setClock(start + lease - 1);
      expect((await pay(survivor, key)).status).toBe(409);
      setClock(start + lease);
      const after = await pay(survivor, key);
      expect(after.status).toBe(201);
      expect(after.headers.get('Idempotent-Replayed')).toBeNull();
      expect((await pay(survivor, key)).headers.get('Idempotent-Replayed')).toBe('true');
      expect(await executions(key)).toBe(1);
    });
  },
);
