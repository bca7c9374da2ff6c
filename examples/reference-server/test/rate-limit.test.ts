import { afterAll, beforeAll, expect, it } from 'vitest';
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

// The bucket's properties (fast-check on a test clock) are tested in packages/rate-limit.
