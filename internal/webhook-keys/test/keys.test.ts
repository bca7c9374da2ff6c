import { describe, expect, it } from 'vitest';
import {
  decodeSecret,
  ED25519_SPKI_PREFIX,
  encodeBase64,
  generateSecret,
  MIN_SECRET_BYTES,
  parseSigningKey,
  parseVerifyingKey,
} from '../src/index';

const b64 = (n: number, fill = 7) => encodeBase64(new Uint8Array(n).fill(fill));

describe('secrets and keys', () => {
  it('generates whsec_ secrets of 32 random bytes', () => {
    const secret = generateSecret();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(decodeSecret(secret)).toHaveLength(32);
    expect(generateSecret()).not.toBe(secret);
  });

  it('reads whsec_ secrets with or without the prefix, at least 24 bytes', () => {
    expect(decodeSecret(`whsec_${b64(24)}`)).toHaveLength(MIN_SECRET_BYTES);
    expect(decodeSecret(b64(32))).toHaveLength(32);
    expect(() => decodeSecret(`whsec_${b64(23)}`, 'secrets[1]')).toThrow(/secrets\[1\].*24 bytes, got 23/);
    expect(() => decodeSecret('whsec_not base64!')).toThrow(TypeError);
  });

  it('signers take whsec_ and whsk_, never whpk_', () => {
    expect(parseSigningKey(`whsec_${b64(32)}`)).toMatchObject({ scheme: 'v1' });
    const seed = parseSigningKey(`whsk_${b64(32, 9)}`);
    expect(seed).toEqual({ scheme: 'v1a', seed: new Uint8Array(32).fill(9) });
    expect(() => parseSigningKey(`whpk_${b64(32)}`, 'secrets[0]')).toThrow(/secrets\[0\].*cannot sign/);
    expect(() => parseSigningKey(`whsk_${b64(31)}`)).toThrow(RangeError);
    expect(() => parseSigningKey(`whsk_${b64(33)}`)).toThrow(RangeError);
    // The 64-byte form: seed, then the public half the signer checks.
    const long = parseSigningKey(
      `whsk_${encodeBase64(Uint8Array.of(...new Uint8Array(32).fill(1), ...new Uint8Array(32).fill(2)))}`,
    );
    expect(long).toEqual({
      scheme: 'v1a',
      seed: new Uint8Array(32).fill(1),
      publicKey: new Uint8Array(32).fill(2),
    });
    expect(() => parseSigningKey(`whsk_${b64(64 + 1)}`)).toThrow(/32 bytes \(the seed\) or 64/);
    expect(() => parseSigningKey('whsk_!!')).toThrow(TypeError);
  });

  it('verifiers take whsec_ and whpk_, never whsk_', () => {
    expect(parseVerifyingKey(`whsec_${b64(32)}`)).toMatchObject({ scheme: 'v1' });
    expect(parseVerifyingKey(`whpk_${b64(32, 3)}`)).toEqual({
      scheme: 'v1a',
      publicKey: new Uint8Array(32).fill(3),
    });
    expect(() => parseVerifyingKey(`whsk_${b64(32)}`)).toThrow(/whpk_/);
    expect(() => parseVerifyingKey(`whpk_${b64(16)}`)).toThrow(RangeError);
    const der = Uint8Array.of(...ED25519_SPKI_PREFIX, ...new Uint8Array(32).fill(5));
    expect(parseVerifyingKey(`whpk_${encodeBase64(der)}`)).toEqual({
      scheme: 'v1a',
      publicKey: new Uint8Array(32).fill(5),
    });
    der[0] = 0x31;
    expect(() => parseVerifyingKey(`whpk_${encodeBase64(der)}`)).toThrow(
      /not an ed25519 SubjectPublicKeyInfo/,
    );
    expect(() => parseVerifyingKey(42 as unknown as string, 'secrets')).toThrow(/secrets must be a string/);
  });
});
