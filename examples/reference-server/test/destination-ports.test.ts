import { afterAll, beforeAll, expect, it } from 'vitest';
import { api, startTestServer, type TestServer } from './webhooks-harness';

// CONTRACT section 11, "Destinations": ports 80, 443 and 1024 to 65535 only, over HTTP, with
// private destinations allowed (the port rule holds all the same) and in production.

let server: TestServer;
let production: TestServer;

beforeAll(async () => {
  [server, production] = await Promise.all([
    startTestServer({ HOLDFAST_ROLE: 'api' }),
    startTestServer({
      HOLDFAST_ROLE: 'api',
      NODE_ENV: 'production',
      HOLDFAST_ALLOW_PRIVATE_DESTINATIONS: '',
      HOLDFAST_CURSOR_SECRET: 'x'.repeat(32),
    }),
  ]);
});

afterAll(async () => {
  await Promise.all([server?.close(), production?.close()]);
});

it('refuses other ports with 422 destination_url_forbidden naming the rule, on create and on PATCH', async () => {
  for (const [base, host] of [
    [server.url, 'http://127.0.0.1'],
    [production.url, 'https://93.184.216.34'],
  ] as const) {
    for (const port of [0, 1, 22, 25, 1023, 65536]) {
      const answer = await api(base, 'POST', '/v1/webhook-endpoints', {
        body: { url: `${host}:${port}/in`, eventTypes: ['order.created'] },
      });
      expect(answer.status, `${host}:${port}`).toBe(port === 65536 ? 400 : 422);
      if (port !== 65536) {
        expect(answer.body.code).toBe('destination_url_forbidden');
        expect(answer.body.errors[0].detail).toBe('only ports 80, 443 and 1024 to 65535 are allowed');
      }
    }
    const made = await api(base, 'POST', '/v1/webhook-endpoints', {
      body: { url: `${host}:5432/in`, eventTypes: ['order.created'] },
    });
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    for (const port of [80, 443, 1024, 65535]) {
      const moved = await api(base, 'PATCH', `/v1/webhook-endpoints/${made.body.id}`, {
        body: { url: `${host}:${port}/in` },
      });
      expect(moved.status, `${host}:${port}`).toBe(200);
    }
    const refused = await api(base, 'PATCH', `/v1/webhook-endpoints/${made.body.id}`, {
      body: { url: `${host}:1023/in` },
    });
    expect(refused.status).toBe(422);
    expect(refused.body.code).toBe('destination_url_forbidden');
    const kept = await api(base, 'GET', `/v1/webhook-endpoints/${made.body.id}`);
    expect(kept.body.url).toBe(`${host}:65535/in`);
  }
});
