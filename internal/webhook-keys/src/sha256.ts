import type { HmacSha256 } from './hmac';
import { signedContent } from './signed-content';

// SHA-256 (FIPS 180-4) and HMAC (RFC 2104), written out for the verifier's portable build: v1
// verification must stay synchronous where only WebCrypto's asynchronous HMAC exists (Workers,
// browsers), and a general hash library costs several times these few hundred bytes in a
// receiver's bundle. Tested against node:crypto over every length around the block edges.

// FIPS 180-4 sections 4.2.2 and 5.3.3: the first 32 bits of the fractional parts of the cube
// roots of the first 64 primes (K) and of the square roots of the first 8 (the initial state),
// computed rather than listed (a third of the bytes). Doubles carry about 50 fractional bits
// here and no constant lies within 1/200 of a bit of its rounding edge, so any engine's
// `Math.cbrt` gives these exact values; the tests compare every digest with node:crypto.
const K = new Uint32Array(64);
const IV = new Uint32Array(8);
for (let n = 2, i = 0; i < 64; n += 1) {
  let prime = true;
  for (let d = 2; d * d <= n; d += 1) if (n % d === 0) prime = false;
  if (prime) {
    // A Uint32Array store truncates: the integer part of the fraction times 2^32.
    if (i < 8) IV[i] = (Math.sqrt(n) % 1) * 2 ** 32;
    K[i++] = (Math.cbrt(n) % 1) * 2 ** 32;
  }
}
const W = new Uint32Array(64);

const rotr = (x: number, n: number) => (x >>> n) | (x << (32 - n));

/** Runs the compression function over the whole 64-byte blocks of `data` from `at` to `end`. */
function compress(state: Uint32Array, data: DataView, at: number, end: number): void {
  for (; at < end; at += 64) {
    for (let i = 0; i < 64; i += 1) {
      if (i < 16) {
        W[i] = data.getUint32(at + 4 * i);
      } else {
        const x = W[i - 15] ?? 0;
        const y = W[i - 2] ?? 0;
        W[i] =
          (rotr(y, 17) ^ rotr(y, 19) ^ (y >>> 10)) +
          (W[i - 7] ?? 0) +
          (rotr(x, 7) ^ rotr(x, 18) ^ (x >>> 3)) +
          (W[i - 16] ?? 0);
      }
    }
    let a = state[0] ?? 0;
    let b = state[1] ?? 0;
    let c = state[2] ?? 0;
    let d = state[3] ?? 0;
    let e = state[4] ?? 0;
    let f = state[5] ?? 0;
    let g = state[6] ?? 0;
    let h = state[7] ?? 0;
    for (let i = 0; i < 64; i += 1) {
      const t1 =
        (h + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & f) ^ (~e & g)) + (K[i] ?? 0) + (W[i] ?? 0)) | 0;
      const t2 = ((rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c))) | 0;
      h = g;
      g = f;
      f = e;
      e = (d + t1) | 0;
      d = c;
      c = b;
      b = a;
      a = (t1 + t2) | 0;
    }
    state[0] = (state[0] ?? 0) + a;
    state[1] = (state[1] ?? 0) + b;
    state[2] = (state[2] ?? 0) + c;
    state[3] = (state[3] ?? 0) + d;
    state[4] = (state[4] ?? 0) + e;
    state[5] = (state[5] ?? 0) + f;
    state[6] = (state[6] ?? 0) + g;
    state[7] = (state[7] ?? 0) + h;
  }
}

const view = (bytes: Uint8Array) => new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);

/**
 * The digest of `data` hashed on from `from`, a state that has already taken `before` bytes
 * (a multiple of 64: HMAC's keyed block). The whole blocks are read in place; only the tail is
 * copied, into the padding.
 */
function finish(from: Uint32Array, before: number, data: Uint8Array): Uint8Array {
  const state = from.slice();
  const whole = data.length - (data.length % 64);
  compress(state, view(data), 0, whole);
  const tail = new Uint8Array(data.length - whole < 56 ? 64 : 128);
  tail.set(data.subarray(whole));
  tail[data.length - whole] = 0x80;
  const tailView = view(tail);
  const bits = (before + data.length) * 8;
  tailView.setUint32(tail.length - 8, Math.floor(bits / 0x100000000));
  tailView.setUint32(tail.length - 4, bits >>> 0);
  compress(state, tailView, 0, tail.length);
  const out = new Uint8Array(32);
  const outView = view(out);
  for (let i = 0; i < 8; i += 1) outView.setUint32(4 * i, state[i] ?? 0);
  return out;
}

/** SHA-256 of `data` (FIPS 180-4). */
export function sha256(data: Uint8Array): Uint8Array {
  return finish(IV, 0, data);
}

/** The state after one 64-byte block: the key XOR `pad`, as HMAC begins each of its two hashes. */
function keyed(key: Uint8Array, pad: number): Uint32Array {
  const block = new Uint8Array(64);
  for (let i = 0; i < 64; i += 1) block[i] = (key[i] ?? 0) ^ pad;
  const state = IV.slice();
  compress(state, view(block), 0, 64);
  return state;
}

/**
 * HMAC-SHA256 (RFC 2104) on the SHA-256 above: the keyed inner and outer states are computed
 * once per secret; each message costs its own blocks and two more.
 */
export const hmacSha256: HmacSha256 = (secret) => {
  const key = secret.length > 64 ? sha256(secret) : secret;
  const inner = keyed(key, 0x36);
  const outer = keyed(key, 0x5c);
  return (prefix, body) => finish(outer, 64, finish(inner, 64, signedContent(prefix, body)));
};
