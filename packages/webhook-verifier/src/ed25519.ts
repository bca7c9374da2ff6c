import type { Ed25519Key, Ed25519Verify } from './verify-core';

// Ed25519 for the portable build: WebCrypto (Secure Curves: Node >= 20, Deno, Bun, workerd,
// Chrome 137+, Firefox 129+, Safari 17+), which verifies asynchronously. Where it has no
// Ed25519, @noble/curves (an optional peer dependency) is imported on first use, so a receiver
// that never sees a whpk_ key never loads or installs a curve.

type Check = (message: Uint8Array, signature: Uint8Array) => Promise<boolean>;

// RFC 8032 section 7.1, TEST 1: a valid public key, to learn once whether WebCrypto has Ed25519.
const PROBE = Uint8Array.from([
  0xd7, 0x5a, 0x98, 0x01, 0x82, 0xb1, 0x0a, 0xb7, 0xd5, 0x4b, 0xfe, 0xd3, 0xc9, 0x64, 0x07, 0x3a, 0x0e, 0xe1,
  0x72, 0xf3, 0xda, 0xa6, 0x23, 0x25, 0xaf, 0x02, 0x1a, 0x68, 0xf7, 0x03, 0x51, 0x1a,
]);
const ED25519 = { name: 'Ed25519' };

const importKey = (publicKey: Uint8Array): Promise<CryptoKey> =>
  // In a promise chain: where `crypto` or `crypto.subtle` is missing, the throw becomes a rejection.
  Promise.resolve().then(() =>
    crypto.subtle.importKey('raw', new Uint8Array(publicKey), ED25519, false, ['verify']),
  );

let webCrypto: Promise<boolean> | undefined;

async function noble(publicKey: Uint8Array): Promise<Check> {
  let curve: typeof import('@noble/curves/ed25519');
  try {
    curve = await import('@noble/curves/ed25519');
  } catch (cause) {
    throw new Error(
      'v1a: this runtime has no WebCrypto Ed25519; install @noble/curves (an optional peer dependency of @holdfast/webhook-verifier)',
      { cause },
    );
  }
  return async (message, signature) => {
    try {
      // Strict RFC 8032 / FIPS 186-5 rules, as OpenSSL and WebCrypto apply them.
      return curve.ed25519.verify(signature, message, publicKey, { zip215: false });
    } catch {
      return false;
    }
  };
}

async function prepare(publicKey: Uint8Array): Promise<Check> {
  webCrypto ??= importKey(PROBE).then(
    () => true,
    () => false,
  );
  if (!(await webCrypto)) return noble(publicKey);
  // A key WebCrypto refuses (not a point) verifies nothing; it is not an error at run time.
  const key = await importKey(publicKey).catch(() => undefined);
  return async (message, signature) =>
    key !== undefined &&
    crypto.subtle.verify(ED25519, key, new Uint8Array(signature), new Uint8Array(message)).catch(() => false);
}

/** A key whose check is made on first use: nothing is imported or awaited before a v1a entry. */
function lazily(make: () => Promise<Check>): Ed25519Key {
  let ready: Promise<Check> | undefined;
  return {
    async verify(message, signature) {
      ready ??= make();
      return (await ready)(message, signature);
    },
  };
}

/** Ed25519 verification through WebCrypto, or `@noble/curves` where WebCrypto lacks it. */
export const ed25519Verify: Ed25519Verify = (publicKey) => lazily(() => prepare(publicKey));

/** The fallback alone, `@noble/curves`: what runs where WebCrypto has no Ed25519. */
export const ed25519Noble: Ed25519Verify = (publicKey) => lazily(() => noble(publicKey));
