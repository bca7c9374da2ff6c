import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { fromUnknown, problem } from '../src/index';

// What a leaking 500 would reveal: a message, a stack, SQL, a host name, a library version.
const secret = fc.stringMatching(/^[A-Za-z0-9]{12,24}$/).map((s) => `S3CR3T${s}`);

const makers: ReadonlyArray<(s: string) => unknown> = [
  (s) => new Error(s),
  (s) => new TypeError(`select * from accounts where token = '${s}'`),
  (s) => Object.assign(new Error('db down'), { stack: `Error at ${s}.internal:5432 (postgres@3.4.7)` }),
  (s) => Object.assign(new Error(s), { code: s, status: 400, detail: s, hint: s }),
  (s) => new Error('wrapped', { cause: new Error(s) }),
  (s) => s,
  (s) => ({ message: s, toString: () => s }),
  (s) => ({ name: 'ProblemError', code: s, status: 400, message: s }),
];

describe('fromUnknown', () => {
  it('never shows anything of a thrown value in the response', async () => {
    await fc.assert(
      fc.asyncProperty(secret, fc.constantFrom(...makers), secret, async (leaked, make, requestId) => {
        const value = make(leaked);
        const response = fromUnknown(value).toResponse({ instance: '/v1/orders', requestId });
        const body = await response.text();
        expect(response.status).toBe(500);
        const parsed = JSON.parse(body);
        expect(parsed.code).toBe('internal_error');
        expect(Object.keys(parsed).sort()).toEqual(
          ['code', 'detail', 'instance', 'requestId', 'status', 'title', 'type'].sort(),
        );
        const withoutRequestId = body.replace(requestId, '');
        expect(withoutRequestId).not.toMatch(/S3CR3T/);
        expect(body).not.toContain(leaked);
        for (const [, headerValue] of response.headers) {
          if (headerValue !== requestId) expect(headerValue).not.toMatch(/S3CR3T/);
        }
      }),
      { numRuns: 300 },
    );
  });

  it('passes problems through unchanged', () => {
    const original = problem('version_conflict');
    expect(fromUnknown(original)).toBe(original);
  });
});
