// Issue 17, "Must show": v1a (ed25519) verify beside bare node:crypto ed25519, and v1 verify of a
// string body (what `req.text()` and Express's text parser give) beside a byte body, each beside
// bare node:crypto, at 256 B, 1 KiB and 16 KiB, in one run.
// Usage: npx tsx --conditions=@holdfast/source bench/webhooks/schemes.ts
// A calibrated loop: each case runs in interleaved rounds of ~80 ms; the best round counts (the
// machine is shared, so the best round is the least disturbed one).
import { createHmac, createPublicKey, randomBytes, timingSafeEqual, verify } from 'node:crypto';
import { createSigner, generateKeyPair, generateSecret } from '@holdfast/webhook-signer';
import { ed25519Verify as nobleEd25519 } from '../../packages/webhook-verifier/src/ed25519';
import { ed25519Verify as nodeEd25519 } from '../../packages/webhook-verifier/src/ed25519-node';
import { hmacSha256 as nobleHmac } from '../../packages/webhook-verifier/src/hmac';
import { hmacSha256 as nodeHmac } from '../../packages/webhook-verifier/src/hmac-node';
import { verifierFactory } from '../../packages/webhook-verifier/src/verify';

const ROUNDS = Number(process.env.ROUNDS ?? 10);
const ROUND_MS = Number(process.env.ROUND_MS ?? 80);
const sizes = [256, 1024, 16 * 1024] as const;

const secret = generateSecret();
const hmacKey = Buffer.from(secret.slice('whsec_'.length), 'base64');
const { secretKey, publicKey } = generateKeyPair();
// Bare node:crypto is given the raw key as a JWK: nothing of ours on its path.
const nodeKey = createPublicKey({
  key: { kty: 'OKP', crv: 'Ed25519', x: Buffer.from(publicKey.slice(5), 'base64').toString('base64url') },
  format: 'jwk',
});

type Headers = Record<string, string>;
type Case = {
  name: string;
  body: 'bytes' | 'string';
  scheme: 'v1' | 'v1a';
  run: (h: Headers, b: Buffer | string) => unknown;
};

const check = (name: string, ok: boolean) => {
  if (!ok) throw new Error(`${name}: not verified`);
};
const oursNodeV1 = verifierFactory(nodeHmac, nodeEd25519)({ secrets: secret });
const oursNodeV1a = verifierFactory(nodeHmac, nodeEd25519)({ secrets: publicKey });
const oursNobleV1a = verifierFactory(nobleHmac, nobleEd25519)({ secrets: publicKey });

function bareV1(h: Headers, body: Buffer | string): void {
  // createHmac takes strings as they are: the least a receiver on Node can do.
  const expected = createHmac('sha256', hmacKey)
    .update(`${h['webhook-id']}.${h['webhook-timestamp']}.`)
    .update(body)
    .digest();
  for (const entry of (h['webhook-signature'] ?? '').split(' ')) {
    if (!entry.startsWith('v1,')) continue;
    const given = Buffer.from(entry.slice(3), 'base64');
    if (given.length === expected.length && timingSafeEqual(given, expected)) return;
  }
  throw new Error('bare v1: no match');
}

function bareV1a(h: Headers, body: Buffer | string): void {
  // ed25519 needs the whole message in one buffer: prefix and body, one copy.
  const prefix = `${h['webhook-id']}.${h['webhook-timestamp']}.`;
  const message =
    typeof body === 'string' ? Buffer.from(prefix + body) : Buffer.concat([Buffer.from(prefix), body]);
  for (const entry of (h['webhook-signature'] ?? '').split(' ')) {
    if (!entry.startsWith('v1a,')) continue;
    if (verify(null, message, nodeKey, Buffer.from(entry.slice(4), 'base64'))) return;
  }
  throw new Error('bare v1a: no match');
}

const cases: Case[] = [
  {
    name: 'v1 bytes: ours (node:crypto build)',
    body: 'bytes',
    scheme: 'v1',
    run: (h, b) => check('v1', oursNodeV1.verify(h, b).ok),
  },
  { name: 'v1 bytes: bare node:crypto', body: 'bytes', scheme: 'v1', run: bareV1 },
  {
    name: 'v1 string: ours (node:crypto build)',
    body: 'string',
    scheme: 'v1',
    run: (h, b) => check('v1', oursNodeV1.verify(h, b).ok),
  },
  { name: 'v1 string: bare node:crypto', body: 'string', scheme: 'v1', run: bareV1 },
  {
    name: 'v1a bytes: ours (node:crypto build)',
    body: 'bytes',
    scheme: 'v1a',
    run: (h, b) => check('v1a', oursNodeV1a.verify(h, b).ok),
  },
  {
    name: 'v1a bytes: ours (noble build)',
    body: 'bytes',
    scheme: 'v1a',
    run: (h, b) => check('v1a', oursNobleV1a.verify(h, b).ok),
  },
  { name: 'v1a bytes: bare node:crypto', body: 'bytes', scheme: 'v1a', run: bareV1a },
  {
    name: 'v1a string: ours (node:crypto build)',
    body: 'string',
    scheme: 'v1a',
    run: (h, b) => check('v1a', oursNodeV1a.verify(h, b).ok),
  },
  { name: 'v1a string: bare node:crypto', body: 'string', scheme: 'v1a', run: bareV1a },
];

function measure(c: Case, headers: Headers, body: Buffer | string): number {
  let ops = 0;
  const start = performance.now();
  let elapsed = 0;
  while (elapsed < ROUND_MS) {
    for (let i = 0; i < 16; i += 1) c.run(headers, body);
    ops += 16;
    elapsed = performance.now() - start;
  }
  return (ops / elapsed) * 1000;
}

const results = new Map<string, Map<number, number>>();
for (const size of sizes) {
  // A JSON body of exactly `size` bytes (ASCII, so the string and the bytes are the same length).
  const filler = randomBytes(size)
    .toString('base64')
    .slice(0, size - 12);
  const text = `{"data":"${filler}"}`.padEnd(size, ' ');
  const bytes = Buffer.from(text);
  const timestamp = Math.floor(Date.now() / 1000);
  const signed = {
    v1: { ...createSigner({ secrets: secret }).headers({ id: 'msg_bench', timestamp, body: bytes }) },
    v1a: { ...createSigner({ secrets: secretKey }).headers({ id: 'msg_bench', timestamp, body: bytes }) },
  };
  const inputs = (c: Case): [Headers, Buffer | string] => [
    signed[c.scheme],
    c.body === 'string' ? text : bytes,
  ];
  for (const c of cases) for (let i = 0; i < 300; i += 1) c.run(...inputs(c)); // warm-up
  for (let round = 0; round < ROUNDS; round += 1) {
    for (const c of cases) {
      const opsPerSecond = measure(c, ...inputs(c));
      const bySize = results.get(c.name) ?? new Map<number, number>();
      bySize.set(size, Math.max(bySize.get(size) ?? 0, opsPerSecond));
      results.set(c.name, bySize);
    }
  }
}

const label = (size: number) => (size >= 1024 ? `${size / 1024} KiB` : `${size} B`);
const fmt = (n: number) => Math.round(n).toLocaleString('en-US');
const get = (name: string, size: number) => results.get(name)?.get(size) ?? Number.NaN;
console.log(`Node ${process.version}, verify ops/s (best of ${ROUNDS} rounds of ${ROUND_MS} ms)\n`);
console.log(`| implementation | ${sizes.map(label).join(' | ')} |`);
console.log(`|---|${sizes.map(() => '---:').join('|')}|`);
for (const c of cases) console.log(`| ${c.name} | ${sizes.map((s) => fmt(get(c.name, s))).join(' | ')} |`);
console.log(
  '\n| ratio, ours (node:crypto build) / bare node:crypto | 256 B | 1 KiB | 16 KiB | target at 1 KiB |',
);
console.log('|---|---:|---:|---:|---:|');
for (const [what, ours, bare] of [
  ['v1, byte body', 'v1 bytes: ours (node:crypto build)', 'v1 bytes: bare node:crypto'],
  ['v1, string body', 'v1 string: ours (node:crypto build)', 'v1 string: bare node:crypto'],
  ['v1a, byte body', 'v1a bytes: ours (node:crypto build)', 'v1a bytes: bare node:crypto'],
  ['v1a, string body', 'v1a string: ours (node:crypto build)', 'v1a string: bare node:crypto'],
] as const) {
  const ratios = sizes.map((s) => `${(get(ours, s) / get(bare, s)).toFixed(2)}x`);
  console.log(`| ${what} | ${ratios.join(' | ')} | ≥ 0.9x |`);
}
const summary = (ours: string, bare: string) => (get(ours, 1024) / get(bare, 1024)).toFixed(2);
console.log(
  `\nsummary at 1 KiB: v1a ${summary('v1a bytes: ours (node:crypto build)', 'v1a bytes: bare node:crypto')}x bare ed25519; ` +
    `v1 string ${summary('v1 string: ours (node:crypto build)', 'v1 string: bare node:crypto')}x, ` +
    `v1 bytes ${summary('v1 bytes: ours (node:crypto build)', 'v1 bytes: bare node:crypto')}x bare HMAC`,
);
