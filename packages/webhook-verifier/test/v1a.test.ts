import { createPrivateKey, createPublicKey, generateKeyPairSync, sign, verify } from 'node:crypto';
import { generateKeyPair } from '@holdfast/webhook-signer';
import { ed25519 } from '@noble/curves/ed25519';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ed25519Noble, ed25519Verify as webEd25519 } from '../src/ed25519';
import { ed25519Verify as nodeEd25519 } from '../src/ed25519-node';
import { hmacSha256 as portableHmac } from '../src/hmac';
import { hmacSha256 as nodeHmac } from '../src/hmac-node';
import { verifierFactory } from '../src/verify';
import { V1, V1A } from './runtimes/vectors';

// Standard Webhooks v1a (ed25519) against the two ed25519 implementations every Node has at hand,
// independent of our signer: node:crypto given the raw whpk_ key, and @noble/curves; on each of
// our three: node:crypto (node build), WebCrypto (portable build) and the @noble/curves fallback.
// `verifyAsync` throughout: it is the one that verifies v1a on every build.
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
  ['WebCrypto (portable build)', portableHmac, webEd25519],
  ['@noble/curves (portable build where WebCrypto lacks Ed25519)', portableHmac, ed25519Noble],
  ['node:crypto (node build)', nodeHmac, nodeEd25519],
])('v1a on %s', (_name, hmac, ed) => {
  const createVerifier = verifierFactory(hmac, ed);

  it('our signer’s v1a entries verify with node:crypto given only the whpk_ key', async () => {
    const signature = V1A.signature.slice(4);
    const content = encoder.encode(`${V1A.id}.${V1A.timestamp}.${V1A.body}`);
    expect(verify(null, content, nodePublicKey(V1A.publicKey), Buffer.from(signature, 'base64'))).toBe(true);
  });

  it('property: node:crypto-made signatures verify with ours; any other body does not', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.uint8Array({ maxLength: 600 }),
        fc.stringMatching(/^[A-Za-z0-9_]{1,30}$/),
        async (body, id) => {
          const { privateKey, publicKey } = generateKeyPairSync('ed25519');
          const jwk = publicKey.export({ format: 'jwk' });
          const whpk = `whpk_${Buffer.from(String(jwk.x), 'base64url').toString('base64')}`;
          const content = Buffer.concat([Buffer.from(`${id}.${T}.`), body]);
          const entry = `v1a,${sign(null, content, privateKey).toString('base64')}`;
          const verifier = createVerifier({ secrets: whpk, now });
          expect((await verifier.verifyAsync(headers(id, entry), body)).ok).toBe(true);
          expect((await verifier.verifyAsync(headers(id, entry), Uint8Array.of(...body, 0x20))).ok).toBe(
            false,
          );
        },
      ),
      { numRuns: 60 },
    );
  });

  it('property: @noble/curves-made signatures verify with ours', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.uint8Array({ minLength: 32, maxLength: 32 }),
        fc.string({ maxLength: 200 }),
        async (seed, text) => {
          const whpk = `whpk_${b64(ed25519.getPublicKey(seed))}`;
          const entry = `v1a,${b64(ed25519.sign(encoder.encode(`evt_n.${T}.${text}`), seed))}`;
          expect(
            (await createVerifier({ secrets: whpk, now }).verifyAsync(headers('evt_n', entry), text)).ok,
          ).toBe(true);
        },
      ),
      { numRuns: 60 },
    );
  });

  it('the RFC 8032 TEST 1 key pair is the vectors’ whsk_/whpk_ pair', async () => {
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
    expect(await ed(raw(V1A.publicKey)).verify(new Uint8Array(0), new Uint8Array(node))).toBe(true);
  });

  it('mixed v1 + v1a headers verify with either key, in either order and split over lines', async () => {
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
      expect((await createVerifier({ secrets: V1.secret, now: at }).verifyAsync(h, V1.body)).ok).toBe(true);
      expect((await createVerifier({ secrets: V1A.publicKey, now: at }).verifyAsync(h, V1.body)).ok).toBe(
        true,
      );
      expect(
        (await createVerifier({ secrets: [publicKey, V1A.publicKey], now: at }).verifyAsync(h, V1.body)).ok,
      ).toBe(true);
      expect(await createVerifier({ secrets: publicKey, now: at }).verifyAsync(h, V1.body)).toMatchObject({
        status: 401,
      });
    }
    const repeated = new Headers({ 'webhook-id': V1.id, 'webhook-timestamp': String(V1.timestamp) });
    repeated.append('webhook-signature', V1.signature);
    repeated.append('webhook-signature', V1A.signature);
    const v = createVerifier({ secrets: V1A.publicKey, now: () => V1.timestamp * 1000 });
    expect((await v.verifyAsync(repeated, V1.body)).ok).toBe(true);
  });

  it('refuses a v1a entry under a whsec_ secret, and v1 under a whpk_ key, naming the scheme', async () => {
    const at = () => V1.timestamp * 1000;
    const h = (signature: string) => ({
      'webhook-id': V1.id,
      'webhook-timestamp': String(V1.timestamp),
      'webhook-signature': signature,
    });
    expect(
      await createVerifier({ secrets: V1.secret, now: at }).verifyAsync(h(V1A.signature), V1.body),
    ).toMatchObject({
      ok: false,
      status: 401,
      detail: 'The webhook-signature header has no v1 signature.',
    });
    expect(
      await createVerifier({ secrets: V1A.publicKey, now: at }).verifyAsync(h(V1.signature), V1.body),
    ).toMatchObject({
      ok: false,
      status: 401,
      detail: 'The webhook-signature header has no v1a signature.',
    });
  });

  it('refuses malformed v1a entries and more than 4 of them, never throwing', async () => {
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
      expect(await verifier.verifyAsync(headers('evt', entry), '{}')).toMatchObject({
        ok: false,
        status: 401,
      });
    }
  });

  it('a string body verifies as its UTF-8 bytes, and the verified body is those bytes', async () => {
    const secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
    const text = '{"note":"caf\u00e9 \u{1f600} \ud800"}';
    const bytes = encoder.encode(text);
    const mac = nodeHmac(new Uint8Array(Buffer.from(secret.slice(6), 'base64')))(`evt.${T}.`, bytes);
    const result = await createVerifier({ secrets: secret, now }).verifyAsync(
      headers('evt', `v1,${b64(mac)}`),
      text,
    );
    expect(result.ok).toBe(true);
    if (result.ok) expect(result.body).toEqual(bytes);
  });
});

describe('the three ed25519 implementations', () => {
  const builds = [nodeEd25519, webEd25519, ed25519Noble];
  /** What each build answers, node:crypto's first. */
  const answers = (pub: Uint8Array, message: Uint8Array, signature: Uint8Array) =>
    Promise.all(builds.map((build) => build(pub).verify(message, signature)));

  it('property: node:crypto, WebCrypto and noble agree on every signature, valid or tampered', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.uint8Array({ minLength: 32, maxLength: 32 }),
        fc.uint8Array({ maxLength: 300 }),
        fc.nat(511),
        async (seed, message, bit) => {
          const pub = ed25519.getPublicKey(seed);
          const signature = ed25519.sign(message, seed);
          const tampered = signature.slice();
          tampered[bit >> 3] = (tampered[bit >> 3] ?? 0) ^ (1 << (bit & 7));
          expect(await answers(pub, message, signature)).toEqual([true, true, true]);
          expect(await answers(pub, message, tampered)).toEqual([false, false, false]);
        },
      ),
      { numRuns: 60 },
    );
  });

  it('all refuse a malleated signature (S + L, RFC 8032 section 5.1.7) and a key that is not a point', async () => {
    const seed = new Uint8Array(32).fill(9);
    const pub = ed25519.getPublicKey(seed);
    const message = encoder.encode('msg.1700000000.{}');
    const signature = ed25519.sign(message, seed);
    // S is the little-endian second half; adding the group order L gives the same point check
    // under lax rules, and must be refused under strict ones.
    const L = 2n ** 252n + 27742317777372353535851937790883648493n;
    let s = 0n;
    for (let i = 63; i >= 32; i -= 1) s = (s << 8n) | BigInt(signature[i] ?? 0);
    s += L;
    const malleated = signature.slice();
    for (let i = 32; i < 64; i += 1) {
      malleated[i] = Number(s & 255n);
      s >>= 8n;
    }
    expect(await answers(pub, message, signature)).toEqual([true, true, true]);
    expect(await answers(pub, message, malleated)).toEqual([false, false, false]);
    // y = 2 is on no twisted Edwards point of ed25519: no key, nothing verifies, nothing throws.
    const notAPoint = new Uint8Array(32);
    notAPoint[0] = 2;
    expect(
      await Promise.all([webEd25519, ed25519Noble].map((b) => b(notAPoint).verify(message, signature))),
    ).toEqual([false, false]);
  });
});

describe('sync and async on the builds', () => {
  const T0 = V1.timestamp * 1000;
  const h = (signature: string) => ({
    'webhook-id': V1.id,
    'webhook-timestamp': String(V1.timestamp),
    'webhook-signature': signature,
  });

  it('the portable build: verify throws for any verifier holding a whpk_ key, whatever it is sent', () => {
    const createVerifier = verifierFactory(portableHmac, webEd25519);
    for (const secrets of [V1A.publicKey, [V1.secret, V1A.publicKey]]) {
      const verifier = createVerifier({ secrets, now: () => T0 });
      for (const signature of [V1.signature, V1A.signature, 'v2,x']) {
        expect(() => verifier.verify(h(signature), V1.body)).toThrow(
          new TypeError(
            'v1a verification is asynchronous on this runtime (WebCrypto Ed25519): call verifyAsync',
          ),
        );
      }
    }
    // Secrets alone stay synchronous there.
    expect(createVerifier({ secrets: V1.secret, now: () => T0 }).verify(h(V1.signature), V1.body).ok).toBe(
      true,
    );
  });

  it('the node build: verify and verifyAsync give the same result for v1 and v1a', async () => {
    const createVerifier = verifierFactory(nodeHmac, nodeEd25519);
    const verifier = createVerifier({ secrets: [V1.secret, V1A.publicKey], now: () => T0 });
    for (const signature of [V1.signature, V1A.signature, `${V1A.signature.slice(0, -3)}AA=`, 'v1,x']) {
      const sync = verifier.verify(h(signature), V1.body);
      const async = await verifier.verifyAsync(h(signature), V1.body);
      expect(async.ok).toBe(sync.ok);
      expect(async.ok ? async.id : async.detail).toBe(sync.ok ? sync.id : sync.detail);
    }
  });

  it('concurrent verifyAsync calls each check their own entries (the decode buffer is shared)', async () => {
    const createVerifier = verifierFactory(portableHmac, webEd25519);
    const verifier = createVerifier({ secrets: V1A.publicKey, now: () => T0 });
    const bad = `v1a,${b64(new Uint8Array(64).fill(1))}`;
    const results = await Promise.all([
      verifier.verifyAsync(h(V1A.signature), V1.body),
      verifier.verifyAsync(h(bad), V1.body),
      verifier.verifyAsync(h(V1A.signature), V1.body),
    ]);
    expect(results.map((r) => r.ok)).toEqual([true, false, true]);
  });
});
