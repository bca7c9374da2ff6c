import { ProblemError } from '@holdfast/problem-details';
import fc from 'fast-check';
import { Hono } from 'hono';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { RateLimitConfig } from '../src/config';
import type { AppEnv } from '../src/context';
import { rateLimit } from '../src/rate-limit';
import { call, startTestServer, type TestServer } from './api-harness';

// CONTRACT section 9: a token bucket per key; the refused request is 429 rate_limited with
// Retry-After and the IETF draft's RateLimit headers.

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer({ HOLDFAST_RATE_LIMIT: '3/10s' });
});
afterAll(async () => {
  await t?.stop();
});

it('answers 429 with Retry-After and RateLimit headers once the burst is spent', async () => {
  const answers = [];
  for (let i = 0; i < 4; i++) answers.push(await call(t.url, 'GET', '/v1/orders'));
  expect(answers.slice(0, 3).map((a) => a.status)).toEqual([200, 200, 200]);
  expect(answers[0]?.headers.get('ratelimit')).toMatch(/r=2/);
  expect(answers[0]?.headers.get('ratelimit-policy')).toBe('"default";q=3;w=10');
  const refused = answers[3];
  expect(refused?.status).toBe(429);
  expect(refused?.body.code).toBe('rate_limited');
  expect(Number(refused?.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
  expect(refused?.headers.get('ratelimit')).toMatch(/r=0/);
  expect(refused?.headers.get('request-id')).toMatch(/^req_/);
});

// The bucket itself, on a clock the test drives: no server, so fast-check can try thousands of
// configurations and request timings.
function bucketApp(config: RateLimitConfig, clock: { now: number }) {
  const app = new Hono<AppEnv>();
  app.onError((error) =>
    error instanceof ProblemError ? error.toResponse() : new Response(null, { status: 500 }),
  );
  app.use((c, next) => {
    c.set('principal', { keyId: 'key_1', account: 'acct_1', livemode: false, scopes: new Set(['*']) });
    return next();
  });
  app.use(rateLimit(config, () => clock.now));
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
