import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { fromUnknown, problem } from '../src/index';

// What a leaking 500 would reveal: a message, a stack, SQL, a host name, a library version.
const secret = fc.stringMatching(/^[A-Za-z0-9]{12,24}$/).map((s) => `S3CR3T${s}`);
// Request ids are never secrets: with the same prefix, fast-check's bias towards equal values
// made the id contain the secret (the body rightly carries the id), a false failure.
const requestIds = fc.stringMatching(/^[A-Za-z0-9_-]{16,24}$/).map((s) => `req_${s}`);

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
      fc.asyncProperty(secret, fc.constantFrom(...makers), requestIds, async (leaked, make, requestId) => {
        const value = make(leaked);
        const response = fromUnknown(value).toResponse({ instance: '/v1/orders', requestId });
        const body = await response.text();
        expect(response.status).toBe(500);
        const parsed = JSON.parse(body);
        expect(parsed.code).toBe('internal_error');
        expect(Object.keys(parsed).sort()).toEqual(
          ['code', 'detail', 'instance', 'requestId', 'status', 'title', 'type'].sort(),
        );
        expect(parsed.requestId).toBe(requestId);
        expect(body).not.toMatch(/S3CR3T/);
        for (const [, headerValue] of response.headers) expect(headerValue).not.toMatch(/S3CR3T/);
      }),
      { numRuns: 300 },
    );
    // 300 runs take about 0.2 s alone, more beside the whole suite on two cores.
  }, 30_000);

  it('passes problems through unchanged', () => {
    const original = problem('version_conflict');
    expect(fromUnknown(original)).toBe(original);
  });
});
