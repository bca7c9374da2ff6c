import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalJson } from '../src/fingerprint';
import { requestFingerprint } from '../src/index';

function shuffleKeys(value: unknown, seed: number): unknown {
  if (Array.isArray(value)) return value.map((item) => shuffleKeys(item, seed));
  if (typeof value !== 'object' || value === null) return value;
  const entries = Object.entries(value);
  const rotated = entries
    .slice(seed % (entries.length || 1))
    .concat(entries.slice(0, seed % (entries.length || 1)));
  return Object.fromEntries(rotated.reverse().map(([name, item]) => [name, shuffleKeys(item, seed + 1)]));
}

describe('canonicalJson and requestFingerprint', () => {
  // RFC 8785 section 3.2.3: members sorted by UTF-16 code units.
  it('sorts members by UTF-16 code units as RFC 8785 does', () => {
    expect(canonicalJson({ '\u20ac': 1, '\r': 2, '\ud83d\ude00': 3, '1': 4, '\u0080': 5, ö: 6 })).toBe(
      '{"\\r":2,"1":4,"\u0080":5,"ö":6,"\u20ac":1,"\ud83d\ude00":3}',
    );
    expect(canonicalJson({ b: [1, undefined, { d: null, c: -0 }], a: 1e21, z: undefined })).toBe(
      '{"a":1e+21,"b":[1,null,{"c":0,"d":null}]}',
    );
    expect(() => canonicalJson({ n: Number.NaN })).toThrow(TypeError);
  });

  it('property: key order and whitespace never change the fingerprint; any change of value does', async () => {
    await fc.assert(
      fc.asyncProperty(fc.jsonValue(), fc.nat(), async (body, seed) => {
        const reordered = JSON.parse(JSON.stringify(shuffleKeys(body, seed), null, 2));
        const base = { method: 'POST', path: '/v1/orders', account: 'acct_1' };
        expect(await requestFingerprint({ ...base, body: reordered })).toBe(
          await requestFingerprint({ ...base, body }),
        );
        expect(JSON.parse(canonicalJson(body))).toEqual(JSON.parse(JSON.stringify(body)));
        const other = await requestFingerprint({ ...base, body: [body] });
        expect(other).not.toBe(await requestFingerprint({ ...base, body }));
      }),
      { numRuns: 200 },
    );
  });

  it('property: is SHA-256 (hex) of [METHOD, path, account, 1, canonical body], so stored fingerprints stay valid', async () => {
    await fc.assert(
      fc.asyncProperty(fc.jsonValue(), fc.string(), async (body, path) => {
        const text = JSON.stringify(['POST', path, 'acct_1', 1, canonicalJson(body)]);
        expect(await requestFingerprint({ method: 'post', path, account: 'acct_1', body })).toBe(
          createHash('sha256').update(text).digest('hex'),
        );
      }),
      { numRuns: 200 },
    );
  });

  it('tells apart method, path, account and a missing body', async () => {
    const base = { method: 'POST', path: '/v1/orders', account: 'acct_1', body: null };
    const prints = await Promise.all([
      requestFingerprint(base),
      requestFingerprint({ ...base, method: 'PUT' }),
      requestFingerprint({ ...base, path: '/v1/orders/' }),
      requestFingerprint({ ...base, account: 'acct_2' }),
      requestFingerprint({ method: 'POST', path: '/v1/orders', account: 'acct_1' }),
    ]);
    expect(new Set(prints).size).toBe(prints.length);
    expect(await requestFingerprint({ ...base, method: 'post' })).toBe(prints[0]);
  });
});
