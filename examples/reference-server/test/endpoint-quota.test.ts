import { afterAll, beforeAll, expect, it } from 'vitest';
import { ACCOUNT, api, OTHER_ACCOUNT, startTestServer, type TestServer } from './webhooks-harness';

// CONTRACT section 11, "Quotas": at most 16 webhook endpoints per account and mode by default
// (HOLDFAST_MAX_ENDPOINTS); the next is 409 endpoint_limit_reached, under parallel creations too.

const KEYS = {
  test: 'hf_test_quotaAccountTestMode000000001',
  live: 'hf_live_quotaAccountLiveMode000000001',
  other: 'hf_test_quotaOtherAccount00000000001',
} as const;

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer({
    HOLDFAST_ROLE: 'api',
    HOLDFAST_API_KEYS: JSON.stringify([
      { key: KEYS.test, account: ACCOUNT, scopes: ['*'] },
      { key: KEYS.live, account: ACCOUNT, scopes: ['*'] },
      { key: KEYS.other, account: OTHER_ACCOUNT, scopes: ['*'] },
    ]),
  });
});

afterAll(async () => {
  await server?.close();
});

const create = (key: string) =>
  api(server.url, 'POST', '/v1/webhook-endpoints', {
    key,
    body: { url: 'https://93.184.216.34/hooks', eventTypes: ['order.created'] },
  });

async function count(key: string): Promise<number> {
  const list = await api(server.url, 'GET', '/v1/webhook-endpoints?include=total', { key });
  return list.body.pageInfo.totalCount;
}

it('allows 16 endpoints per account and mode; 20 parallel creations at 15 give exactly one 201', async () => {
  for (let i = 0; i < 15; i++) expect((await create(KEYS.test)).status).toBe(201);
  const answers = await Promise.all(Array.from({ length: 20 }, () => create(KEYS.test)));
  const statuses = answers.map((answer) => answer.status);
  expect(statuses.filter((status) => status === 201)).toHaveLength(1);
  expect(statuses.filter((status) => status === 409)).toHaveLength(19);
  const refused = answers.find((answer) => answer.status === 409);
  expect(refused?.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  expect(refused?.body).toMatchObject({
    code: 'endpoint_limit_reached',
    status: 409,
    type: expect.stringMatching(/\/problems\/endpoint_limit_reached$/),
  });
  expect(refused?.body.detail).toMatch(/16 webhook endpoints in test mode/);
  expect(await count(KEYS.test)).toBe(16);

  // Live mode and another account count apart.
  expect((await create(KEYS.live)).status).toBe(201);
  expect(await count(KEYS.live)).toBe(1);
  expect((await create(KEYS.other)).status).toBe(201);

  // A deleted endpoint frees its place.
  const list = await api(server.url, 'GET', '/v1/webhook-endpoints?limit=1', { key: KEYS.test });
  const id = list.body.data[0].id;
  expect((await api(server.url, 'DELETE', `/v1/webhook-endpoints/${id}`, { key: KEYS.test })).status).toBe(
    204,
  );
  expect((await create(KEYS.test)).status).toBe(201);
  expect((await create(KEYS.test)).status).toBe(409);
  expect(await count(KEYS.test)).toBe(16);
});

it('documents endpoint_limit_reached: a problem page and the 409 of the create operation', async () => {
  const page = await fetch(new URL('/problems/endpoint_limit_reached', server.url));
  expect(page.status).toBe(200);
  expect(await page.text()).toMatch(/HOLDFAST_MAX_ENDPOINTS/);
  const document = await api(server.url, 'GET', '/openapi.json', { key: null });
  const conflict = document.body.paths['/v1/webhook-endpoints'].post.responses['409'];
  expect(conflict.description).toMatch(/endpoint_limit_reached/);
});
