import { ed25519 } from '@noble/curves/ed25519';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ed25519Signing as nobleEd25519 } from '../src/ed25519';
import { ed25519Signing as nodeEd25519 } from '../src/ed25519-node';
import { hmacSha256 as nobleHmac } from '../src/hmac';
import { hmacSha256 as nodeHmac } from '../src/hmac-node';
import { keyPairFactory } from '../src/key-pair';
import { signerFactory } from '../src/sign';

// Vectors of the Svix server's test `test_asymmetric_key_signing` in svix-webhooks
// `server/svix-server/src/worker.rs` (https://github.com/svix/svix-webhooks): Svix issues a
// 64-byte whsk_ key, the 32-byte seed followed by its public key.
const SVIX_SIGNING_KEY =
  'whsk_6Xb/dCcHpPea21PS1N9VY/NZW723CEc77N4rJCubMbfVKIDij2HKpMKkioLlX0dRqSKJp4AJ6p9lMicMFs6Kvg==';
const SVIX_PUBLIC_KEY = 'whpk_1SiA4o9hyqTCpIqC5V9HUakiiaeACeqfZTInDBbOir4=';
const SVIX_INPUT = {
  id: 'msg_p5jXN8AQM9LWM0D4loKWxJek',
  timestamp: 1614265330,
  body: '{"test": 2432232314}',
};
const SVIX_SIGNATURE =
  'v1a,hnO3f9T8Ytu9HwrXslvumlUpqtNVqkhqw/enGzPCXe5BdqzCInXqYXFymVJaA7AZdpXwVLPo3mNl8EM+m7TBAg==';

const b64 = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64');
const svixBytes = new Uint8Array(Buffer.from(SVIX_SIGNING_KEY.slice(5), 'base64'));
const svixSeed = `whsk_${b64(svixBytes.subarray(0, 32))}`;

describe.each([
  ['noble (portable build)', nobleHmac, nobleEd25519],
  ['node:crypto (node build)', nodeHmac, nodeEd25519],
])('whsk_ key forms on %s', (_name, hmac, ed) => {
  const createSigner = signerFactory(hmac, ed);
  const { publicKeyOf } = keyPairFactory(ed);

  it('the Svix vector: the 64-byte key and its 32-byte seed give exactly its signature', () => {
    expect(svixBytes).toHaveLength(64);
    expect(createSigner({ secrets: SVIX_SIGNING_KEY }).sign(SVIX_INPUT)).toBe(SVIX_SIGNATURE);
    expect(createSigner({ secrets: svixSeed }).sign(SVIX_INPUT)).toBe(SVIX_SIGNATURE);
    expect(publicKeyOf(SVIX_SIGNING_KEY)).toBe(SVIX_PUBLIC_KEY);
    expect(publicKeyOf(svixSeed)).toBe(SVIX_PUBLIC_KEY);
  });

  it('a 64-byte key whose public half is not the seed’s is refused, naming the entry', () => {
    const other = ed25519.getPublicKey(new Uint8Array(32).fill(1));
    const bad = `whsk_${b64(Uint8Array.of(...svixBytes.subarray(0, 32), ...other))}`;
    expect(() => createSigner({ secrets: bad })).toThrow(
      /^secrets is a 64-byte "whsk_" key whose last 32 bytes are not the public key of its first 32/,
    );
    expect(() => createSigner({ secrets: [svixSeed, bad] })).toThrow(/^secrets\[1\] is a 64-byte/);
    expect(() => publicKeyOf(bad)).toThrow(/^secretKey is a 64-byte/);
    // One flipped bit of the public half is enough.
    const flipped = Uint8Array.from(svixBytes);
    flipped[63] = (flipped[63] ?? 0) ^ 1;
    expect(() => createSigner({ secrets: `whsk_${b64(flipped)}` })).toThrow(TypeError);
  });

  it('other lengths are refused with both accepted lengths named', () => {
    for (const n of [31, 33, 48, 63, 65]) {
      expect(() => createSigner({ secrets: `whsk_${b64(new Uint8Array(n))}` })).toThrow(
        new RangeError(`secrets must decode to 32 bytes (the seed) or 64 (seed and public key), got ${n}`),
      );
    }
  });

  it('property: for any seed, the 32-byte and 64-byte forms sign identically', () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ minLength: 32, maxLength: 32 }),
        fc.oneof(fc.string({ maxLength: 200 }), fc.uint8Array({ maxLength: 200 })),
        (seed, body) => {
          const short = `whsk_${b64(seed)}`;
          const long = `whsk_${b64(Uint8Array.of(...seed, ...ed25519.getPublicKey(seed)))}`;
          const input = { id: 'msg_property', timestamp: 1_700_000_000, body };
          expect(createSigner({ secrets: long }).sign(input)).toBe(
            createSigner({ secrets: short }).sign(input),
          );
          expect(publicKeyOf(long)).toBe(publicKeyOf(short));
        },
      ),
      { numRuns: 100 },
    );
  });

  it('keys we generate stay 32 bytes', () => {
    const { generateKeyPair } = keyPairFactory(ed);
    const { secretKey, publicKey } = generateKeyPair();
    expect(Buffer.from(secretKey.slice(5), 'base64')).toHaveLength(32);
    expect(Buffer.from(publicKey.slice(5), 'base64')).toHaveLength(32);
  });
});
