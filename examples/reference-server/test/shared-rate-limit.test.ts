import Redis from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Child, startRedis, startServerProcess } from './process-harness';
import { API_KEYS, api, createStorage, KEYS, realPostgres, type TestStorage } from './webhooks-harness';

// Issue 19, "Must show": two API processes sharing PostgreSQL and Redis admit one bucket's burst
// in all, not twice that; with Redis stopped, each process limits on its own (the README's
// fail-open rule), never a 5xx. The limit is 5 an hour: nothing refills while the test runs,
// however slow the machine, so the counts are exact (one bucket: 5; one per process: 10). Before
// counting, each process is seen to reach Redis (its token bucket script runs there), and the
// Redis timeout is raised so a slow answer is never replaced by a process's own bucket.

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
        HOLDFAST_RATE_LIMIT: '5/1h',
        HOLDFAST_REDIS_URL: redis.url,
        HOLDFAST_REDIS_TIMEOUT: '60s',
        HOLDFAST_ROLE: 'api',
      };
      servers.push(...(await Promise.all([startServerProcess(env), startServerProcess(env)])));
      urls = servers.map((s) => s.url ?? '');
      // Each process in turn, with another key, until Redis has run the script for it: then its
      // connection is up and the script loaded (a request before that answers from the process).
      const watcher = new Redis(redis.url, { lazyConnect: true, maxRetriesPerRequest: 0 });
      await watcher.connect();
      try {
        const scripts = async () => {
          const stats = String(await watcher.info('commandstats'));
          return [...stats.matchAll(/^cmdstat_eval(?:sha)?:calls=(\d+)/gm)].reduce(
            (sum, match) => sum + Number(match[1]),
            0,
          );
        };
        for (const url of urls) {
          for (let before = await scripts(); (await scripts()) === before; ) {
            await api(url, 'GET', '/v1/webhook-endpoints', { key: KEYS.other });
          }
        }
      } finally {
        watcher.disconnect();
      }
    }, 300_000);

    afterAll(async () => {
      await Promise.all(servers.map((s) => s.stop()));
      await redis?.stop('SIGKILL');
      await storage?.drop();
    });

    /** `n` requests with one key, alternating between the processes, all at once: their statuses. */
    async function burst(n: number): Promise<number[]> {
      const answers = await Promise.all(
        Array.from({ length: n }, (_, i) =>
          api(urls[i % urls.length] ?? '', 'GET', '/v1/webhook-endpoints', { key: KEYS.all }),
        ),
      );
      return answers.map((a) => a.status);
    }

    it('admits one burst across both processes, not one per process', async () => {
      const statuses = await burst(40);
      expect(statuses.filter((s) => s !== 200 && s !== 429)).toEqual([]);
      expect(statuses.filter((s) => s === 200)).toHaveLength(5);
      // Empty for both: the next request is refused whichever process takes it.
      expect((await burst(2)).every((s) => s === 429)).toBe(true);
    });

    it('with Redis stopped, each process limits on its own (fail open to per-process limits), never a 5xx', async () => {
      await redis.stop('SIGKILL');
      // Each process now answers from its own bucket, full since it was never used: 5 each.
      const statuses = await burst(40);
      expect(statuses.filter((s) => s >= 500)).toEqual([]);
      expect(statuses.filter((s) => s !== 200 && s !== 429)).toEqual([]);
      expect(statuses.filter((s) => s === 200)).toHaveLength(10);
      // And every process's own bucket is spent: limited, never unlimited.
      for (const url of urls) {
        expect((await api(url, 'GET', '/v1/webhook-endpoints', { key: KEYS.all })).status).toBe(429);
      }
    });
  },
);
