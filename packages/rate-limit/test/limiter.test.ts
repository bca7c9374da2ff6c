import { isProblemError, ProblemError } from '@holdfast/problem-details';
import fc from 'fast-check';
import { Hono } from 'hono';
import { expect, it } from 'vitest';
import { rateLimit } from '../src/hono';
import { memoryStore, type RateLimitConfig, rateLimiter } from '../src/index';
import { MAX_BUCKETS } from '../src/memory-store';

// A token bucket per key; the refused request is 429 rate_limited with Retry-After and the IETF
// draft's RateLimit headers. Driven on a clock the test owns, so fast-check can try thousands of
// configurations and request timings.

function bucketApp(config: RateLimitConfig, clock: { now: number }) {
  const app = new Hono();
  app.onError((error) =>
    error instanceof ProblemError ? error.toResponse() : new Response(null, { status: 500 }),
  );
  const limiter = rateLimiter(config, { store: memoryStore({ now: () => clock.now }) });
  app.use(rateLimit(limiter, () => 'key_1'));
  app.get('/', (c) => c.text('ok'));
  return app;
}

function field(value: string | null, name: string): number {
  const match = value?.match(new RegExp(`;${name}=(\\d+)(?:;|$)`));
  if (!match?.[1]) throw new Error(`no ${name} in ${value}`);
  return Number(match[1]);
}

it('keeps RateLimit within its policy (r <= q, t <= w), admits no more than the bucket allows, and honours Retry-After', async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.record({
        limit: fc.integer({ min: 1, max: 500 }),
        windowMs: fc.integer({ min: 1, max: 120_000 }),
        burst: fc.integer({ min: 1, max: 50 }),
      }),
      fc.array(fc.nat({ max: 4_000 }), { minLength: 1, maxLength: 120 }),
      async (config, gaps) => {
        const clock = { now: 1_700_000_000_000 };
        const app = bucketApp(config, clock);
        const admitted: number[] = [];
        for (const gap of gaps) {
          clock.now += gap;
          const res = await app.request('/');
          const policy = res.headers.get('ratelimit-policy');
          const state = res.headers.get('ratelimit');
          const [q, w, r, t] = [field(policy, 'q'), field(policy, 'w'), field(state, 'r'), field(state, 't')];
          expect(q).toBe(config.burst);
          expect(w).toBeGreaterThanOrEqual(1);
          expect(r).toBeLessThanOrEqual(q);
          expect(t).toBeLessThanOrEqual(w);
          if (res.status === 200) {
            admitted.push(clock.now);
            continue;
          }
          expect(res.status).toBe(429);
          expect(r).toBe(0);
          const retryAfter = Number(res.headers.get('retry-after'));
          expect(retryAfter).toBeGreaterThanOrEqual(1);
          expect(t).toBe(retryAfter);
          // Waiting as told is enough.
          clock.now += retryAfter * 1000;
          expect((await app.request('/')).status).toBe(200);
          admitted.push(clock.now);
        }
        // A token bucket's guarantee: in any span, at most burst + refill.
        for (let i = 0; i < admitted.length; i++) {
          for (let j = i; j < admitted.length; j++) {
            const span = (admitted[j] ?? 0) - (admitted[i] ?? 0);
            const allowed = config.burst + (span * config.limit) / config.windowMs;
            expect(j - i + 1).toBeLessThanOrEqual(Math.floor(allowed + 1e-6));
          }
        }
      },
    ),
    { numRuns: 300 },
  );
});

it('admits a full burst at one instant, then refuses', async () => {
  const clock = { now: 0 };
  const app = bucketApp({ limit: 100, windowMs: 1000, burst: 200 }, clock);
  const statuses = [];
  for (let i = 0; i < 201; i++) statuses.push((await app.request('/')).status);
  expect(statuses.filter((s) => s === 200)).toHaveLength(200);
  expect(statuses.at(-1)).toBe(429);
});

it('names the subject and the policy in the 429, and counts each refusal', async () => {
  let refusals = 0;
  const limiter = rateLimiter(
    { limit: 3, windowMs: 10_000, burst: 3 },
    { store: memoryStore({ now: () => 0 }), subject: 'This receiver', onRefuse: () => refusals++ },
  );
  for (let i = 0; i < 3; i++) await limiter.take('a');
  const error = await limiter.take('a').catch((e: unknown) => e);
  expect(isProblemError(error) && error.status).toBe(429);
  expect(isProblemError(error) && error.detail).toBe('This receiver may make 3 requests per 10 s (burst 3).');
  await expect(limiter.check('a')).rejects.toThrow();
  await limiter.spend('a'); // an empty bucket: spend never throws
  await limiter.take('b'); // keys are independent
  expect(refusals).toBe(2);
});

it('check never takes a token; spend takes one without refusing', async () => {
  const limiter = rateLimiter(
    { limit: 1, windowMs: 1000, burst: 2 },
    { store: memoryStore({ now: () => 0 }) },
  );
  for (let i = 0; i < 10; i++) await limiter.check('k');
  await limiter.spend('k');
  await limiter.spend('k');
  await limiter.spend('k');
  await expect(limiter.check('k')).rejects.toThrow(/may make 1 requests per 1 s/);
});

it('keeps a bounded number of buckets however many keys a flood invents', () => {
  const store = memoryStore({ now: () => 0 });
  for (let i = 0; i < 36_000; i++)
    store.consume(`10.${i >> 16}.${(i >> 8) & 255}.${i & 255}`, { burst: 1, perMs: 0.001 }, true);
  expect(store.size).toBe(MAX_BUCKETS);
  // The least recently used went; the latest stays (and is still empty).
  expect(store.consume('10.0.140.159', { burst: 1, perMs: 0.001 }, false).admitted).toBe(false);
  expect(store.consume('10.0.0.0', { burst: 1, perMs: 0.001 }, false).admitted).toBe(true);
});

it('refuses a configuration that is not positive, naming the field', () => {
  expect(() => rateLimiter({ limit: 0, windowMs: 1000, burst: 1 })).toThrow(/limit/);
  expect(() => rateLimiter({ limit: 1, windowMs: Number.NaN, burst: 1 })).toThrow(/windowMs/);
  expect(() => memoryStore({ maxBuckets: 0 })).toThrow(/maxBuckets/);
});
