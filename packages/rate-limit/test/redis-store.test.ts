import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { isProblemError } from '@holdfast/problem-details';
import Redis from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { memoryStore, rateLimiter } from '../src/index';
import { redisStore } from '../src/redis';

// Real Redis: the machine's (127.0.0.1:6379, started by .ci/run) for sharing, and a private
// redis-server child for the outage, so stopping it never disturbs anyone else.

const REDIS_URL = process.env.HOLDFAST_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const options = { enableOfflineQueue: false, maxRetriesPerRequest: 0, lazyConnect: true } as const;

async function connected(url: string): Promise<Redis> {
  const client = new Redis(url, options);
  client.on('error', () => {});
  await client.connect();
  return client;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() =>
        typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port')),
      );
    });
  });
}

describe('redisStore', () => {
  const clients: Redis[] = [];
  const prefix = `test:${Math.random().toString(36).slice(2)}:`;
  beforeAll(async () => {
    clients.push(await connected(REDIS_URL), await connected(REDIS_URL));
  });
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.quit()));
  });

  // A refill of 5 an hour: nothing refills while a test runs, whatever the machine's speed, so
  // the counts are exact. One bucket shared by both limiters admits its burst once; two
  // buckets (one per key here, as two processes without Redis would have) admit it twice. The
  // Redis timeout is raised: a slow answer must not be replaced by a fallback bucket's.
  const hourly = { limit: 5, windowMs: 3_600_000, burst: 5 };

  /** 40 takes of `keys[i % 2]`, alternating between the two connections, all at once. */
  async function burst(keys: readonly [string, string]): Promise<string[]> {
    const [a, b] = clients;
    if (!a || !b) throw new Error('clients');
    const limiters = [a, b].map((client) =>
      rateLimiter(hourly, { store: redisStore(client, { prefix, timeoutMs: 60_000 }) }),
    );
    return Promise.all(
      Array.from({ length: 40 }, (_, i) => {
        const limiter = limiters[i % 2];
        if (!limiter) throw new Error('limiter');
        return limiter.take(keys[i % 2] ?? keys[0]).then(
          () => 'admitted',
          (error: unknown) => (isProblemError(error) && error.status === 429 ? 'refused' : 'error'),
        );
      }),
    );
  }

  it('two limiters on two connections share one bucket: its burst in all, not twice that', async () => {
    const outcomes = await burst(['key_shared', 'key_shared']);
    expect(outcomes).not.toContain('error');
    expect(outcomes.filter((o) => o === 'admitted')).toHaveLength(5);
    // Once the bucket is empty it stays empty for both connections.
    const [a] = clients;
    if (!a) throw new Error('client');
    const after = await redisStore(a, { prefix }).consume(
      'key_shared',
      { burst: 5, perMs: 5 / 3_600_000 },
      false,
    );
    expect(after.admitted).toBe(false);
  });

  it('two buckets (two keys) admit their burst each: the count above is one bucket, not a slow machine', async () => {
    const outcomes = await burst(['key_one', 'key_two']);
    expect(outcomes).not.toContain('error');
    expect(outcomes.filter((o) => o === 'admitted')).toHaveLength(10);
  });

  it('loads the script again when Redis has forgotten it (NOSCRIPT)', async () => {
    const [a] = clients;
    if (!a) throw new Error('client');
    await a.script('FLUSH');
    const store = redisStore(a, { prefix });
    const state = await store.consume('key_flushed', { burst: 2, perMs: 0.001 }, true);
    expect(state).toEqual({ admitted: true, tokens: 1 });
    expect(store.degraded).toBe(false);
  });

  it('expires a bucket once it would be full again', async () => {
    const [a] = clients;
    if (!a) throw new Error('client');
    // One token taken at 0.00001 per ms: full again in 100,000 ms; the key lives that plus 1 s.
    await redisStore(a, { prefix }).consume('key_ttl', { burst: 10, perMs: 0.000_01 }, true);
    const ttl = await a.pttl(`${prefix}key_ttl`);
    expect(ttl).toBeLessThanOrEqual(100_000 + 1000);
    // Not a fixed second: the refill sets it (only a test running for 100 s could see less).
    expect(ttl).toBeGreaterThan(1000);
  });

  it("fails open to this process's own bucket while Redis is down, and shares again once it is back", async () => {
    const port = await freePort();
    const start = () =>
      spawn('redis-server', ['--port', String(port), '--save', '', '--appendonly', 'no'], {
        stdio: 'ignore',
      });
    let server = start();
    const client = new Redis(`redis://127.0.0.1:${port}`, {
      ...options,
      lazyConnect: false,
      retryStrategy: () => 50,
    });
    client.on('error', () => {});
    const errors: unknown[] = [];
    try {
      await new Promise<void>((resolve) => client.once('ready', () => resolve()));
      const fallback = memoryStore();
      const store = redisStore(client, { prefix, fallback, onError: (e) => errors.push(e) });
      const limiter = rateLimiter({ limit: 1, windowMs: 60_000, burst: 3 }, { store });
      for (let i = 0; i < 2; i++) await limiter.take('k');
      expect(store.degraded).toBe(false);
      server.kill('SIGKILL');
      await new Promise((resolve) => server.once('exit', resolve));
      // Down: answered by the fallback, which has a full bucket of its own (never unlimited).
      const down = [];
      for (let i = 0; i < 5; i++)
        down.push(
          await limiter.take('k').then(
            () => 200,
            (e: unknown) => (isProblemError(e) ? e.status : 500),
          ),
        );
      expect(down).toEqual([200, 200, 200, 429, 429]);
      expect(store.degraded).toBe(true);
      expect(errors.length).toBeGreaterThan(0);
      server = start();
      await new Promise<void>((resolve) => client.once('ready', () => resolve()));
      // Back: a fresh Redis (nothing saved) with a full bucket, shared again.
      await limiter.take('k');
      expect(store.degraded).toBe(false);
    } finally {
      client.disconnect();
      server.kill('SIGKILL');
    }
  });
});
