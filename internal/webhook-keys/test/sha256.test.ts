import { createHash, createHmac } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { hmacSha256 as nobleHmac } from '../src/hmac';
import { hmacSha256, sha256 } from '../src/sha256';

const hex = (bytes: Uint8Array) => Buffer.from(bytes).toString('hex');
const nodeHmac = (key: Uint8Array, prefix: string, body: string | Uint8Array) =>
  createHmac('sha256', key).update(prefix).update(body).digest('hex');

describe('the compact SHA-256 and HMAC-SHA256', () => {
  it('gives the FIPS 180-4 examples', () => {
    const text = (s: string) => new TextEncoder().encode(s);
    expect(hex(sha256(text('abc')))).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    expect(hex(sha256(new Uint8Array(0)))).toBe(
      'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
    );
    expect(hex(sha256(text('abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq')))).toBe(
      '248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1',
    );
  });

  it('equals node:crypto at every length around the block and padding edges', () => {
    const data = Uint8Array.from({ length: 300 }, (_, i) => (i * 131 + 7) & 255);
    for (let length = 0; length <= 300; length += 1) {
      const part = data.subarray(0, length);
      expect(hex(sha256(part)), `length ${length}`).toBe(createHash('sha256').update(part).digest('hex'));
    }
  });

  it('reads a view at its own offset, not its buffer from 0', () => {
    const buffer = Uint8Array.from({ length: 200 }, (_, i) => i);
    const view = buffer.subarray(37, 170);
    expect(hex(sha256(view))).toBe(createHash('sha256').update(view).digest('hex'));
  });

  it('property: HMAC equals node:crypto (and @noble/hashes) for any key, prefix and body', () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ minLength: 1, maxLength: 150 }),
        fc.string({ maxLength: 80, unit: 'grapheme' }),
        fc.oneof(fc.uint8Array({ maxLength: 400 }), fc.string({ maxLength: 200, unit: 'grapheme' })),
        (key, prefix, body) => {
          const ours = hex(hmacSha256(key)(prefix, body));
          expect(ours).toBe(nodeHmac(key, prefix, body));
          expect(ours).toBe(hex(nobleHmac(key)(prefix, body)));
        },
      ),
      { numRuns: 500 },
    );
  });

  it('keeps each key’s state: one prepared key, many messages, in any order', () => {
    const a = hmacSha256(new Uint8Array(32).fill(1));
    const b = hmacSha256(new Uint8Array(100).fill(2));
    for (const body of ['x', 'y'.repeat(64), 'z'.repeat(200)]) {
      expect(hex(a('p.', body))).toBe(nodeHmac(new Uint8Array(32).fill(1), 'p.', body));
      expect(hex(b('p.', body))).toBe(nodeHmac(new Uint8Array(100).fill(2), 'p.', body));
    }
  });
});
