import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Child, startRedis, startServerProcess } from './process-harness';
import { API_KEYS, api, createStorage, KEYS, realPostgres, type TestStorage } from './webhooks-harness';

// Issue 19, "Must show": two API processes sharing PostgreSQL and Redis with
// HOLDFAST_RATE_LIMIT=5/1s admit at most burst + refill in all, not twice that; with Redis
// stopped, each process limits on its own (the README's fail-open rule), never a 5xx.

describe.skipIf(!realPostgres)(
  'rate limits shared through Redis (needs DATABASE_URL: two processes on one PostgreSQL)',
  () => {
    let storage: TestStorage;
    let redis: Awaited<ReturnType<typeof startRedis>>;
    const servers: Child[] = [];
    let urls: string[] = [];

    beforeAll(async () => {
      storage = await createStorage();
      redis = await startRedis();
      const env = {
        ...storage.env,
        HOLDFAST_API_KEYS: API_KEYS,
        HOLDFAST_RATE_LIMIT: '5/1s',
        HOLDFAST_REDIS_URL: redis.url,
        HOLDFAST_ROLE: 'api',
      };
      servers.push(...(await Promise.all([startServerProcess(env), startServerProcess(env)])));
      urls = servers.map((s) => s.url ?? '');
    }, 300_000);

    afterAll(async () => {
      await Promise.all(servers.map((s) => s.stop()));
      await redis?.stop('SIGKILL');
      await storage?.drop();
    });

    /** `n` requests with one key, alternating between the processes, all at once. */
    async function burst(n: number): Promise<{ statuses: number[]; seconds: number }> {
      const started = Date.now();
      const answers = await Promise.all(
        Array.from({ length: n }, (_, i) =>
          api(urls[i % urls.length] ?? '', 'GET', '/v1/webhook-endpoints', { key: KEYS.all }),
        ),
      );
      return { statuses: answers.map((a) => a.status), seconds: (Date.now() - started) / 1000 };
    }

    it('admits at most burst + refill across both processes', async () => {
      // Warm both processes (first requests compile routes), then let the bucket refill.
      await burst(2);
      await new Promise((resolve) => setTimeout(resolve, 1200));
      const { statuses, seconds } = await burst(40);
      console.log(
        `shared: ${statuses.filter((s) => s === 200).length} of 40 admitted in ${seconds.toFixed(2)} s`,
      );
      const admitted = statuses.filter((s) => s === 200).length;
      expect(statuses.every((s) => s === 200 || s === 429)).toBe(true);
      expect(admitted).toBeGreaterThanOrEqual(5);
      // One bucket: 5 + 5 per second elapsed. Two buckets would admit 10 at once.
      expect(admitted).toBeLessThanOrEqual(Math.floor(5 + 5 * seconds));
    });

    it('with Redis stopped, each process limits on its own (fail open to per-process limits), never a 5xx', async () => {
      await redis.stop('SIGKILL');
      await new Promise((resolve) => setTimeout(resolve, 1200)); // both buckets refill
      const { statuses, seconds } = await burst(40);
      const admitted = statuses.filter((s) => s === 200).length;
      console.log(`Redis down: ${admitted} of 40 admitted in ${seconds.toFixed(2)} s`);
      expect(statuses.filter((s) => s >= 500)).toEqual([]);
      expect(statuses.every((s) => s === 200 || s === 429)).toBe(true);
      // Still limited: each process's own bucket, so at most twice the shared limit, never all 40.
      expect(admitted).toBeGreaterThanOrEqual(5);
      expect(admitted).toBeLessThanOrEqual(2 * Math.floor(5 + 5 * seconds));
      expect(admitted).toBeLessThan(40);
    });
  },
);
