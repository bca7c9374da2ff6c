import { ed25519 } from '@noble/curves/ed25519';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ed25519Noble, ed25519Verify as webEd25519 } from '../src/ed25519';
import { ed25519Verify as nodeEd25519 } from '../src/ed25519-node';
import { hmacSha256 as portableHmac } from '../src/hmac';
import { hmacSha256 as nodeHmac } from '../src/hmac-node';
import { verifierFactory } from '../src/verify';
import { derPublicKey, SPKI_PREFIX, SVIX } from './runtimes/svix';

// whpk_ key forms against the vectors of the Svix server's test `test_asymmetric_key_signing` in
// svix-webhooks `server/svix-server/src/worker.rs` (see runtimes/svix.ts): the raw 32-byte key and
// its DER SubjectPublicKeyInfo (RFC 8410 section 4), as Java's PublicKey.getEncoded() writes it.
const b64 = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64');
const T = SVIX.timestamp;
const headers = (id: string, signature: string) => ({
  'webhook-id': id,
  'webhook-timestamp': String(T),
  'webhook-signature': signature,
});

describe.each([
  ['WebCrypto (portable build)', portableHmac, webEd25519],
  ['@noble/curves (portable fallback)', portableHmac, ed25519Noble],
  ['node:crypto (node build)', nodeHmac, nodeEd25519],
])('whpk_ key forms on %s', (_name, hmac, ed) => {
  const createVerifier = verifierFactory(hmac, ed);
  const verify = (secrets: string, signature = SVIX.signature, body = SVIX.body) =>
    createVerifier({ secrets, now: () => T * 1000 }).verifyAsync(headers(SVIX.id, signature), body);

  it('the Svix signature verifies with the raw and the DER whpk_ key', async () => {
    const der = derPublicKey(SVIX.publicKey);
    expect(Buffer.from(der.slice(5), 'base64')).toEqual(
      Buffer.concat([
        Buffer.from('302a300506032b6570032100', 'hex'),
        Buffer.from(SVIX.publicKey.slice(5), 'base64'),
      ]),
    );
    expect(await verify(SVIX.publicKey)).toMatchObject({ ok: true });
    expect(await verify(der)).toMatchObject({ ok: true });
    expect(await verify(der, SVIX.signature, `${SVIX.body} `)).toMatchObject({ ok: false, status: 401 });
  });

  it('a 44-byte whpk_ with any other header is refused when built', () => {
    for (let at = 0; at < SPKI_PREFIX.length; at += 1) {
      const wrong = [...SPKI_PREFIX];
      wrong[at] = (wrong[at] ?? 0) ^ 0x01;
      expect(() => createVerifier({ secrets: derPublicKey(SVIX.publicKey, wrong) })).toThrow(
        new TypeError('secrets decodes to 44 bytes but is not an ed25519 SubjectPublicKeyInfo (RFC 8410)'),
      );
    }
    expect(() =>
      createVerifier({
        secrets: ['whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', `whpk_${b64(new Uint8Array(43))}`],
      }),
    ).toThrow(
      new RangeError(
        'secrets[1] must decode to 32 bytes (the key) or 44 (its DER SubjectPublicKeyInfo), got 43',
      ),
    );
  });

  it('property: for any key pair and body, the raw and DER forms verify identically', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.uint8Array({ minLength: 32, maxLength: 32 }),
        fc.uint8Array({ maxLength: 300 }),
        fc.boolean(),
        async (seed, body, tamper) => {
          const whpk = `whpk_${b64(ed25519.getPublicKey(seed))}`;
          const signed = ed25519.sign(Uint8Array.of(...Buffer.from(`msg_p.${T}.`), ...body), seed);
          const entry = `v1a,${b64(signed)}`;
          const sent = tamper ? Uint8Array.of(...body, 0x20) : body;
          const raw = await createVerifier({ secrets: whpk, now: () => T * 1000 }).verifyAsync(
            headers('msg_p', entry),
            sent,
          );
          const der = await createVerifier({ secrets: derPublicKey(whpk), now: () => T * 1000 }).verifyAsync(
            headers('msg_p', entry),
            sent,
          );
          expect(der).toEqual(raw);
          expect(raw.ok).toBe(!tamper);
        },
      ),
      { numRuns: 100 },
    );
  });
});
