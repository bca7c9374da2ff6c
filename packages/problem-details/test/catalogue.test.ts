import { describe, expect, it } from 'vitest';
import { holdfastDefinitions } from '../src/catalogue';
import { defineProblems, isProblemError, PROBLEM_MEDIA_TYPE, ProblemError, problem } from '../src/index';
import { DEFAULT_TYPE_BASE } from '../src/problem-error';

// The shared codes: general HTTP problems (packages and services declare their own beside them).
const contractCodes: ReadonlyArray<[string, number]> = [
  ['invalid_json', 400],
  ['validation_failed', 400],
  ['unknown_field', 400],
  ['unauthenticated', 401],
  ['forbidden', 403],
  ['not_found', 404],
  ['method_not_allowed', 405],
  ['invalid_state_transition', 409],
  ['version_conflict', 409],
  ['payload_too_large', 413],
  ['unsupported_media_type', 415],
  ['unprocessable', 422],
  ['rate_limited', 429],
  ['internal_error', 500],
  ['service_unavailable', 503],
];

describe('the shared catalogue', () => {
  it.each(contractCodes)('declares %s as %i', (code, status) => {
    expect(Object.hasOwn(holdfastDefinitions, code)).toBe(true);
    expect(holdfastDefinitions[code as keyof typeof holdfastDefinitions].status).toBe(status);
  });

  it('declares nothing beyond the shared codes', () => {
    expect(Object.keys(holdfastDefinitions).sort()).toEqual(contractCodes.map(([code]) => code).sort());
  });

  it('renders every member of CONTRACT section 2, with a type URI ending in the code', async () => {
    const error = problem('validation_failed', {
      detail: 'Unknown sort key "colour".',
      errors: [{ field: 'sort', code: 'invalid_sort', detail: 'Allowed: createdAt, total, status.' }],
    });
    const response = error.toResponse({ instance: '/v1/orders', requestId: 'req_abc' });
    expect(response.status).toBe(400);
    expect(response.headers.get('content-type')).toBe(PROBLEM_MEDIA_TYPE);
    expect(response.headers.get('request-id')).toBe('req_abc');
    expect(await response.json()).toEqual({
      type: `${DEFAULT_TYPE_BASE}validation_failed`,
      title: 'Request failed validation',
      status: 400,
      detail: 'Unknown sort key "colour".',
      instance: '/v1/orders',
      requestId: 'req_abc',
      code: 'validation_failed',
      errors: [{ field: 'sort', code: 'invalid_sort', detail: 'Allowed: createdAt, total, status.' }],
    });
  });

  it('always has a detail, defaulting to the title', () => {
    expect(problem('not_found').toJSON().detail).toBe('Not found.');
  });

  it.each([
    ['rate_limited', 429],
    ['service_unavailable', 503],
  ] as const)('%s always carries Retry-After', (code, status) => {
    const response = problem(code, { retryAfter: 2.2 }).toResponse();
    expect(response.status).toBe(status);
    expect(response.headers.get('retry-after')).toBe('3');
    const date = new Date('2026-11-22T16:30:19.123Z');
    expect(problem(code, { retryAfter: date }).toResponse().headers.get('retry-after')).toBe(
      date.toUTCString(),
    );
  });

  it('refuses to build 429 or 503 without retryAfter, at run time as at compile time', () => {
    // @ts-expect-error retryAfter is required for a 429 code
    expect(() => problem('rate_limited')).toThrow(/requires retryAfter/);
    // @ts-expect-error retryAfter is required for a 503 code
    expect(() => problem('service_unavailable', { detail: 'x' })).toThrow(/requires retryAfter/);
    expect(() => problem('rate_limited', { retryAfter: -1 })).toThrow(RangeError);
  });

  it('keeps extension members but never lets them override standard members', () => {
    const body = problem('unprocessable', {
      extensions: { refundable: 500, status: 200, code: 'ok', type: 'x' },
    }).toJSON();
    expect(body.refundable).toBe(500);
    expect(body.status).toBe(422);
    expect(body.code).toBe('unprocessable');
    expect(body.type).toBe(`${DEFAULT_TYPE_BASE}unprocessable`);
  });

  it('adds extra headers such as Allow and WWW-Authenticate', () => {
    const response = problem('unauthenticated', { headers: { 'WWW-Authenticate': 'Bearer' } }).toResponse();
    expect(response.headers.get('www-authenticate')).toBe('Bearer');
  });

  it('is an Error with its code, recognised by isProblemError', () => {
    const error = problem('forbidden', { cause: new Error('inner') });
    expect(error).toBeInstanceOf(Error);
    expect(error).toBeInstanceOf(ProblemError);
    expect(isProblemError(error)).toBe(true);
    expect(isProblemError(new Error('x'))).toBe(false);
    expect(isProblemError({ code: 'forbidden', status: 403 })).toBe(false);
    expect(error.cause).toBeInstanceOf(Error);
    expect(JSON.stringify(error.toJSON())).not.toContain('inner');
  });
});

describe('defineProblems', () => {
  const shop = defineProblems(
    {
      out_of_stock: { status: 409, title: 'Out of stock' },
      maintenance: { status: 503, title: 'Down for maintenance' },
    },
    { typeBase: 'https://api.example.com/problems/' },
  );

  it('gives typed constructors with type URIs under the declared base', () => {
    const error = shop.create('out_of_stock', { detail: 'Only 2 left.' });
    expect(error.code).toBe('out_of_stock');
    expect(error.type).toBe('https://api.example.com/problems/out_of_stock');
    expect(shop.typeUri('maintenance')).toBe('https://api.example.com/problems/maintenance');
    expect(shop.has('out_of_stock')).toBe(true);
    expect(shop.has('toString')).toBe(false);
    // @ts-expect-error not a declared code
    expect(() => shop.create('nope')).toThrow(/unknown problem code/);
    // @ts-expect-error 503 requires retryAfter
    expect(() => shop.create('maintenance')).toThrow(/requires retryAfter/);
  });

  it('refuses bad declarations', () => {
    expect(() => defineProblems({ Bad: { status: 400, title: 'x' } })).toThrow(/lower_snake_case/);
    expect(() => defineProblems({ ok: { status: 200, title: 'x' } })).toThrow(RangeError);
    expect(() => defineProblems({ ok: { status: 400, title: 'x' } }, { typeBase: 'relative/' })).toThrow(
      /absolute URI or path/,
    );
  });
});
