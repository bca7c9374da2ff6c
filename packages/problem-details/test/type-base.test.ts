import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import { notFoundProblem, onProblem, problemTypeBase } from '../src/hono';
import { defineProblems, problem } from '../src/index';
import { DEFAULT_TYPE_BASE, problemType } from '../src/problem-error';

// Problem types belong to the adopter: by default relative (RFC 9457 section 3.1.1: a URI
// reference, resolved against the API's own URL), and one setting puts every code built with the
// default base (the shared catalogue and every package's) under the service's own base.

const BASE = 'https://api.example.com/problems/';
// A package's catalogue, as cursor-pagination or idempotency declare theirs (default base).
const packageProblems = defineProblems({ invalid_cursor: { status: 400, title: 'Invalid cursor' } });
// The adopter's own catalogue with its own absolute base: never rebased.
const ownProblems = defineProblems(
  { out_of_stock: { status: 409, title: 'Out of stock' } },
  { typeBase: 'https://other.example/errors/' },
);

function app(withBase: boolean): Hono {
  const hono = new Hono();
  if (withBase) hono.use(problemTypeBase(BASE));
  hono.onError(onProblem({ log: () => {} }));
  hono.get('/shared', () => {
    throw problem('forbidden');
  });
  hono.get('/package', () => {
    throw packageProblems.create('invalid_cursor');
  });
  hono.get('/own', () => {
    throw ownProblems.create('out_of_stock');
  });
  hono.notFound(notFoundProblem(hono));
  return hono;
}

describe('problem type URIs', () => {
  it('are relative by default, never under a domain the adopter does not own', async () => {
    expect(DEFAULT_TYPE_BASE).toBe('/problems/');
    const hono = app(false);
    for (const [path, code] of [
      ['/shared', 'forbidden'],
      ['/package', 'invalid_cursor'],
      ['/nowhere', 'not_found'],
    ] as const) {
      const body = await (await hono.request(path)).json();
      expect(body.type).toBe(`/problems/${code}`);
    }
  });

  it('follow problemTypeBase() for the shared and every package catalogue, and the 404 handler', async () => {
    const hono = app(true);
    for (const [path, code] of [
      ['/shared', 'forbidden'],
      ['/package', 'invalid_cursor'],
      ['/nowhere', 'not_found'],
    ] as const) {
      const body = await (await hono.request(path)).json();
      expect(body.type).toBe(`${BASE}${code}`);
    }
  });

  it('leave a catalogue with its own base as it is', async () => {
    const body = await (await app(true).request('/own')).json();
    expect(body.type).toBe('https://other.example/errors/out_of_stock');
  });

  it('follow typeBase of the context without Hono (a Fetch handler)', async () => {
    const response = packageProblems.create('invalid_cursor').toResponse({ typeBase: BASE });
    expect((await response.json()).type).toBe(`${BASE}invalid_cursor`);
    expect(problemType('/problems/x', undefined)).toBe('/problems/x');
    expect(problemType('https://other.example/x', BASE)).toBe('https://other.example/x');
  });

  it('refuse a base that is neither an absolute URI nor an absolute path', () => {
    expect(() => problemTypeBase('api.example.com/problems/')).toThrow(TypeError);
    expect(() => problemTypeBase('https://api.example.com/problems')).toThrow(TypeError);
    expect(() => defineProblems({ x: { status: 400, title: 'X' } }, { typeBase: 'problems/' })).toThrow(
      TypeError,
    );
    expect(() => defineProblems({ x: { status: 400, title: 'X' } }, { typeBase: '//evil.example/' })).toThrow(
      TypeError,
    );
  });
});
