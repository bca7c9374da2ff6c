import { afterAll, beforeAll, expect, it } from 'vitest';
import { call, startTestServer, type TestServer } from './api-harness';

// Issue 19: a developer registering a local receiver learns the flag from the 422 itself and
// from its /problems page; production answers never invite it.

let dev: TestServer;
let production: TestServer;
beforeAll(async () => {
  [dev, production] = await Promise.all([
    startTestServer(),
    startTestServer({ NODE_ENV: 'production', HOLDFAST_CURSOR_SECRET: 'x'.repeat(32) }),
  ]);
});
afterAll(async () => {
  await Promise.all([dev?.stop(), production?.stop()]);
});

const register = (t: TestServer, url: string) =>
  call(t.url, 'POST', '/v1/webhook-endpoints', { body: { url } });

it('names HOLDFAST_ALLOW_PRIVATE_DESTINATIONS=1 in the 422 for a loopback, private or local host outside production', async () => {
  for (const url of [
    'http://127.0.0.1:4000/hooks',
    'http://localhost:4000/hooks',
    'http://10.1.2.3/hooks',
    'http://[::1]/x',
  ]) {
    const answer = await register(dev, url);
    expect(answer.status, url).toBe(422);
    expect(answer.body.code).toBe('destination_url_forbidden');
    expect(String(answer.body.detail), url).toContain('HOLDFAST_ALLOW_PRIVATE_DESTINATIONS=1');
    expect(answer.body.errors?.[0]?.field).toBe('url');
  }
  // Not for what the flag would not fix.
  const ftp = await register(dev, 'ftp://hooks.example.com/in');
  expect(ftp.status).toBe(422);
  expect(String(ftp.body.detail)).not.toContain('HOLDFAST_ALLOW_PRIVATE_DESTINATIONS');
});

it('never names the flag in production mode', async () => {
  const answer = await register(production, 'https://127.0.0.1/hooks');
  expect(answer.status).toBe(422);
  expect(String(answer.body.detail)).not.toContain('HOLDFAST_ALLOW_PRIVATE_DESTINATIONS');
});

it('says "not a public address" and never names the range, in either mode', async () => {
  for (const [t, url] of [
    [dev, 'http://127.0.0.1:4000/hooks'],
    [dev, 'http://10.1.2.3/hooks'],
    [dev, 'http://[fe80::1]/x'],
    [production, 'https://127.0.0.1/hooks'],
    [production, 'https://169.254.169.254/latest'],
    [production, 'https://[fd00::1]/x'],
  ] as const) {
    const answer = await register(t, url);
    expect(answer.status, url).toBe(422);
    expect(String(answer.body.detail), url).toContain('not a public address');
    expect(String(answer.body.errors?.[0]?.detail), url).toBe('the host is not a public address');
    expect(JSON.stringify(answer.body), url).not.toMatch(
      /loopback range|private range|linkLocal|uniqueLocal|range/,
    );
  }
});

it('documents the flag on /problems/destination_url_forbidden', async () => {
  const page = await (await fetch(`${dev.url}/problems/destination_url_forbidden`)).text();
  expect(page).toContain('HOLDFAST_ALLOW_PRIVATE_DESTINATIONS=1');
});
