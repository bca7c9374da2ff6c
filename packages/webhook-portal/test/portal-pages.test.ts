import type { AddressInfo } from 'node:net';
import { type ServerType, serve } from '@hono/node-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { portalPages } from '../src/index';

/** The portal's pages over real HTTP, beside a host route they must leave alone. */
let server: ServerType;
let base: string;

beforeAll(async () => {
  const pages = portalPages({
    basePath: '/portal',
    apiBase: '/api/webhooks',
    eventTypes: ['order.created', 'order.updated'],
  });
  const framed = portalPages({
    basePath: '/embedded',
    apiBase: 'https://api.example.com/webhooks',
    frameAncestors: ['https://app.example.com', "'self'"],
  });
  await new Promise<void>((resolve) => {
    server = serve(
      {
        fetch: async (request) =>
          (await pages(request)) ?? (await framed(request)) ?? new Response('the host', { status: 200 }),
        port: 0,
        hostname: '127.0.0.1',
      },
      () => resolve(),
    );
  });
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
});

const get = (path: string, init?: RequestInit) => fetch(`${base}${path}`, init);

describe('portalPages', () => {
  it('serves the shell with a strict policy that frames nowhere by default', async () => {
    const res = await get('/portal');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    const csp = res.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("connect-src 'self';");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).toContain("require-trusted-types-for 'script'");
    expect(csp).not.toContain('unsafe-inline');
    expect(res.headers.get('x-frame-options')).toBe('DENY');
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.headers.get('referrer-policy')).toBe('no-referrer');
    const html = await res.text();
    // No inline script or handler: every script has a src, the settings are attributes.
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
    expect(html).not.toMatch(/\sstyle=|\son[a-z]+=/i);
    expect(html).toContain('<script type="module" src="/portal/app.js"></script>');
    expect(html).toContain('<meta name="holdfast-api-base" content="/api/webhooks" />');
    expect(html).toContain('<meta name="holdfast-portal-base" content="/portal" />');
    expect(html).not.toContain('%BASE%');
  });

  it('lets the configured origins frame the page and connect to an API on another origin', async () => {
    const res = await get('/embedded');
    expect(res.status).toBe(200);
    const csp = res.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("frame-ancestors https://app.example.com 'self';");
    expect(csp).toContain("connect-src 'self' https://api.example.com;");
    // X-Frame-Options cannot name another origin: left out rather than contradicting the policy.
    expect(res.headers.get('x-frame-options')).toBeNull();
    expect(await res.text()).toContain('content="https://api.example.com/webhooks"');
  });

  it('refuses a frame ancestor or API base that could split the header', () => {
    for (const frameAncestors of [
      ['https://a.example; script-src *'],
      ['*'],
      ['https://a.example/path'],
      ["'unsafe-inline'"],
    ]) {
      expect(() => portalPages({ basePath: '/p', apiBase: '/v1', frameAncestors })).toThrow(TypeError);
    }
    expect(() => portalPages({ basePath: '/p', apiBase: '//evil.example' })).toThrow(TypeError);
    expect(() => portalPages({ basePath: 'p', apiBase: '/v1' })).toThrow(TypeError);
  });

  it('serves the scripts, stylesheet, icon and event types with their content types', async () => {
    const expected: Record<string, string> = {
      '/portal/app.js': 'text/javascript; charset=utf-8',
      '/portal/views/endpoints.js': 'text/javascript; charset=utf-8',
      '/portal/app.css': 'text/css; charset=utf-8',
      '/portal/favicon.svg': 'image/svg+xml; charset=utf-8',
      '/portal/event-types': 'application/json; charset=utf-8',
    };
    for (const [path, type] of Object.entries(expected)) {
      const res = await get(path);
      expect(res.status, path).toBe(200);
      expect(res.headers.get('content-type'), path).toBe(type);
      expect(res.headers.get('x-content-type-options'), path).toBe('nosniff');
      expect(res.headers.get('cache-control'), path).toBe('no-cache');
      expect(res.headers.get('content-security-policy'), path).toContain("default-src 'none'");
      const etag = res.headers.get('etag');
      await res.arrayBuffer();
      const again = await get(path, { headers: { 'If-None-Match': etag ?? '' } });
      expect(again.status, path).toBe(304);
    }
    expect(await (await get('/portal/event-types')).json()).toEqual({
      data: ['order.created', 'order.updated'],
    });
  });

  it('answers 404 for an unknown asset and 405 for a write, and leaves other paths to the host', async () => {
    for (const path of [
      '/portal/nope.js',
      '/portal/index.html',
      '/portal/tsconfig.json',
      '/portal/README.md',
    ]) {
      const res = await get(path);
      expect(res.status, path).toBe(404);
      expect(res.headers.get('content-type'), path).toMatch(/^application\/problem\+json/);
      await res.arrayBuffer();
    }
    const post = await get('/portal/app.js', { method: 'POST', body: '{}' });
    expect(post.status).toBe(405);
    expect(post.headers.get('allow')).toBe('GET, HEAD');
    await post.arrayBuffer();
    for (const path of ['/', '/portalx', '/other/app.js']) {
      const res = await get(path);
      expect(await res.text(), path).toBe('the host');
    }
  });

  it('serves no file outside its own, however the path is spelled', async () => {
    const pages = portalPages({ basePath: '/portal', apiBase: '/v1' });
    for (const path of [
      '/portal/%2e%2e/package.json',
      '/portal/..%2fpackage.json',
      '/portal/%2e%2e%2f%2e%2e%2fpackage.json',
      '/portal/views/..%2f..%2fsrc/index.ts',
      '/portal/..%5c..%5cpackage.json',
      '/portal//etc/passwd',
      '/portal/%00app.js',
    ]) {
      // Encoded dots that URL parsing resolves leave the portal's path: the host answers those.
      const res = await pages(new Request(`http://localhost${path}`));
      expect(res === undefined || res.status === 404, `${path}: ${res?.status}`).toBe(true);
    }
    for (const path of ['/portal/%2e%2e/%2e%2e/package.json', '/portal/..%2f..%2fpackage.json']) {
      const res = await get(path);
      const text = await res.text();
      expect(text, path).not.toContain('"name"');
      expect([404, 200], path).toContain(res.status);
      if (res.status === 200) expect(text, path).toBe('the host');
    }
  });
});
