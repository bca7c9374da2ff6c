import { onProblem } from '@holdfast/problem-details/hono';
import fc from 'fast-check';
import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import { jsonShapeIssue } from '../src/shape';

const widerThan = (text: string, maxMembers: number) => {
  const issue = jsonShapeIssue(text, { maxMembers, maxDepth: 1000, maxValues: 1_000_000 });
  return issue?.reason === 'members' ? { pointer: issue.pointer, field: issue.field } : undefined;
};

import { jsonBody, refuseFields } from '../src/hono';

// The bounds every problem of @holdfast/problem-details keeps: at most 20 entries, echoes cut to 100.
const MAX_ERRORS = 20;
const MAX_ECHO_LENGTH = 100;

// CONTRACT section 11, "Bounded answers", for what jsonBody() and refuseFields() answer: an
// object over maxMembers is refused from the text before anything parses it, every answer has at
// most 20 errors, and echoed names are at most 100 characters, whatever the body.

const MiB = 1024 * 1024;

function app() {
  const app = new Hono();
  app.onError(onProblem({ log: () => {} }));
  app.use(jsonBody({ maxBytes: MiB }));
  app.post('/cancel', (c) => {
    refuseFields(c);
    return c.json({ ok: true });
  });
  return app;
}

const post = (body: string) =>
  app().request('/cancel', { method: 'POST', headers: { 'content-type': 'application/json' }, body });

interface Problem {
  code: string;
  detail: string;
  errors?: { field: string; pointer?: string; code: string }[];
}

async function bounded(response: Response): Promise<Problem> {
  const text = await response.text();
  // 20 entries of bounded size: a small answer whatever the body was.
  expect(text.length).toBeLessThan(8192);
  const document = JSON.parse(text) as Problem;
  expect((document.errors ?? []).length).toBeLessThanOrEqual(MAX_ERRORS);
  for (const entry of document.errors ?? []) {
    expect(entry.field.length).toBeLessThanOrEqual(MAX_ECHO_LENGTH);
    expect((entry.pointer ?? '').length).toBeLessThanOrEqual(MAX_ECHO_LENGTH);
  }
  return document;
}

/** The objects of a JSON value with more than `max` members (a reference walk of the parsed value). */
function anyWider(value: unknown, max: number): boolean {
  if (typeof value !== 'object' || value === null) return false;
  if (!Array.isArray(value) && Object.keys(value).length > max) return true;
  return Object.values(value).some((child) => anyWider(child, max));
}

function resolve(value: unknown, pointer: string): unknown {
  if (pointer === '#') return value;
  return pointer
    .slice(2)
    .split('/')
    .map((token) => decodeURIComponent(token).replaceAll('~1', '/').replaceAll('~0', '~'))
    .reduce<unknown>((at, key) => (at as Record<string, unknown>)[key], value);
}

describe('jsonShapeIssue', () => {
  it('property: finds an object over the bound exactly when there is one, and points at one', () => {
    const key = fc.string({
      unit: fc.constantFrom('a', 'b', '"', '\\', ':', ',', '{', '/', '~', '\u{1F600}'),
      maxLength: 4,
    });
    const json = fc.letrec((tie) => ({
      value: fc.oneof(
        { depthSize: 'small' },
        fc.constant(null),
        fc.integer(),
        key,
        fc.array(tie('value'), { maxLength: 6 }),
        fc.dictionary(key, tie('value'), { maxKeys: 8 }),
      ),
    })).value;
    fc.assert(
      fc.property(json, fc.integer({ min: 1, max: 6 }), fc.boolean(), (value, max, pretty) => {
        const text = JSON.stringify(value, null, pretty ? 2 : undefined);
        const found = widerThan(text, max);
        expect(found !== undefined).toBe(anyWider(value, max));
        if (found && !found.pointer.endsWith('…')) {
          const at = resolve(value, found.pointer);
          expect(Object.keys(at as object).length).toBeGreaterThan(max);
        }
      }),
      { numRuns: 300 },
    );
  });

  it('property: reports depth, value count or width exactly when the parsed value breaks one', () => {
    const json = fc.letrec((tie) => ({
      value: fc.oneof(
        { depthSize: 'medium' },
        fc.integer(),
        fc.string({ unit: fc.constantFrom('a', '[', '{', '"', ':', '\\'), maxLength: 3 }),
        fc.array(tie('value'), { maxLength: 4 }),
        fc.dictionary(fc.string({ maxLength: 2 }), tie('value'), { maxKeys: 4 }),
      ),
    })).value;
    // Depth of the value, and how many values it holds itself included.
    const measure = (value: unknown, depth = 1): { depth: number; values: number } => {
      if (typeof value !== 'object' || value === null) return { depth: 0, values: 1 };
      const children = Object.values(value).map((child) => measure(child, depth + 1));
      return {
        depth: Math.max(depth, ...children.map((c) => c.depth)),
        values: 1 + children.reduce((n, c) => n + c.values, 0),
      };
    };
    fc.assert(
      fc.property(
        json,
        fc.integer({ min: 1, max: 5 }),
        fc.integer({ min: 1, max: 16 }),
        fc.integer({ min: 1, max: 4 }),
        fc.boolean(),
        (value, maxDepth, maxValues, maxMembers, pretty) => {
          const text = JSON.stringify(value, null, pretty ? 1 : undefined);
          const issue = jsonShapeIssue(text, { maxMembers, maxDepth, maxValues });
          const { depth, values } = measure(value);
          const broken = depth > maxDepth || values > maxValues || anyWider(value, maxMembers);
          expect(issue !== undefined).toBe(broken);
          if (issue?.reason === 'depth') expect(depth).toBeGreaterThan(maxDepth);
          if (issue?.reason === 'values') expect(values).toBeGreaterThan(maxValues);
          if (issue?.reason === 'members') expect(anyWider(value, maxMembers)).toBe(true);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('names the object: #/metadata, (root), an array index', () => {
    expect(widerThan('{"a":1,"b":2}', 1)).toEqual({ pointer: '#', field: '(root)' });
    expect(widerThan('{"x":"{\\"q\\":1,","metadata":{"a":"1","b":"2","c":"3"}}', 2)).toEqual({
      pointer: '#/metadata',
      field: 'metadata',
    });
    expect(widerThan('[0,{"a":1},{"a":1,"b":2}]', 1)).toEqual({ pointer: '#/2', field: '2' });
  });
});

describe('jsonBody() and refuseFields() under hostile bodies', () => {
  it('refuses 100,000 fields before parsing them: one entry naming the object', async () => {
    const fields = Array.from({ length: 100_000 }, (_, i) => `"${i.toString(36)}":0`).join(',');
    const response = await post(`{${fields}}`);
    expect(response.status).toBe(400);
    const document = await bounded(response);
    expect(document.errors).toEqual([
      { field: '(root)', pointer: '#', code: 'too_many_members', detail: 'At most 1000 members.' },
    ]);
  });

  it('lists 20 of 900 unknown fields and says how many more', async () => {
    const body = Object.fromEntries(Array.from({ length: 900 }, (_, i) => [`f${i}`, 0]));
    const document = await bounded(await post(JSON.stringify(body)));
    expect(document.code).toBe('unknown_field');
    expect(document.errors).toHaveLength(20);
    expect(document.detail).toMatch(/… and 880 more\.$/);
  });

  it('echoes a 1 MiB field name at most 100 characters long', async () => {
    const document = await bounded(await post(JSON.stringify({ ['é'.repeat(MiB / 2 - 8)]: 1 })));
    expect(document.code).toBe('unknown_field');
    expect(document.detail.length).toBeLessThan(200);
  });

  it('refuses half a million nested arrays or small values before parsing them', async () => {
    const document = await bounded(await post(`{"a":${'['.repeat(MiB / 2 - 8)}${']'.repeat(MiB / 2 - 8)}}`));
    expect(document.detail).toMatch(/deeper than 64 levels/);
    const wide = await bounded(await post(`{"a":[${Array(500_000).fill('0').join(',')}]}`));
    expect(wide.detail).toMatch(/more than 10000 values/);
  });

  it('names a NUL in a 1 MiB key or a deep path within 100 characters', async () => {
    const key = `${'k'.repeat(MiB / 2)}\\u0000`;
    const document = await bounded(await post(`{"a":{"${key}":1}}`));
    expect(document.errors?.[0]?.code).toBe('invalid_characters');
  });

  it('property: any hostile body is answered within the bounds', async () => {
    const manyKeys = fc.integer({ min: 0, max: 3000 }).map((n) => {
      const body: Record<string, number> = {};
      for (let i = 0; i < n; i += 1) body[`k${i}`] = i;
      return JSON.stringify(body);
    });
    const longKey = fc
      .tuple(
        fc.constantFrom('x', '\u{1F600}', '\\u0000', '\\ud800', '/', '~'),
        fc.integer({ min: 50, max: 200_000 }),
      )
      .map(([unit, n]) => `{"${unit.repeat(n)}":1}`);
    const nested = fc
      .tuple(fc.integer({ min: 1, max: 200 }), fc.constantFrom('[', '{"a":'))
      .map(([depth, open]) => open.repeat(depth) + '1' + (open === '[' ? ']' : '}').repeat(depth));
    const arrays = fc
      .integer({ min: 0, max: 50_000 })
      .map((n) => `{"list":[${Array(n).fill('"\\ud800\\u0000"').join(',')}]}`);
    await fc.assert(
      fc.asyncProperty(fc.oneof(manyKeys, longKey, nested, arrays), async (body) => {
        const response = await post(body);
        expect(response.status).toBeLessThan(500);
        if (response.status >= 400) await bounded(response);
      }),
      { numRuns: 40 },
    );
  });
});
