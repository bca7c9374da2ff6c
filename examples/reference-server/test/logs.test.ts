import { Writable } from 'node:stream';
import { requestId } from '@holdfast/request-guards/hono';
import { Hono } from 'hono';
import { expect, it } from 'vitest';
import type { AppEnv } from '../src/context';
import { observeRequests } from '../src/observability/http-observer';
import { createLogger } from '../src/observability/logger';

// Issue 19: one JSON line per request with requestId, route template, status, latency and
// account; never the key, a secret or the body. Pretty lines when stdout is a terminal.

const KEY = 'hf_test_logsSecretKey0000000000000001';

function capture(isTTY: boolean) {
  const lines: string[] = [];
  const out = Object.assign(
    new Writable({
      write(chunk, _encoding, done) {
        lines.push(...String(chunk).split('\n').filter(Boolean));
        done();
      },
    }),
    { isTTY },
  );
  return { out, lines };
}

function app(log: ReturnType<typeof createLogger>) {
  const app = new Hono<AppEnv>();
  app.use(requestId());
  app.use(observeRequests({ log }));
  app.use((c, next) => {
    c.set('principal', { keyId: 'key_1', account: 'acct_logs', livemode: false, scopes: new Set(['*']) });
    return next();
  });
  app.post('/v1/orders/:id', (c) => c.json({ ok: true }, 201));
  return app;
}

it('writes one JSON line per request, without the key or the body', async () => {
  const { out, lines } = capture(false);
  const log = createLogger({ HOLDFAST_LOG_LEVEL: 'info' }, out);
  const res = await app(log).request('/v1/orders/ord_123', {
    method: 'POST',
    headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
    body: JSON.stringify({ secret: 'card-4242' }),
  });
  expect(res.status).toBe(201);
  expect(lines).toHaveLength(1);
  const record = JSON.parse(lines[0] ?? '{}');
  expect(record).toMatchObject({
    level: 30,
    msg: 'request',
    requestId: res.headers.get('request-id'),
    method: 'POST',
    route: '/v1/orders/:id',
    status: 201,
    account: 'acct_logs',
  });
  expect(typeof record.latencyMs).toBe('number');
  expect(lines[0]).not.toContain(KEY);
  expect(lines[0]).not.toContain('card-4242');
  expect(lines[0]).not.toContain('ord_123');
});

it('pretty-prints for a terminal, and is silent under NODE_ENV=test unless asked', async () => {
  const tty = capture(true);
  await app(createLogger({ HOLDFAST_LOG_LEVEL: 'info' }, tty.out)).request('/v1/orders/ord_1', {
    method: 'POST',
  });
  expect(tty.lines[0]).toMatch(
    /^\d\d:\d\d:\d\d\.\d{3} INFO request requestId=req_\S+ method=POST route=\/v1\/orders\/:id status=201 latencyMs=/,
  );
  const quiet = capture(false);
  await app(createLogger({ NODE_ENV: 'test' }, quiet.out)).request('/v1/orders/ord_1', { method: 'POST' });
  expect(quiet.lines).toEqual([]);
});
