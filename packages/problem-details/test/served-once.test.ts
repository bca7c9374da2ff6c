import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import { servedOnce } from '../src/hono';

describe('servedOnce', () => {
  it('builds once, serves the same bytes with a strong ETag, and 304 for a matching If-None-Match', async () => {
    let builds = 0;
    const app = new Hono();
    app.get(
      '/doc',
      servedOnce(() => {
        builds += 1;
        return JSON.stringify({ hello: 'wörld' });
      }, 'application/json'),
    );
    const first = await app.request('/doc');
    const etag = first.headers.get('ETag') ?? '';
    expect(first.status).toBe(200);
    expect(first.headers.get('Content-Type')).toBe('application/json');
    expect(first.headers.get('Cache-Control')).toBe('no-cache');
    expect(etag).toMatch(/^"[A-Za-z0-9_-]{43}"$/);
    expect(await first.text()).toBe('{"hello":"wörld"}');
    const second = await app.request('/doc');
    expect(second.headers.get('ETag')).toBe(etag);
    for (const header of [etag, `W/${etag}`, `"other", ${etag}`, '*']) {
      const cached = await app.request('/doc', { headers: { 'If-None-Match': header } });
      expect(cached.status, header).toBe(304);
      expect(await cached.text()).toBe('');
    }
    const stale = await app.request('/doc', { headers: { 'If-None-Match': '"other"' } });
    expect(stale.status).toBe(200);
    expect(builds).toBe(1);
  });

  it('takes its Cache-Control', async () => {
    const app = new Hono();
    app.get(
      '/page',
      servedOnce(() => '<p>x</p>', 'text/html; charset=UTF-8', 'public, max-age=60'),
    );
    expect((await app.request('/page')).headers.get('Cache-Control')).toBe('public, max-age=60');
  });
});
