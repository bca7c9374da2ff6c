import { expect, it } from 'vitest';
import { startTestServer } from './api-harness';

// SPEC section 7: 503 always carries Retry-After. When the database goes away under a running
// server, requests get 503 service_unavailable as problem+json, not a 500.
it('answers 503 with Retry-After when the database is unreachable', async () => {
  const key = 'hf_test_unavailableunavailable01';
  const t = await startTestServer({
    HOLDFAST_ROLE: 'api',
    HOLDFAST_API_KEYS: JSON.stringify([{ key, account: 'acct_u', scopes: ['*'] }]),
  });
  const { server } = t;
  try {
    const ok = await fetch(`${server.url}/v1/orders`, { headers: { authorization: `Bearer ${key}` } });
    expect(ok.status).toBe(200);
    await t.endDatabase();
    const down = await fetch(`${server.url}/v1/orders?limit=5`, {
      headers: { authorization: `Bearer ${key}` },
    });
    expect(down.status).toBe(503);
    expect(down.headers.get('retry-after')).toBe('5');
    expect(down.headers.get('content-type')).toBe('application/problem+json');
    const body = await down.json();
    expect(body).toMatchObject({ code: 'service_unavailable', status: 503 });
    expect(body.requestId).toBe(down.headers.get('request-id'));
  } finally {
    await t.stop().catch(() => {});
  }
});
