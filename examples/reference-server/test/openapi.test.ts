import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from './api-harness';

// Issue 8: /openapi.json declares every path of the contract, the sort parameter with its
// allowed keys and problem+json errors, and passes Spectral's spectral:oas with no errors and
// the OWASP API ruleset with every waived rule justified (.spectral.yaml and the README).

const run = promisify(execFile);
const serverDir = fileURLToPath(new URL('..', import.meta.url));
// The installed CLI itself: `npx` would start npm first to find it.
const spectral = fileURLToPath(new URL('../../../node_modules/.bin/spectral', import.meta.url));
let server: TestServer;
let document: {
  paths: Record<
    string,
    Record<
      string,
      {
        parameters?: { name: string; in: string; schema?: Record<string, unknown> }[];
        responses: Record<string, { content?: Record<string, unknown> }>;
      }
    >
  >;
};

beforeAll(async () => {
  server = await startTestServer();
  document = await (await fetch(`${server.url}/openapi.json`)).json();
});
afterAll(async () => {
  await server?.stop();
});

// CONTRACT section 5, method and path of every endpoint.
const CONTRACT: ReadonlyArray<[string, string]> = [
  ['get', '/v1/orders'],
  ['post', '/v1/orders'],
  ['get', '/v1/orders/{id}'],
  ['patch', '/v1/orders/{id}'],
  ['delete', '/v1/orders/{id}'],
  ['post', '/v1/orders/{id}/cancel'],
  ['get', '/v1/orders/{id}/refunds'],
  ['post', '/v1/orders/{id}/refunds'],
  ['get', '/v1/payments'],
  ['post', '/v1/payments'],
  ['get', '/v1/payments/{id}'],
  ['get', '/v1/payment-methods'],
  ['post', '/v1/payment-methods'],
  ['get', '/v1/payment-methods/{id}'],
  ['delete', '/v1/payment-methods/{id}'],
  ['get', '/v1/subscriptions'],
  ['post', '/v1/subscriptions'],
  ['get', '/v1/subscriptions/{id}'],
  ['patch', '/v1/subscriptions/{id}'],
  ['post', '/v1/subscriptions/{id}/cancel'],
  ['get', '/v1/webhook-endpoints'],
  ['post', '/v1/webhook-endpoints'],
  ['get', '/v1/webhook-endpoints/{id}'],
  ['patch', '/v1/webhook-endpoints/{id}'],
  ['delete', '/v1/webhook-endpoints/{id}'],
  ['post', '/v1/webhook-endpoints/{id}/rotate-secret'],
  ['get', '/v1/events'],
  ['get', '/v1/events/{id}'],
  ['get', '/v1/deliveries'],
  ['get', '/v1/deliveries/{id}'],
  ['get', '/v1/deliveries/{id}/attempts'],
  ['post', '/v1/deliveries/{id}/replay'],
  ['get', '/v1/notifications'],
  ['get', '/v1/inbound-events'],
  ['post', '/hooks/{name}'],
];

describe('/openapi.json', () => {
  it.each(CONTRACT)('declares %s %s with problem+json errors', (method, path) => {
    const operation = document.paths[path]?.[method];
    expect(operation, `${method} ${path}`).toBeDefined();
    const errors = Object.entries(operation?.responses ?? {}).filter(([status]) => Number(status) >= 400);
    expect(errors.length).toBeGreaterThan(0);
    for (const [, response] of errors)
      expect(Object.keys(response.content ?? {})).toEqual(['application/problem+json']);
  });

  it('declares the sort parameter of orders with its allowed keys and default', () => {
    const sort = document.paths['/v1/orders']?.get?.parameters?.find(
      (p) => p.name === 'sort' && p.in === 'query',
    );
    expect(sort).toBeDefined();
    const text = JSON.stringify(sort);
    for (const key of ['createdAt', 'total', 'status', '-createdAt']) expect(text).toContain(key);
  });

  it("passes Spectral's spectral:oas and the OWASP ruleset (waivers in .spectral.yaml) with no errors", async () => {
    const dir = await mkdtemp(join(tmpdir(), 'holdfast-openapi-'));
    try {
      const file = join(dir, 'openapi.json');
      await writeFile(file, JSON.stringify(document));
      const result = await run(
        spectral,
        [
          'lint',
          file,
          '--ruleset',
          '.spectral.yaml',
          '--format',
          'json',
          '--fail-severity',
          'error',
          '--quiet',
        ],
        { cwd: serverDir, maxBuffer: 64 * 1024 * 1024 },
      ).catch((error: { stdout?: string; stderr?: string }) => ({
        stdout: error.stdout ?? '',
        stderr: error.stderr ?? '',
      }));
      const start = result.stdout.indexOf('[');
      const findings: { code: string; severity: number; message: string; path: string[] }[] =
        start >= 0 ? JSON.parse(result.stdout.slice(start)) : [];
      const errors = findings
        .filter((f) => f.severity === 0)
        .map((f) => `${f.code} at ${f.path.join('.')}: ${f.message}`);
      expect(start, result.stderr).toBeGreaterThanOrEqual(0);
      expect(errors).toEqual([]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
    // Spectral over the whole document takes over a minute on the shared 2-core machine.
  }, 180_000);
});
