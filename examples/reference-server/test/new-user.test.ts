import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Webhook } from 'standardwebhooks';
import { afterAll, expect, it } from 'vitest';
import { type Child, startCommand } from './process-harness';

// Issue 19, "Must show": a new user's path, automated. The root README's start command on a
// fresh data directory; the printed demo key; a local endpoint registered by following only what
// the 422 says; a delivery that verifies with the endpoint's secret.

const repoRoot = fileURLToPath(new URL('../../..', import.meta.url));
let server: Child | undefined;
let dir = '';
const received: { headers: Record<string, string>; body: string }[] = [];
const receiver = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(req.headers)) if (typeof v === 'string') headers[k] = v;
    received.push({ headers, body: Buffer.concat(chunks).toString('utf8') });
    res.writeHead(204).end();
  });
});

afterAll(async () => {
  await server?.stop();
  await new Promise<void>((resolve) => receiver.close(() => resolve()));
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** The environment of someone typing the README's command: no test settings. */
function userEnv(extra: Record<string, string>): Record<string, string | undefined> {
  const env: Record<string, string | undefined> = {
    ...process.env,
    PORT: '0',
    HOLDFAST_DATA_DIR: dir,
    ...extra,
  };
  for (const name of ['NODE_ENV', 'DATABASE_URL', 'VITEST', 'HOLDFAST_API_KEYS']) delete env[name];
  return env;
}

it('npm start, the printed key, a local endpoint after reading the 422, a verified delivery', async () => {
  dir = await mkdtemp(join(tmpdir(), 'holdfast-new-user-'));
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', () => resolve()));
  const hookUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/webhooks`;

  // The README's start command (after npm ci): `npm start`.
  server = await startCommand('npm', ['start'], { cwd: repoRoot, env: userEnv({}) });
  const banner = server.output.join('');
  const key = /save it now:\s+(hf_test_[A-Za-z0-9_-]+)/.exec(banner)?.[1];
  expect(key, banner).toBeDefined();
  // A fresh database gets the demo data set, its endpoints on the built-in receiver: the one
  // loopback destination a plain start allows.
  expect(banner).toContain('Demo data: 4 orders, 4 payments, a refund and a subscription');
  expect(banner).toContain('3 webhook endpoints on the built-in receiver');
  const call = (base: string, method: string, path: string, body?: unknown) =>
    fetch(`${base}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${key}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });

  // Registering the local receiver is refused; the answer says what to do.
  const refused = await call(server.url ?? '', 'POST', '/v1/webhook-endpoints', { url: hookUrl });
  expect(refused.status).toBe(422);
  const problem = (await refused.json()) as { code: string; detail: string };
  expect(problem.code).toBe('destination_url_forbidden');
  const advice = /start the server with (HOLDFAST_[A-Z_]+)=(\S+?) /.exec(problem.detail);
  expect(advice, problem.detail).not.toBeNull();
  const [, variable = '', value = ''] = advice ?? [];

  // Do as told: restart with that variable, same data directory (the key is kept).
  await server.stop();
  server = await startCommand('npm', ['start'], { cwd: repoRoot, env: userEnv({ [variable]: value }) });
  expect(server.output.join('')).toContain(`WARNING: ${variable}=${value}`);
  const base = server.url ?? '';
  const created = await call(base, 'POST', '/v1/webhook-endpoints', {
    url: hookUrl,
    eventTypes: ['order.created'],
  });
  expect(created.status).toBe(201);
  const { secret } = (await created.json()) as { secret: string };
  const order = await call(base, 'POST', '/v1/orders', {
    currency: 'EUR',
    total: 1999,
    description: 'first order',
  });
  expect(order.status).toBe(201);
  const { id } = (await order.json()) as { id: string };

  const deadline = Date.now() + 30_000;
  while (received.length === 0 && Date.now() < deadline)
    await new Promise((resolve) => setTimeout(resolve, 100));
  expect(received).toHaveLength(1);
  const [delivery] = received;
  // Standard Webhooks verification with the secret the API gave, as a receiver would do it.
  const event = new Webhook(secret).verify(delivery?.body ?? '', delivery?.headers ?? {}) as {
    type: string;
    data: { object: { id: string } };
  };
  expect(event.type).toBe('order.created');
  expect(event.data.object.id).toBe(id);
}, 240_000);
