// Vectors every runtime must pass, for the signer and the verifier together: Node (both builds),
// Deno and Bun (both builds) and workerd (the portable build). Web APIs only: this file is
// bundled and run as it is on each of them (see run.ts), and under vitest on Node.
import type { createSigner, generateKeyPair, publicKeyOf } from '@holdfast/webhook-signer';
import type { createVerifier } from '@holdfast/webhook-verifier';
import type { createVerifier as createV1Verifier } from '@holdfast/webhook-verifier/v1';
import { svixVectors } from './svix';

/** What the vectors need of the two packages: either build, the built dist or the source. */
export interface Packages {
  createSigner: typeof createSigner;
  generateKeyPair: typeof generateKeyPair;
  publicKeyOf: typeof publicKeyOf;
  createVerifier: typeof createVerifier;
  /** The `/v1` entry's: HMAC alone, no ed25519. */
  createV1Verifier: typeof createV1Verifier;
}

export interface Check {
  name: string;
  run(): void | Promise<void>;
}

export interface Outcome {
  name: string;
  ok: boolean;
  error?: string;
}

// The Standard Webhooks specification's example (standard-webhooks/spec, "Signature scheme").
export const V1 = {
  secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
  id: 'msg_p5jXN8AQM9LWM0D4loKWxJek',
  timestamp: 1614265330,
  body: '{"test": 2432232314}',
  signature: 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=',
};

// RFC 8032 section 7.1, TEST 1: the seed 9d61b1...7f60 and its public key d75a98...511a, as
// whsk_/whpk_ keys; the signature is over the example's signed content (ed25519 is
// deterministic, so every implementation must give exactly these bytes).
export const V1A = {
  secretKey: 'whsk_nWGxne/9WmC6hEr0kuwsxERJxWl7MmkZcDusAxyuf2A=',
  publicKey: 'whpk_11qYAYKxCrfVS/7TyWQHOg7hcvPapiMlrwIaaPcHURo=',
  id: V1.id,
  timestamp: V1.timestamp,
  body: V1.body,
  signature: 'v1a,fldxM4gAKugP6nnt1hdz3sgGfZ6d99nzrMFnZOELIxbzEHoVmAb2ADpkJK7zgPePmPsle0zV9jSeGlHFG2NVAw==',
};

function assert(condition: boolean, message: string): void {
  if (!condition) throw new Error(message);
}

function throws(fn: () => unknown, kind: ErrorConstructor, message: string): void {
  try {
    fn();
  } catch (error) {
    assert(error instanceof kind, `${message}: threw ${String(error)}, not a ${kind.name}`);
    return;
  }
  throw new Error(`${message}: did not throw`);
}

/** Flips one bit of the decoded signature of a `scheme,<base64>` entry. */
export function flipBit(entry: string, bit: number): string {
  const comma = entry.indexOf(',');
  const bytes = Uint8Array.from(atob(entry.slice(comma + 1)), (c) => c.charCodeAt(0));
  const at = Math.floor(bit / 8) % bytes.length;
  bytes[at] = (bytes[at] ?? 0) ^ (1 << (bit % 8));
  return `${entry.slice(0, comma + 1)}${btoa(String.fromCharCode(...bytes))}`;
}

const headers = (id: string, timestamp: number, signature: string) => ({
  'webhook-id': id,
  'webhook-timestamp': String(timestamp),
  'webhook-signature': signature,
});

/** The checks, bound to one build of the two packages: ours, then the Svix server's (svix.ts). */
export function vectors(p: Packages): Check[] {
  return [...ownVectors(p), ...svixVectors(p)];
}

function ownVectors(p: Packages): Check[] {
  const at = (seconds: number) => () => seconds * 1000;
  const T = V1.timestamp;
  // verifyAsync: the one that verifies v1a on every runtime (WebCrypto's Ed25519 is asynchronous).
  const verify = (secrets: string | string[], signature: string, body: string | Uint8Array = V1.body) =>
    p.createVerifier({ secrets, now: at(T) }).verifyAsync(headers(V1.id, T, signature), body);
  return [
    {
      name: 'v1: the Standard Webhooks example signs and verifies, synchronously too, on both entries',
      async run() {
        assert(p.createSigner({ secrets: V1.secret }).sign(V1) === V1.signature, 'signature differs');
        assert((await verify(V1.secret, V1.signature)).ok, 'not verified');
        for (const create of [p.createVerifier, p.createV1Verifier]) {
          const verifier = create({ secrets: V1.secret, now: at(T) });
          assert(verifier.verify(headers(V1.id, T, V1.signature), V1.body).ok, 'not verified by verify');
          assert(
            !verifier.verify(headers(V1.id, T, V1.signature), `${V1.body} `).ok,
            'another body verified',
          );
        }
        throws(() => p.createV1Verifier({ secrets: V1A.publicKey }), TypeError, 'whpk_ to the v1 entry');
      },
    },
    {
      name: 'v1a: the RFC 8032 key signs the example byte-exactly and verifies with its whpk_ key',
      async run() {
        assert(p.publicKeyOf(V1A.secretKey) === V1A.publicKey, 'public key differs');
        assert(p.createSigner({ secrets: V1A.secretKey }).sign(V1A) === V1A.signature, 'signature differs');
        const result = await verify(V1A.publicKey, V1A.signature);
        assert(result.ok, 'not verified');
        // verify: synchronous where ed25519 is (the node build); elsewhere it names verifyAsync.
        const verifier = p.createVerifier({ secrets: V1A.publicKey, now: at(T) });
        try {
          assert(verifier.verify(headers(V1.id, T, V1A.signature), V1.body).ok, 'not verified by verify');
        } catch (error) {
          assert(
            error instanceof TypeError && /verifyAsync/.test(error.message),
            `verify threw ${String(error)}`,
          );
        }
        if (result.ok) assert(new TextDecoder().decode(result.body) === V1A.body, 'body differs');
      },
    },
    {
      name: 'v1a: a generated key pair signs and verifies, bytes and string bodies alike',
      async run() {
        const pair = p.generateKeyPair();
        assert(/^whsk_[A-Za-z0-9+/]{43}=$/.test(pair.secretKey), `secret key ${pair.secretKey.slice(0, 5)}`);
        assert(/^whpk_[A-Za-z0-9+/]{43}=$/.test(pair.publicKey), 'public key format');
        assert(p.publicKeyOf(pair.secretKey) === pair.publicKey, 'publicKeyOf differs');
        const body = new Uint8Array([0x7b, 0xff, 0x00, 0xc3, 0x28, 0x7d]);
        const signer = p.createSigner({ secrets: pair.secretKey });
        const signature = signer.sign({ id: V1.id, timestamp: T, body });
        assert(/^v1a,[A-Za-z0-9+/]{86}==$/.test(signature), 'one v1a entry of 64 bytes');
        assert((await verify(pair.publicKey, signature, body)).ok, 'bytes not verified');
        const text = '{"note":"caf\u00e9 \u{1f600}"}';
        const fromText = signer.sign({ id: V1.id, timestamp: T, body: text });
        assert(
          fromText === signer.sign({ id: V1.id, timestamp: T, body: new TextEncoder().encode(text) }),
          'text',
        );
        assert((await verify(pair.publicKey, fromText, text)).ok, 'string not verified');
      },
    },
    {
      name: 'rotation: a v1 + v1a header verifies with either key, and with neither is refused',
      async run() {
        const signature = p.createSigner({ secrets: [V1.secret, V1A.secretKey] }).sign(V1);
        assert(signature === `${V1.signature} ${V1A.signature}`, 'one entry per key, in order');
        assert((await verify(V1.secret, signature)).ok, 'old v1 secret');
        assert((await verify(V1A.publicKey, signature)).ok, 'new v1a key');
        assert((await verify([V1.secret, V1A.publicKey], signature)).ok, 'both');
        const other = p.generateKeyPair().publicKey;
        const result = await verify([other, 'whsec_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA'], signature);
        assert(!result.ok && result.status === 401, 'neither key must be 401');
      },
    },
    {
      name: 'refused: a flipped bit of a v1a signature, body or timestamp',
      async run() {
        for (const bit of [0, 7, 255, 256, 511]) {
          const result = await verify(V1A.publicKey, flipBit(V1A.signature, bit));
          assert(!result.ok && result.status === 401, `bit ${bit}`);
        }
        assert(!(await verify(V1A.publicKey, V1A.signature, `${V1.body} `)).ok, 'body');
        const late = p.createVerifier({ secrets: V1A.publicKey, now: at(T) });
        assert(!(await late.verifyAsync(headers(V1.id, T + 1, V1A.signature), V1.body)).ok, 'timestamp');
      },
    },
    {
      name: 'refused: a wrong key, v1a with only a whsec_ secret, v1 with only a whpk_ key',
      async run() {
        const wrong = await verify(p.generateKeyPair().publicKey, V1A.signature);
        assert(!wrong.ok && wrong.status === 401, 'wrong key');
        const onlySecret = await verify(V1.secret, V1A.signature);
        assert(!onlySecret.ok && onlySecret.status === 401, 'v1a with a whsec_ secret');
        const onlyKey = await verify(V1A.publicKey, V1.signature);
        assert(!onlyKey.ok && onlyKey.status === 401, 'v1 with a whpk_ key');
        // The seed as a "secret" (same base64 after the prefix) signs v1, never v1a.
        const seedAsSecret = `whsec_${V1A.secretKey.slice(5)}`;
        assert(!(await verify(seedAsSecret, V1A.signature)).ok, 'seed as secret');
      },
    },
    {
      name: 'keys in the wrong place throw when built',
      run() {
        throws(() => p.createVerifier({ secrets: V1A.secretKey }), TypeError, 'whsk_ to a verifier');
        throws(() => p.createSigner({ secrets: V1A.publicKey }), TypeError, 'whpk_ to a signer');
        throws(() => p.createVerifier({ secrets: 'whpk_AAAA' }), RangeError, 'short whpk_');
        throws(() => p.createSigner({ secrets: 'whsk_AAAA' }), RangeError, 'short whsk_');
        throws(() => p.publicKeyOf(V1.secret), TypeError, 'publicKeyOf a whsec_');
      },
    },
  ];
}

/** Runs the checks, one after another; never rejects, so a runtime reports every outcome. */
export async function runVectors(p: Packages): Promise<Outcome[]> {
  const outcomes: Outcome[] = [];
  for (const check of vectors(p)) {
    try {
      await check.run();
      outcomes.push({ name: check.name, ok: true });
    } catch (error) {
      outcomes.push({
        name: check.name,
        ok: false,
        error: error instanceof Error ? error.message : String(error),
      });
    }
  }
  return outcomes;
}
