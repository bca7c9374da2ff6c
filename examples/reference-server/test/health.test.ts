import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../src/config';
import { startTestServer, type TestServer } from './api-harness';

// CONTRACT section 11, "Health": /livez is the process, /readyz the database and its migrations;
// neither needs a key nor touches a rate limit. A worker-only process serves both on
// HOLDFAST_HEALTH_PORT, since it has no API port.

async function get(
  url: string,
): Promise<{ status: number; headers: Headers; body: Record<string, unknown> }> {
  const response = await fetch(url);
  return { status: response.status, headers: response.headers, body: await response.json() };
}

describe('/livez and /readyz on the API port', () => {
  let t: TestServer;
  beforeAll(async () => {
    // One request per minute per key and per address: a probe that spent either would be 429.
    t = await startTestServer({ HOLDFAST_RATE_LIMIT: '1/60s', HOLDFAST_ADDRESS_RATE_LIMIT: '1/60s' });
  });
  afterAll(async () => {
    await t?.stop();
  });

  it('answer 200 without a key, as often as asked, with no RateLimit headers', async () => {
    for (let i = 0; i < 5; i++) {
      for (const path of ['/livez', '/readyz']) {
        const answer = await get(`${t.url}${path}`);
        expect(answer.status, path).toBe(200);
        expect(answer.body).toEqual({ status: 'ok' });
        expect(answer.headers.get('request-id')).toMatch(/^req_/);
        expect(answer.headers.get('ratelimit')).toBeNull();
      }
    }
  });

  it('/readyz is 503 with Retry-After while a migration of this build is not applied, /livez stays 200', async () => {
    const [last] = await t.server.workerDb.query<{ id: string }>(
      `delete from holdfast_migrations
       where id = (select id from holdfast_migrations order by applied_at desc, id desc limit 1)
       returning id`,
    );
    try {
      const answer = await get(`${t.url}/readyz`);
      expect(answer.status).toBe(503);
      expect(answer.headers.get('content-type')).toBe('application/problem+json');
      expect(answer.headers.get('retry-after')).toBe('5');
      expect(answer.body).toMatchObject({ code: 'service_unavailable', status: 503 });
      expect(answer.body.detail).toContain('1 migration(s) not applied');
      expect((await get(`${t.url}/livez`)).status).toBe(200);
    } finally {
      await t.server.workerDb.query('insert into holdfast_migrations (id) values ($1)', [last?.id ?? '']);
    }
    expect((await get(`${t.url}/readyz`)).status).toBe(200);
  });

  it('/readyz is 503 once the database is gone, /livez stays 200', async () => {
    await t.endDatabase();
    const answer = await get(`${t.url}/readyz`);
    expect(answer.status).toBe(503);
    expect(answer.headers.get('retry-after')).toBe('5');
    expect(answer.body).toMatchObject({ code: 'service_unavailable' });
    expect((await get(`${t.url}/livez`)).status).toBe(200);
  });
});

describe('a worker-only process', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer({ HOLDFAST_ROLE: 'worker', HOLDFAST_HEALTH_PORT: '0' });
  });
  afterAll(async () => {
    await t?.stop();
  });

  it('serves /livez and /readyz on HOLDFAST_HEALTH_PORT and nothing else, with no API port', async () => {
    expect(t.server.url).toBe('');
    const health = t.server.healthUrl ?? '';
    expect(health).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(await get(`${health}/livez`)).toMatchObject({ status: 200, body: { status: 'ok' } });
    expect(await get(`${health}/readyz`)).toMatchObject({ status: 200, body: { status: 'ok' } });
    const other = await get(`${health}/v1/orders`);
    expect(other.status).toBe(404);
    expect(other.body).toMatchObject({ code: 'not_found' });
  });
});

describe('configuration', () => {
  it('has documented defaults and refuses what cannot work', () => {
    expect(loadConfig({}).database).toEqual({
      statementTimeoutMs: 5000,
      lockTimeoutMs: 2000,
      apiPoolSize: 10,
      workerPoolSize: 10,
      healthPort: undefined,
    });
    expect(
      loadConfig({
        HOLDFAST_STATEMENT_TIMEOUT: '750ms',
        HOLDFAST_LOCK_TIMEOUT: '1s',
        HOLDFAST_API_POOL_SIZE: '4',
        HOLDFAST_WORKER_POOL_SIZE: '2',
        HOLDFAST_HEALTH_PORT: '9465',
      }).database,
    ).toEqual({
      statementTimeoutMs: 750,
      lockTimeoutMs: 1000,
      apiPoolSize: 4,
      workerPoolSize: 2,
      healthPort: 9465,
    });
    for (const env of [
      { HOLDFAST_STATEMENT_TIMEOUT: 'soon' },
      { HOLDFAST_LOCK_TIMEOUT: '-1s' },
      { HOLDFAST_API_POOL_SIZE: '0' },
      { HOLDFAST_WORKER_POOL_SIZE: '1.5' },
      { HOLDFAST_HEALTH_PORT: '70000' },
    ]) {
      expect(() => loadConfig(env), JSON.stringify(env)).toThrow(ConfigError);
    }
  });
});
