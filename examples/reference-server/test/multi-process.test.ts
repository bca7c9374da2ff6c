import { type ChildProcess, spawn } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { connect } from '@holdfast/pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ACCOUNT,
  API_KEYS,
  api,
  createStorage,
  eventually,
  type Receiver,
  realPostgres,
  startReceiver,
  type TestStorage,
} from './webhooks-harness';

// Two API processes and one worker process on one PostgreSQL (issue 8, "Must show"): each is a
// child process running the server's main with the API-only / worker-only flags. Idempotency
// and deliveries must hold across them.

const root = fileURLToPath(new URL('..', import.meta.url));
// server-core's config: HOLDFAST_ROLE=api|worker (or --api-only / --worker-only).
const ROLE_FLAGS = {
  api: { HOLDFAST_ROLE: 'api' },
  worker: { HOLDFAST_ROLE: 'worker' },
} as const;

// A receiver at /hooks/billing on both API processes, for the duplicate-delivery race.
const RECEIVER_SECRET = `whsec_${Buffer.from('holdfast-multi-process-secret-32').toString('base64')}`;
const RECEIVERS = JSON.stringify({ billing: { account: ACCOUNT, secrets: [RECEIVER_SECRET] } });

/** Signs like a Standard Webhooks sender, written independently of the packages. */
function signed(id: string, body: string): Record<string, string> {
  const at = Math.floor(Date.now() / 1000);
  const key = Buffer.from(RECEIVER_SECRET.slice('whsec_'.length), 'base64');
  const signature = `v1,${createHmac('sha256', key).update(`${id}.${at}.${body}`).digest('base64')}`;
  return {
    'content-type': 'application/json',
    'webhook-id': id,
    'webhook-timestamp': String(at),
    'webhook-signature': signature,
  };
}

interface Child {
  process: ChildProcess;
  url: string | undefined;
  output: string[];
  stop(): Promise<void>;
}

async function startChild(role: keyof typeof ROLE_FLAGS, env: Record<string, string>): Promise<Child> {
  const child = spawn(process.execPath, ['--import', 'tsx', '--conditions=@holdfast/source', 'src/main.ts'], {
    cwd: root,
    env: {
      ...process.env,
      PORT: '0',
      HOST: '127.0.0.1',
      NODE_ENV: 'test',
      HOLDFAST_API_KEYS: API_KEYS,
      HOLDFAST_RATE_LIMIT: '10000/1s',
      HOLDFAST_ALLOW_PRIVATE_DESTINATIONS: '1',
      ...ROLE_FLAGS[role],
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output: string[] = [];
  const result: Child = {
    process: child,
    url: undefined,
    output,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${role} did not start:\n${output.join('')}`)), 45_000);
    const onData = (chunk: Buffer) => {
      const text = chunk.toString('utf8');
      output.push(text);
      const listening = /listening on (http:\/\/\S+)/.exec(output.join(''));
      const working = /worker/i.test(text) && role === 'worker';
      if (listening || working) {
        result.url = listening?.[1];
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${role} exited with ${code}:\n${output.join('')}`));
    });
  });
  return result;
}

describe.skipIf(!realPostgres)(
  'two API processes and one worker process (needs DATABASE_URL: several processes on one PostgreSQL)',
  () => {
    let storage: TestStorage;
    let receiver: Receiver;
    const children: Child[] = [];
    let apiA: string;
    let apiB: string;

    beforeAll(async () => {
      receiver = await startReceiver();
      storage = await createStorage();
      // Started together on purpose: the migrations lock must keep them from racing.
      const apiEnv = { ...storage.env, HOLDFAST_RECEIVER_SECRETS: RECEIVERS };
      const started = await Promise.all([
        startChild('api', apiEnv),
        startChild('api', apiEnv),
        startChild('worker', { ...storage.env, HOLDFAST_RETRY_SCHEDULE: '1s,1s' }),
      ]);
      children.push(...started);
      const [a, b] = started;
      if (!a?.url || !b?.url) throw new Error('API processes gave no URL');
      apiA = a.url;
      apiB = b.url;
    }, 90_000);

    afterAll(async () => {
      await Promise.all(children.map((child) => child.stop()));
      await receiver?.close();
      await storage?.drop();
    });

    it('runs a request once when the same Idempotency-Key reaches both API processes', async () => {
      const key = `multi-${Date.now()}`;
      const body = { currency: 'EUR', total: 5100, description: 'idempotent across processes' };
      const headers = { 'idempotency-key': key };
      const [first, second] = await Promise.all([
        api(apiA, 'POST', '/v1/orders', { body, headers }),
        api(apiB, 'POST', '/v1/orders', { body, headers }),
      ]);
      const statuses = [first.status, second.status].sort();
      // Either the second waited for nothing (409 in use) or it got the stored answer replayed.
      expect([
        [201, 201],
        [201, 409],
      ]).toContainEqual(statuses);
      const replay = await eventually(async () => {
        const again = await api(apiB, 'POST', '/v1/orders', { body, headers });
        return again.status === 201 ? again : undefined;
      });
      expect(replay.headers.get('idempotent-replayed')).toBe('true');
      const created = [first, second].find(
        (r) => r.status === 201 && r.headers.get('idempotent-replayed') !== 'true',
      );
      expect(replay.body.id).toBe(created?.body.id);
      const list = await api(apiA, 'GET', '/v1/orders?limit=100');
      const matching = list.body.data.filter(
        (o: { description: string }) => o.description === body.description,
      );
      expect(matching).toHaveLength(1);
    });

    it('delivers events created through either API process from the worker process', async () => {
      const endpoint = await api(apiA, 'POST', '/v1/webhook-endpoints', {
        body: { url: receiver.url, eventTypes: ['order.created'] },
      });
      expect(endpoint.status).toBe(201);
      const orders = await Promise.all(
        Array.from({ length: 6 }, (_, i) =>
          api(i % 2 === 0 ? apiA : apiB, 'POST', '/v1/orders', { body: { currency: 'EUR', total: 100 + i } }),
        ),
      );
      for (const order of orders) expect(order.status).toBe(201);
      await eventually(
        async () =>
          orders.every((order) => receiver.received.some((r) => r.body.includes(order.body.id)))
            ? true
            : undefined,
        30_000,
        'every order.created to reach the receiver',
      );
      // The receiver sees a request before the worker records its 2xx, so the
      // succeeded count catches up a moment later; it must reach six and stop there.
      const succeeded = await eventually(
        async () => {
          const deliveries = await api(
            apiB,
            'GET',
            `/v1/deliveries?endpoint=${endpoint.body.id}&status=succeeded&limit=100`,
          );
          return deliveries.body.data.length >= 6 ? deliveries.body.data : undefined;
        },
        15_000,
        'six succeeded deliveries',
      );
      expect(succeeded).toHaveLength(6);
    });

    it('records a duplicate delivery racing across both API processes once, acknowledging both', async () => {
      if (!storage.databaseUrl) throw new Error('no database URL');
      const ids = Array.from({ length: 20 }, (_, i) => `msg_race_${Date.now()}_${i}`);
      const acks = await Promise.all(
        ids.map(async (id) => {
          const body = JSON.stringify({ id, type: 'order.updated', data: { object: { id: `ord_${id}` } } });
          const headers = signed(id, body);
          const answers = await Promise.all(
            [apiA, apiB].map(async (url) => {
              const response = await fetch(`${url}/hooks/billing`, { method: 'POST', headers, body });
              return { status: response.status, body: (await response.json()) as { duplicate: boolean } };
            }),
          );
          return answers;
        }),
      );
      for (const pair of acks) {
        expect(pair.map((answer) => answer.status)).toEqual([200, 200]);
        // Exactly one of the two was recorded; the other was told it is a duplicate.
        expect(pair.map((answer) => answer.body.duplicate).sort()).toEqual([false, true]);
      }
      const db = await connect({ databaseUrl: storage.databaseUrl, max: 1 });
      try {
        const rows = await db.sql<{ webhook_id: string; n: number }[]>`
          select webhook_id, count(*)::int as n from holdfast_webhook_inbox
          where webhook_id in ${db.sql(ids)} group by webhook_id`;
        expect(rows).toHaveLength(ids.length);
        for (const row of rows) expect(row.n).toBe(1);
      } finally {
        await db.close();
      }
    });

    it('SIGTERM on an API process: requests in flight finish with 201, then it exits 0', async () => {
      const apiProcess = children[1];
      if (!apiProcess || !storage.databaseUrl) throw new Error('no second API process');
      const db = await connect({ databaseUrl: storage.databaseUrl, max: 2 });
      try {
        const description = `in flight at SIGTERM ${Date.now()}`;
        let inFlight: Promise<{ status: number }[]> | undefined;
        await db.sql.begin(async (tx) => {
          // Held until after the signal: the orders' inserts wait for it inside their requests.
          await tx`lock table holdfast_orders in exclusive mode`;
          inFlight = Promise.all(
            Array.from({ length: 3 }, () =>
              api(apiB, 'POST', '/v1/orders', { body: { currency: 'EUR', total: 7, description } }),
            ),
          );
          await eventually(async () => {
            const [row] = await db.sql<{ waiting: number }[]>`
              select count(*)::int as waiting from pg_locks
              where relation = 'holdfast_orders'::regclass and not granted`;
            return row && row.waiting >= 3 ? true : undefined;
          });
          apiProcess.process.kill('SIGTERM');
          await new Promise((resolve) => setTimeout(resolve, 300));
          expect(apiProcess.process.exitCode).toBeNull();
        });
        const answers = await inFlight;
        expect(answers?.map((answer) => answer.status)).toEqual([201, 201, 201]);
        const code = await new Promise<number | null>((resolve) => {
          if (apiProcess.process.exitCode !== null) resolve(apiProcess.process.exitCode);
          else apiProcess.process.once('exit', (exitCode) => resolve(exitCode));
        });
        expect(code).toBe(0);
        const list = await api(apiA, 'GET', '/v1/orders?limit=100');
        const kept = list.body.data.filter((o: { description: string }) => o.description === description);
        expect(kept).toHaveLength(3);
      } finally {
        await db.close();
      }
    });
  },
);
