import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { MAX_ECHO_LENGTH, MAX_ERRORS } from '../src/bounds';
import { clipEcho, clipPointer, fromZodError, problem } from '../src/index';

// CONTRACT section 11, "Bounded answers": at most 20 entries in errors, detail saying how many
// more there were, and client input echoed at most 100 characters long, however hostile the input.

const isWellFormed = (text: string) =>
  !/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(text);

/** Every string a problem document carries that could echo input. */
function echoes(document: ReturnType<ReturnType<typeof problem>['toJSON']>) {
  return (document.errors ?? []).flatMap((entry) => [entry.field, entry.pointer ?? '']);
}

describe('clipEcho', () => {
  it('property: at most 100 code units, a prefix of the input marked with …, never splitting a pair', () => {
    const text = fc.string({
      unit: fc.constantFrom('a', '€', '\u{1F600}', '\uD800', '~', '/'),
      maxLength: 400,
    });
    fc.assert(
      fc.property(text, (input) => {
        const out = clipEcho(input);
        expect(out.length).toBeLessThanOrEqual(MAX_ECHO_LENGTH);
        if (input.length <= MAX_ECHO_LENGTH) {
          expect(out).toBe(input);
        } else {
          expect(out.endsWith('…')).toBe(true);
          expect(input.startsWith(out.slice(0, -1))).toBe(true);
          if (isWellFormed(input)) expect(isWellFormed(out)).toBe(true);
        }
      }),
    );
  });

  it('keeps a surrogate pair whole at the cut', () => {
    const out = clipEcho(`${'a'.repeat(98)}\u{1F600}tail`);
    expect(out).toBe(`${'a'.repeat(98)}…`);
  });

  it('never cuts a pointer inside a %XX escape', () => {
    const pointer = `#/${encodeURIComponent('€'.repeat(200))}`;
    const out = clipPointer(pointer);
    expect(out.length).toBeLessThanOrEqual(MAX_ECHO_LENGTH);
    expect(out.slice(0, -1)).toMatch(/^#\/(%[0-9A-F]{2})*$/);
  });
});

describe('problem()', () => {
  it('keeps the first 20 errors and says how many more there were', () => {
    const errors = Array.from({ length: 100_000 }, (_, i) => ({ field: `f${i}`, code: 'invalid' }));
    const refused = problem('validation_failed', { detail: 'Many fields are wrong.', errors });
    expect(refused.errors).toHaveLength(MAX_ERRORS);
    expect(refused.errors[0]?.field).toBe('f0');
    expect(refused.detail).toBe('Many fields are wrong. … and 99,980 more errors, not listed.');
  });

  it('cuts field and pointer to 100 characters', () => {
    const name = 'x'.repeat(1024 * 1024);
    const refused = problem('validation_failed', {
      errors: [{ field: name, pointer: `#/${name}`, code: 'invalid', detail: name }],
    });
    expect(JSON.stringify(refused.toJSON()).length).toBeLessThan(1500);
    for (const echoed of echoes(refused.toJSON())) expect(echoed.length).toBeLessThanOrEqual(MAX_ECHO_LENGTH);
  });
});

describe('fromZodError', () => {
  it('answers 100,000 unknown keys with 20 entries and the count of the rest, in a small document', () => {
    const body: Record<string, number> = { total: 1 };
    for (let i = 0; i < 100_000; i += 1) body[`k${i}`] = 0;
    const result = z.strictObject({ total: z.number() }).safeParse(body);
    if (result.success) throw new Error('expected failure');
    const refused = fromZodError(result.error);
    expect(refused.code).toBe('unknown_field');
    expect(refused.errors).toHaveLength(MAX_ERRORS);
    expect(refused.detail).toMatch(/^Unknown fields "k0", "k1", .*"k19" … and 99,980 more\.$/);
    expect(JSON.stringify(refused.toJSON()).length).toBeLessThan(5000);
  });

  it('echoes a 1 MiB field name at most 100 characters long, in field, pointer and detail', () => {
    const name = '\u{1F600}'.repeat(512 * 1024);
    const result = z.strictObject({}).safeParse({ [name]: 1 });
    if (result.success) throw new Error('expected failure');
    const document = fromZodError(result.error).toJSON();
    const [entry] = document.errors ?? [];
    expect(entry?.field.length).toBeLessThanOrEqual(MAX_ECHO_LENGTH);
    expect(entry?.pointer?.length).toBeLessThanOrEqual(MAX_ECHO_LENGTH);
    expect(isWellFormed(entry?.field ?? '')).toBe(true);
    expect(JSON.stringify(document).length).toBeLessThan(1500);
  });

  it('counts every issue in detail when there are more than 20', () => {
    const result = z.array(z.string()).safeParse(Array.from({ length: 25 }, () => 1));
    if (result.success) throw new Error('expected failure');
    const refused = fromZodError(result.error);
    expect(refused.errors).toHaveLength(MAX_ERRORS);
    expect(refused.detail).toBe('25 fields failed validation: the first 20 are listed … and 5 more.');
  });

  it('property: any mix of issues, keys and locations gives at most 20 entries, echoes of at most 100, and the right count', () => {
    const key = fc.oneof(
      fc.string({ maxLength: 8 }),
      fc.string({
        unit: fc.constantFrom('x', '/', '~', '\u{1F600}', '\uDC00'),
        minLength: 90,
        maxLength: 400,
      }),
    );
    const issue = fc.oneof(
      fc.record({
        code: fc.constant('unrecognized_keys'),
        path: fc.array(key, { maxLength: 3 }),
        message: fc.constant('Unrecognized keys'),
        keys: fc.array(key, { maxLength: 60 }),
      }),
      fc.record({
        code: fc.constantFrom('invalid_type', 'too_big', 'custom'),
        path: fc.array(fc.oneof(key, fc.nat()), { maxLength: 3 }),
        message: fc.string({ maxLength: 2000 }),
      }),
    );
    const location = fc.constantFrom('body', 'query', 'path', 'header') as fc.Arbitrary<
      'body' | 'query' | 'path' | 'header'
    >;
    fc.assert(
      fc.property(fc.array(issue, { minLength: 1, maxLength: 40 }), location, (issues, where) => {
        const refused = fromZodError({ issues }, { location: where });
        const document = refused.toJSON();
        const total = issues.reduce((n, i) => n + ('keys' in i ? i.keys.length : 1), 0);
        expect(refused.errors.length).toBe(Math.min(total, MAX_ERRORS));
        for (const echoed of echoes(document)) expect(echoed.length).toBeLessThanOrEqual(MAX_ECHO_LENGTH);
        if (total > MAX_ERRORS) expect(refused.detail).toMatch(/more/);
        // 20 entries of bounded size: a few tens of kilobytes at most, whatever came in.
        expect(JSON.stringify(document).length).toBeLessThan(MAX_ERRORS * 1400 + 3000);
      }),
      { numRuns: 60 },
    );
  });
});
