import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decodeBase64, decodeBase64Into, decodedLength, encodeBase64 } from '../src/index';

describe('base64 (RFC 4648 section 4)', () => {
  // RFC 4648 section 10 test vectors.
  it.each([
    ['', ''],
    ['f', 'Zg=='],
    ['fo', 'Zm8='],
    ['foo', 'Zm9v'],
    ['foob', 'Zm9vYg=='],
    ['fooba', 'Zm9vYmE='],
    ['foobar', 'Zm9vYmFy'],
  ])('encodes %j as %s and back', (plain, encoded) => {
    const bytes = new TextEncoder().encode(plain);
    expect(encodeBase64(bytes)).toBe(encoded);
    expect(decodeBase64(encoded)).toEqual(bytes);
  });

  it('property: encoding matches Buffer and decoding inverts it', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 200 }), (bytes) => {
        const encoded = encodeBase64(bytes);
        expect(encoded).toBe(Buffer.from(bytes).toString('base64'));
        expect(decodeBase64(encoded)).toEqual(bytes);
        expect(decodedLength(encoded)).toBe(bytes.length);
      }),
      { numRuns: 300 },
    );
  });

  it.each(['Zg', 'Zg=', 'Z===', 'Zm9v!', 'Zm9v\u00e9===', 'Zm 9v', 'Zm9vYg-_', '===='])(
    'never throws: %j is undefined',
    (text) => {
      expect(decodeBase64(text)).toBeUndefined();
    },
  );

  it('decodes into a buffer at an offset, refusing what does not fit', () => {
    const out = new Uint8Array(8);
    expect(decodeBase64Into('v1,Zm9v', 3, out, 2)).toBe(true);
    expect(Array.from(out.subarray(2, 5))).toEqual([102, 111, 111]);
    expect(decodeBase64Into('Zm9vYmFy', 0, out, 4)).toBe(false);
  });
});
