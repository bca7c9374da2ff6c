// The only v1a vectors another producer publishes: the Svix server's test
// `test_asymmetric_key_signing` in svix-webhooks `server/svix-server/src/worker.rs`
// (https://github.com/svix/svix-webhooks/blob/main/server/svix-server/src/worker.rs). Svix issues
// 64-byte `whsk_` keys (seed then public key); some Java consumers write the `whpk_` key as its
// DER SubjectPublicKeyInfo (RFC 8410 section 4). Web APIs only, like vectors.ts: run.ts bundles
// this on Node, Deno, Bun and workerd.
import type { Check, Packages } from './vectors';

const bytesOf = (base64: string) => Uint8Array.from(atob(base64), (c) => c.charCodeAt(0));
const base64Of = (bytes: Uint8Array) => btoa(String.fromCharCode(...bytes));

/** The DER header of an ed25519 SubjectPublicKeyInfo (RFC 8410 section 4). */
export const SPKI_PREFIX = [0x30, 0x2a, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x03, 0x21, 0x00];

/** A `whpk_` key rewritten as its DER SubjectPublicKeyInfo, behind `prefix` (the right one by default). */
export function derPublicKey(whpk: string, prefix: readonly number[] = SPKI_PREFIX): string {
  return `whpk_${base64Of(Uint8Array.from([...prefix, ...bytesOf(whpk.slice(5))]))}`;
}

const signingKey =
  'whsk_6Xb/dCcHpPea21PS1N9VY/NZW723CEc77N4rJCubMbfVKIDij2HKpMKkioLlX0dRqSKJp4AJ6p9lMicMFs6Kvg==';

export const SVIX = {
  /** The 64-byte form, as the Svix server issues it: seed, then public key. */
  signingKey,
  /** The same key as its 32-byte seed, the form Holdfast generates. */
  seed: `whsk_${base64Of(bytesOf(signingKey.slice(5)).subarray(0, 32))}`,
  publicKey: 'whpk_1SiA4o9hyqTCpIqC5V9HUakiiaeACeqfZTInDBbOir4=',
  id: 'msg_p5jXN8AQM9LWM0D4loKWxJek',
  timestamp: 1614265330,
  body: '{"test": 2432232314}',
  signature: 'v1a,hnO3f9T8Ytu9HwrXslvumlUpqtNVqkhqw/enGzPCXe5BdqzCInXqYXFymVJaA7AZdpXwVLPo3mNl8EM+m7TBAg==',
};

/** The Svix key with another pair's public half: a key pasted together from two pairs. */
export function mismatchedSigningKey(otherPublicKey: string): string {
  const seed = bytesOf(SVIX.seed.slice(5));
  return `whsk_${base64Of(Uint8Array.from([...seed, ...bytesOf(otherPublicKey.slice(5))]))}`;
}

function assert(condition: boolean, message: string): void {
  if (!condition) throw new Error(message);
}

function refused(fn: () => unknown, pattern: RegExp, message: string): void {
  try {
    fn();
  } catch (error) {
    const text = error instanceof Error ? error.message : String(error);
    assert(pattern.test(text), `${message}: threw "${text}"`);
    return;
  }
  throw new Error(`${message}: did not throw`);
}

/** The Svix checks, bound to one build of the two packages. */
export function svixVectors(p: Packages): Check[] {
  const T = SVIX.timestamp;
  const verify = (secrets: string | string[], signature = SVIX.signature) =>
    p
      .createVerifier({ secrets, now: () => T * 1000 })
      .verifyAsync(
        { 'webhook-id': SVIX.id, 'webhook-timestamp': String(T), 'webhook-signature': signature },
        SVIX.body,
      );
  return [
    {
      name: 'svix: the 64-byte whsk_ and its 32-byte seed both sign the Svix vector byte-exactly',
      run() {
        const input = { id: SVIX.id, timestamp: T, body: SVIX.body };
        assert(p.createSigner({ secrets: SVIX.signingKey }).sign(input) === SVIX.signature, '64-byte form');
        assert(p.createSigner({ secrets: SVIX.seed }).sign(input) === SVIX.signature, '32-byte form');
        assert(p.publicKeyOf(SVIX.signingKey) === SVIX.publicKey, 'publicKeyOf the 64-byte form');
        assert(p.publicKeyOf(SVIX.seed) === SVIX.publicKey, 'publicKeyOf the seed');
      },
    },
    {
      name: 'svix: a 64-byte whsk_ whose public half is not its seed’s is refused',
      run() {
        const bad = mismatchedSigningKey(p.generateKeyPair().publicKey);
        refused(() => p.createSigner({ secrets: bad }), /not the public key/, 'signer');
        refused(() => p.createSigner({ secrets: [SVIX.seed, bad] }), /secrets\[1\]/, 'names the entry');
        refused(() => p.publicKeyOf(bad), /not the public key/, 'publicKeyOf');
      },
    },
    {
      name: 'svix: the signature verifies with the raw and the DER whpk_ key',
      async run() {
        const der = derPublicKey(SVIX.publicKey);
        assert(der === 'whpk_MCowBQYDK2VwAyEA1SiA4o9hyqTCpIqC5V9HUakiiaeACeqfZTInDBbOir4=', 'DER form');
        const raw = await verify(SVIX.publicKey);
        assert(raw.ok, 'raw whpk_ not verified');
        const fromDer = await verify(der);
        assert(fromDer.ok, 'DER whpk_ not verified');
        assert((await verify(['whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', der])).ok, 'DER beside a whsec_');
        const other = await verify(derPublicKey(p.generateKeyPair().publicKey));
        assert(!other.ok && other.status === 401, 'another DER key must be 401');
      },
    },
    {
      name: 'svix: a 44-byte whpk_ with any other header is refused when built',
      run() {
        const wrong = [...SPKI_PREFIX];
        wrong[8] = 0x71; // OID 1.3.101.113: Ed448, not Ed25519
        refused(
          () => p.createVerifier({ secrets: derPublicKey(SVIX.publicKey, wrong) }),
          /SubjectPublicKeyInfo/,
          'Ed448 OID',
        );
        refused(
          () => p.createVerifier({ secrets: derPublicKey(SVIX.publicKey, new Array(12).fill(0)) }),
          /SubjectPublicKeyInfo/,
          'zero header',
        );
        refused(
          () => p.createVerifier({ secrets: `whpk_${base64Of(new Uint8Array(40))}` }),
          /got 40/,
          '40 bytes',
        );
      },
    },
  ];
}
