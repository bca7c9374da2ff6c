import { verify } from 'node:crypto';
import { createVerifier } from '@holdfast/webhook-verifier';
import fc from 'fast-check';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { Webhook as SvixWebhook } from 'svix';
import { describe, expect, it } from 'vitest';
import { ed25519Signing as nobleEd25519 } from '../src/ed25519';
import { ed25519Signing as nodeEd25519 } from '../src/ed25519-node';
import { hmacSha256 as nobleHmac } from '../src/hmac';
import { hmacSha256 as nodeHmac } from '../src/hmac-node';
import { generateKeyPair, generateSecret, publicKeyOf } from '../src/index';
import { keyPairFactory } from '../src/key-pair';
import { signerFactory } from '../src/sign';

const builds = [
  ['noble (portable build)', signerFactory(nobleHmac, nobleEd25519), keyPairFactory(nobleEd25519)],
  ['node:crypto (node build)', signerFactory(nodeHmac, nodeEd25519), keyPairFactory(nodeEd25519)],
] as const;

describe('v1a signing', () => {
  it('property: both builds give the same entries and public keys for any keys and body', () => {
    const [[, nobleSigner, nobleKeys], [, nodeSigner, nodeKeys]] = builds;
    fc.assert(
      fc.property(
        fc.uint8Array({ minLength: 32, maxLength: 32 }),
        fc.oneof(fc.string({ maxLength: 300 }), fc.uint8Array({ maxLength: 300 })),
        (seed, body) => {
          const secretKey = `whsk_${Buffer.from(seed).toString('base64')}`;
          const secrets = [generateSecret(), secretKey];
          const input = { id: 'evt_p', timestamp: 1_700_000_000, body };
          expect(nodeSigner({ secrets }).sign(input)).toBe(nobleSigner({ secrets }).sign(input));
          expect(nodeKeys.publicKeyOf(secretKey)).toBe(nobleKeys.publicKeyOf(secretKey));
        },
      ),
      { numRuns: 100 },
    );
  });

  it.each(builds)('%s: generateKeyPair gives whsk_/whpk_ keys of 32 bytes, all different', (_n, _s, keys) => {
    const seen = new Set<string>();
    for (let i = 0; i < 20; i += 1) {
      const { secretKey, publicKey } = keys.generateKeyPair();
      expect(secretKey).toMatch(/^whsk_[A-Za-z0-9+/]{43}=$/);
      expect(publicKey).toMatch(/^whpk_[A-Za-z0-9+/]{43}=$/);
      expect(keys.publicKeyOf(secretKey)).toBe(publicKey);
      seen.add(secretKey);
    }
    expect(seen.size).toBe(20);
  });

  it('a v1a entry verifies with node:crypto given only the public key', () => {
    const { secretKey, publicKey } = generateKeyPair();
    const body = '{"type":"order.created"}';
    const entry = builds[1][1]({ secrets: secretKey }).sign({ id: 'evt_1', timestamp: 1, body });
    const key = {
      kty: 'OKP',
      crv: 'Ed25519',
      x: Buffer.from(publicKey.slice(5), 'base64').toString('base64url'),
    };
    const signature = Buffer.from(entry.slice(4), 'base64');
    expect(verify(null, Buffer.from(`evt_1.1.${body}`), { key, format: 'jwk' }, signature)).toBe(true);
  });

  it('a v1 → v1a rotation header still verifies with standardwebhooks and svix on the v1 secret', async () => {
    const secret = generateSecret();
    const { secretKey, publicKey } = generateKeyPair();
    const body = '{"rotation":"v1 to v1a"}';
    const timestamp = Math.floor(Date.now() / 1000);
    const headers = {
      ...builds[1][1]({ secrets: [secret, secretKey] }).headers({ id: 'evt_r', timestamp, body }),
    };
    expect(headers['webhook-signature']).toMatch(/^v1,\S+ v1a,\S+$/);
    expect(new StandardWebhook(secret).verify(body, headers)).toEqual(JSON.parse(body));
    expect(
      new SvixWebhook(secret).verify(body, {
        'svix-id': headers['webhook-id'],
        'svix-timestamp': headers['webhook-timestamp'],
        'svix-signature': headers['webhook-signature'],
      }),
    ).toEqual(JSON.parse(body));
    expect((await createVerifier({ secrets: publicKey }).verifyAsync(headers, body)).ok).toBe(true);
    expect(publicKeyOf(secretKey)).toBe(publicKey);
  });

  it('refuses a whpk_ key, a short whsk_ key and publicKeyOf a whsec_ secret', () => {
    const { secretKey, publicKey } = generateKeyPair();
    expect(() => builds[0][1]({ secrets: [secretKey, publicKey] })).toThrow(/secrets\[1\].*cannot sign/);
    expect(() => builds[0][1]({ secrets: 'whsk_AAAA' })).toThrow(RangeError);
    expect(() => publicKeyOf(generateSecret())).toThrow(TypeError);
  });
});
