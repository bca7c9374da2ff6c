import { describe, expect, it } from 'vitest';
import { testApp } from './fixtures/app';

const post = (app: ReturnType<typeof testApp>, body: unknown, key?: string) =>
  app.request('/v1/emails', {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', ...(key === undefined ? {} : { 'Idempotency-Key': key }) },
    body: JSON.stringify(body),
  });

describe('idempotency(): the plain Hono middleware', () => {
  it('replays the stored answer with Idempotent-Replayed and its own Request-Id', async () => {
    const app = testApp(undefined);
    const first = await post(app, { amount: 1 }, 'k1');
    expect(first.status).toBe(202);
    const again = await post(app, { amount: 1 }, '"k1"');
    expect(again.status).toBe(202);
    expect(again.headers.get('Idempotent-Replayed')).toBe('true');
    expect(again.headers.get('Location')).toBe(first.headers.get('Location'));
    expect(again.headers.get('Request-Id')).toMatch(/^req_/);
    expect(again.headers.get('Request-Id')).not.toBe(first.headers.get('Request-Id'));
    expect(await again.json()).toEqual(await first.json());
  });

  it('renders 422 and 400 as problems with the request id', async () => {
    const app = testApp(undefined);
    await post(app, { amount: 1 }, 'k1');
    const changed = await post(app, { amount: 2 }, 'k1');
    expect(changed.status).toBe(422);
    expect(changed.headers.get('Content-Type')).toBe('application/problem+json');
    const problem = await changed.json();
    expect(problem).toMatchObject({ code: 'idempotency_key_reused', instance: '/v1/emails' });
    expect(problem.requestId).toBe(changed.headers.get('Request-Id'));
    const bad = await post(app, { amount: 1 }, 'x'.repeat(256));
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({
      code: 'validation_failed',
      errors: [{ field: 'Idempotency-Key' }],
    });
  });

  it('stores a problem the route throws; the replay carries the new request id in body and header', async () => {
    const app = testApp(undefined);
    const first = await post(app, { amount: 422 }, 'k-problem');
    expect(first.status).toBe(422);
    const firstBody = await first.json();
    const again = await post(app, { amount: 422 }, 'k-problem');
    expect(again.status).toBe(422);
    expect(again.headers.get('Idempotent-Replayed')).toBe('true');
    expect(again.headers.get('Content-Type')).toBe('application/problem+json');
    const body = await again.json();
    expect(body).toEqual({ ...firstBody, requestId: again.headers.get('Request-Id') });
    expect(body.requestId).not.toBe(firstBody.requestId);
  });

  it('fingerprints an empty body as no body', async () => {
    const app = testApp(undefined);
    const empty = () =>
      app.request('/v1/emails', { method: 'POST', headers: { 'Idempotency-Key': 'k-empty' } });
    expect((await empty()).status).toBe(202);
    expect((await empty()).headers.get('Idempotent-Replayed')).toBe('true');
    expect((await post(app, {}, 'k-empty')).status).toBe(422);
  });

  it('runs keyless requests every time, and releases the key after a 5xx or a crash', async () => {
    const app = testApp(undefined);
    const a = await (await post(app, { amount: 1 })).json();
    const b = await (await post(app, { amount: 1 })).json();
    expect(b.sent).toBe(a.sent + 1);
    expect((await post(app, { amount: 500 }, 'k5')).status).toBe(500);
    expect((await post(app, { amount: 500 }, 'k5')).headers.get('Idempotent-Replayed')).toBeNull();
    const crash = await post(app, { amount: -1 }, 'k6');
    expect(crash.status).toBe(500);
    expect(await crash.json()).toMatchObject({ code: 'internal_error' });
    expect((await post(app, { amount: -1 }, 'k6')).headers.get('Idempotent-Replayed')).toBeNull();
  });
});
