import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { hashKey, parseBearer } from '../src/index';
import { generateKey } from '../src/key';

describe('keys', () => {
  it('generates <prefix>_<mode>_ and 32 base64url characters, never the same twice', () => {
    const keys = new Set(Array.from({ length: 1000 }, () => generateKey('live')));
    expect(keys.size).toBe(1000);
    for (const key of keys) expect(key).toMatch(/^hf_live_[A-Za-z0-9_-]{32}$/);
    expect(generateKey('test', { prefix: 'acme' })).toMatch(/^acme_test_/);
  });

  it('hashes with SHA-256 (FIPS 180-4 vector for "abc")', () => {
    expect(hashKey('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  });

  it('parses Bearer credentials case-insensitively and refuses anything else', () => {
    expect(parseBearer('bearer hf_test_0123456789abcdef ')).toEqual({
      key: 'hf_test_0123456789abcdef',
      mode: 'test',
    });
    expect(parseBearer('Bearer hf_live_0123456789abcdef')?.mode).toBe('live');
    expect(parseBearer('Bearer hf_test_short')).toBeUndefined();
    expect(parseBearer('Bearer sk_test_0123456789abcdef')).toBeUndefined();
    expect(parseBearer('Basic hf_test_0123456789abcdef')).toBeUndefined();
    expect(parseBearer('Bearer a.b_test_0123456789abcdef', { prefix: 'a.b' })?.mode).toBe('test');
    expect(parseBearer('Bearer axb_test_0123456789abcdef', { prefix: 'a.b' })).toBeUndefined();
  });

  it('round-trips every generated key through parseBearer', () => {
    fc.assert(
      fc.property(fc.constantFrom('live' as const, 'test' as const), (mode) => {
        const key = generateKey(mode);
        expect(parseBearer(`Bearer ${key}`)).toEqual({ key, mode });
      }),
    );
  });
});
