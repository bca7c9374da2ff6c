import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import { holdfastDefinitions } from '../src/catalogue';
import { noneMatch } from '../src/fixed-document';
import { onProblem, problemPages } from '../src/hono';

/** A problem-pages app whose layout counts the pages it renders. */
function pages() {
  const rendered: string[] = [];
  const app = new Hono();
  app.onError(onProblem());
  app.route(
    '/problems',
    problemPages({
      definitions: holdfastDefinitions,
      advice: { not_found: 'Nothing is here.', forbidden: 'Wrong scope.' },
      layout: (title, body) => {
        rendered.push(title);
        return `<!doctype html><title>${title}</title>${body}`;
      },
    }),
  );
  return { app, rendered };
}

describe('problemPages caching', () => {
  it('renders each page once and serves it with a strong ETag from its bytes', async () => {
    const { app, rendered } = pages();
    const first = await app.request('/problems/not_found');
    const second = await app.request('/problems/not_found');
    expect(first.status).toBe(200);
    const etag = first.headers.get('ETag');
    expect(etag).toMatch(/^"[A-Za-z0-9_-]{43}"$/);
    expect(second.headers.get('ETag')).toBe(etag);
    expect(await second.text()).toBe(await first.text());
    expect(first.headers.get('Content-Type')).toBe('text/html; charset=UTF-8');
    expect(first.headers.get('Cache-Control')).toBe('public, max-age=3600');
    const index = await app.request('/problems');
    expect(index.headers.get('ETag')).not.toBe(etag);
    await app.request('/problems');
    expect(rendered).toEqual(['not_found', 'Problem types']);
  });

  it('answers 304 without a body when If-None-Match names the page', async () => {
    const { app } = pages();
    const etag = (await app.request('/problems/forbidden')).headers.get('ETag') ?? '';
    for (const header of [etag, `W/${etag}`, `"other", ${etag}`, '*']) {
      const again = await app.request('/problems/forbidden', { headers: { 'If-None-Match': header } });
      expect(again.status).toBe(304);
      expect(again.headers.get('ETag')).toBe(etag);
      expect(again.headers.get('Content-Type')).toBeNull();
      expect(await again.text()).toBe('');
    }
    const other = await app.request('/problems/forbidden', { headers: { 'If-None-Match': '"other"' } });
    expect(other.status).toBe(200);
  });

  it('keeps an unknown code a 404 problem, uncached', async () => {
    const { app, rendered } = pages();
    const missing = await app.request('/problems/nope', { headers: { 'If-None-Match': '*' } });
    expect(missing.status).toBe(404);
    expect(missing.headers.get('ETag')).toBeNull();
    expect(rendered).toEqual([]);
  });

  it('compares If-None-Match weakly, member by member', () => {
    expect(noneMatch(undefined, '"a"')).toBe(false);
    expect(noneMatch('"a"', '"a"')).toBe(true);
    expect(noneMatch(' W/"a" ', '"a"')).toBe(true);
    expect(noneMatch('"b", "a"', '"a"')).toBe(true);
    expect(noneMatch('"ab"', '"a"')).toBe(false);
    expect(noneMatch('a', '"a"')).toBe(false);
  });
});
