import { createPrivateKey, createPublicKey, generateKeyPairSync, sign, verify } from 'node:crypto';
import { generateKeyPair } from '@holdfast/webhook-signer';
import { ed25519 } from '@noble/curves/ed25519';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ed25519Verify as nobleEd25519 } from '../src/ed25519';
import { ed25519Verify as nodeEd25519 } from '../src/ed25519-node';
import { hmacSha256 as nobleHmac } from '../src/hmac';
import { hmacSha256 as nodeHmac } from '../src/hmac-node';
import { verifierFactory } from '../src/verify';
import { V1, V1A } from './runtimes/vectors';

// Standard Webhooks v1a (ed25519) against the two ed25519 implementations every Node has at hand,
// independent of our signer: node:crypto given the raw whpk_ key, and @noble/curves.
const T = 1_700_000_000;
const now = () => T * 1000;
const encoder = new TextEncoder();
const b64 = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64');
const raw = (key: string) => new Uint8Array(Buffer.from(key.slice(5), 'base64'));
const headers = (id: string, signature: string) => ({
  'webhook-id': id,
  'webhook-timestamp': String(T),
  'webhook-signature': signature,
});

/** The whpk_ key as node:crypto imports it: a JWK with the raw key, nothing of ours involved. */
function nodePublicKey(whpk: string) {
  return createPublicKey({
    key: { kty: 'OKP', crv: 'Ed25519', x: Buffer.from(raw(whpk)).toString('base64url') },
    format: 'jwk',
  });
}

describe.each([
  ['noble (portable build)', nobleHmac, nobleEd25519],
  ['node:crypto (node build)', nodeHmac, nodeEd25519],
])('v1a on %s', (_name, hmac, ed) => {
  const createVerifier = verifierFactory(hmac, ed);

  it('our signer’s v1a entries verify with node:crypto given only the whpk_ key', () => {
    const signature = V1A.signature.slice(4);
    const content = encoder.encode(`${V1A.id}.${V1A.timestamp}.${V1A.body}`);
    expect(verify(null, content, nodePublicKey(V1A.publicKey), Buffer.from(signature, 'base64'))).toBe(true);
  });

  it('property: node:crypto-made signatures verify with ours; any other body does not', () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ maxLength: 600 }),
        fc.stringMatching(/^[A-Za-z0-9_]{1,30}$/),
        (body, id) => {
          const { privateKey, publicKey } = generateKeyPairSync('ed25519');
          const jwk = publicKey.export({ format: 'jwk' });
          const whpk = `whpk_${Buffer.from(String(jwk.x), 'base64url').toString('base64')}`;
          const content = Buffer.concat([Buffer.from(`${id}.${T}.`), body]);
          const entry = `v1a,${sign(null, content, privateKey).toString('base64')}`;
          const verifier = createVerifier({ secrets: whpk, now });
          expect(verifier.verify(headers(id, entry), body).ok).toBe(true);
          expect(verifier.verify(headers(id, entry), Uint8Array.of(...body, 0x20)).ok).toBe(false);
        },
      ),
      { numRuns: 60 },
    );
  });

  it('property: @noble/curves-made signatures verify with ours', () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ minLength: 32, maxLength: 32 }),
        fc.string({ maxLength: 200 }),
        (seed, text) => {
          const whpk = `whpk_${b64(ed25519.getPublicKey(seed))}`;
          const entry = `v1a,${b64(ed25519.sign(encoder.encode(`evt_n.${T}.${text}`), seed))}`;
          expect(createVerifier({ secrets: whpk, now }).verify(headers('evt_n', entry), text).ok).toBe(true);
        },
      ),
      { numRuns: 60 },
    );
  });

  it('the RFC 8032 TEST 1 key pair is the vectors’ whsk_/whpk_ pair', () => {
    const seed = Buffer.from('9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60', 'hex');
    expect(V1A.secretKey).toBe(`whsk_${seed.toString('base64')}`);
    const pub = Buffer.from('d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a', 'hex');
    expect(V1A.publicKey).toBe(`whpk_${pub.toString('base64')}`);
    const pkcs8 = Buffer.concat([Buffer.from('302e020100300506032b657004220420', 'hex'), seed]);
    const node = sign(null, Buffer.alloc(0), createPrivateKey({ key: pkcs8, format: 'der', type: 'pkcs8' }));
    // RFC 8032 section 7.1 TEST 1, empty message.
    expect(node.toString('hex')).toBe(
      'e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b',
    );
    expect(ed(raw(V1A.publicKey))(new Uint8Array(0), new Uint8Array(node))).toBe(true);
  });

  it('mixed v1 + v1a headers verify with either key, in either order and split over lines', () => {
    const { publicKey } = generateKeyPair();
    for (const signature of [
      `${V1.signature} ${V1A.signature}`,
      `${V1A.signature} ${V1.signature}`,
      `v2,zzz ${V1A.signature} v1a,${b64(new Uint8Array(64))} ${V1.signature}`,
    ]) {
      const at = () => V1.timestamp * 1000;
      const h = {
        'webhook-id': V1.id,
        'webhook-timestamp': String(V1.timestamp),
        'webhook-signature': signature,
      };
      expect(createVerifier({ secrets: V1.secret, now: at }).verify(h, V1.body).ok).toBe(true);
      expect(createVerifier({ secrets: V1A.publicKey, now: at }).verify(h, V1.body).ok).toBe(true);
      expect(createVerifier({ secrets: [publicKey, V1A.publicKey], now: at }).verify(h, V1.body).ok).toBe(
        true,
      );
      expect(createVerifier({ secrets: publicKey, now: at }).verify(h, V1.body)).toMatchObject({
        status: 401,
      });
    }
    const repeated = new Headers({ 'webhook-id': V1.id, 'webhook-timestamp': String(V1.timestamp) });
    repeated.append('webhook-signature', V1.signature);
    repeated.append('webhook-signature', V1A.signature);
    const v = createVerifier({ secrets: V1A.publicKey, now: () => V1.timestamp * 1000 });
    expect(v.verify(repeated, V1.body).ok).toBe(true);
  });

  it('refuses a v1a entry under a whsec_ secret, and v1 under a whpk_ key, naming the scheme', () => {
    const at = () => V1.timestamp * 1000;
    const h = (signature: string) => ({
      'webhook-id': V1.id,
      'webhook-timestamp': String(V1.timestamp),
      'webhook-signature': signature,
    });
    expect(createVerifier({ secrets: V1.secret, now: at }).verify(h(V1A.signature), V1.body)).toMatchObject({
      ok: false,
      status: 401,
      detail: 'The webhook-signature header has no v1 signature.',
    });
    expect(
      createVerifier({ secrets: V1A.publicKey, now: at }).verify(h(V1.signature), V1.body),
    ).toMatchObject({
      ok: false,
      status: 401,
      detail: 'The webhook-signature header has no v1a signature.',
    });
  });

  it('refuses malformed v1a entries and more than 4 of them, never throwing', () => {
    const verifier = createVerifier({ secrets: V1A.publicKey, now });
    for (const entry of [
      'v1a,',
      'v1a,not base64!!',
      `v1a,${b64(new Uint8Array(63))}`,
      `v1a,${b64(new Uint8Array(65))}`,
      `v1a,${b64(new Uint8Array(64).fill(255))}`,
      Array(5)
        .fill(`v1a,${b64(new Uint8Array(64))}`)
        .join(' '),
    ]) {
      expect(verifier.verify(headers('evt', entry), '{}')).toMatchObject({ ok: false, status: 401 });
    }
  });

  it('a string body verifies as its UTF-8 bytes, and the verified body is those bytes', () => {
    const secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
    const text = '{"note":"caf\u00e9 \u{1f600} \ud800"}';
    const bytes = encoder.encode(text);
    const mac = nodeHmac(new Uint8Array(Buffer.from(secret.slice(6), 'base64')))(`evt.${T}.`, bytes);
    const result = createVerifier({ secrets: secret, now }).verify(headers('evt', `v1,${b64(mac)}`), text);
    expect(result.ok).toBe(true);
    if (result.ok) expect(result.body).toEqual(bytes);
  });
});

describe('the two ed25519 builds', () => {
  it('property: node:crypto and noble agree on every signature, valid or tampered', () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ minLength: 32, maxLength: 32 }),
        fc.uint8Array({ maxLength: 300 }),
        fc.nat(511),
        (seed, message, bit) => {
          const pub = ed25519.getPublicKey(seed);
          const signature = ed25519.sign(message, seed);
          const tampered = signature.slice();
          tampered[bit >> 3] = (tampered[bit >> 3] ?? 0) ^ (1 << (bit & 7));
          for (const sig of [signature, tampered]) {
            expect(nodeEd25519(pub)(message, sig)).toBe(nobleEd25519(pub)(message, sig));
          }
          expect(nodeEd25519(pub)(message, signature)).toBe(true);
        },
      ),
      { numRuns: 100 },
    );
  });
});
