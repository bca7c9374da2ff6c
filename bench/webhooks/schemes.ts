// Issue 17, "Must show": v1a (ed25519) verify beside bare node:crypto ed25519, and v1 verify of a
// string body (what `req.text()` and Express's text parser give) beside a byte body, each beside
// bare node:crypto, at 256 B, 1 KiB and 16 KiB, in one run.
// Usage: npx tsx --conditions=@holdfast/source bench/webhooks/schemes.ts
// Other people's load shares these cores, so absolute numbers drift by tens of percent within a
// run. Rounds are timed in this process's CPU time, and each ratio is measured in pairs: ours and bare back to back (alternating which
// goes first) for ~30 ms each, many times; the ratio reported is the median of the pairs' ratios.
// The ops/s table shows each case's best round.
import { createHmac, createPublicKey, randomBytes, timingSafeEqual, verify } from 'node:crypto';
import { createSigner, generateKeyPair, generateSecret } from '@holdfast/webhook-signer';
import { ed25519Verify as nodeEd25519 } from '../../packages/webhook-verifier/src/ed25519-node';
import { hmacSha256 as nodeHmac } from '../../packages/webhook-verifier/src/hmac-node';
import { verifierFactory } from '../../packages/webhook-verifier/src/verify';

const ROUNDS = Number(process.env.ROUNDS ?? 30);
const ROUND_MS = Number(process.env.ROUND_MS ?? 30);
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
  { name: 'v1a bytes: bare node:crypto', body: 'bytes', scheme: 'v1a', run: bareV1a },
  {
    name: 'v1a string: ours (node:crypto build)',
    body: 'string',
    scheme: 'v1a',
    run: (h, b) => check('v1a', oursNodeV1a.verify(h, b).ok),
  },
  { name: 'v1a string: bare node:crypto', body: 'string', scheme: 'v1a', run: bareV1a },
];

// This process's CPU time, not the wall clock: time spent waiting for a core that another
// process holds is not ours.
const cpuMs = () => {
  const usage = process.cpuUsage();
  return (usage.user + usage.system) / 1000;
};

function measure(c: Case, headers: Headers, body: Buffer | string): number {
  let ops = 0;
  const start = cpuMs();
  let elapsed = 0;
  while (elapsed < ROUND_MS) {
    for (let i = 0; i < 4; i += 1) c.run(headers, body);
    ops += 4;
    elapsed = cpuMs() - start;
  }
  return (ops / elapsed) * 1000;
}

const pairs = [
  ['v1, byte body', 'v1 bytes: ours (node:crypto build)', 'v1 bytes: bare node:crypto'],
  ['v1, string body', 'v1 string: ours (node:crypto build)', 'v1 string: bare node:crypto'],
  ['v1a, byte body', 'v1a bytes: ours (node:crypto build)', 'v1a bytes: bare node:crypto'],
  ['v1a, string body', 'v1a string: ours (node:crypto build)', 'v1a string: bare node:crypto'],
] as const;
const results = new Map<string, Map<number, number>>();
const ratios = new Map<string, Map<number, number[]>>();
const record = (name: string, size: number, opsPerSecond: number) => {
  const bySize = results.get(name) ?? new Map<number, number>();
  bySize.set(size, Math.max(bySize.get(size) ?? 0, opsPerSecond));
  results.set(name, bySize);
};
const byName = (name: string): Case => {
  const found = cases.find((c) => c.name === name);
  if (!found) throw new Error(`no case ${name}`);
  return found;
};

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
  for (const c of cases) for (let i = 0; i < 200; i += 1) c.run(...inputs(c)); // warm-up
  for (let round = 0; round < ROUNDS; round += 1) {
    for (const [what, oursName, bareName] of pairs) {
      const [ours, bare] = [byName(oursName), byName(bareName)];
      const first = round % 2 === 0 ? ours : bare;
      const second = first === ours ? bare : ours;
      const a = measure(first, ...inputs(first));
      const b = measure(second, ...inputs(second));
      const [o, r] = first === ours ? [a, b] : [b, a];
      record(ours.name, size, o);
      record(bare.name, size, r);
      const bySize = ratios.get(what) ?? new Map<number, number[]>();
      bySize.set(size, [...(bySize.get(size) ?? []), o / r]);
      ratios.set(what, bySize);
    }
    // The portable build's v1a is WebCrypto's, asynchronous (verifyAsync): not in these
    // synchronous rounds. On Node it is the same OpenSSL as the node:crypto build.
  }
}

const median = (xs: readonly number[]) => {
  const sorted = [...xs].sort((x, y) => x - y);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
};
const label = (size: number) => (size >= 1024 ? `${size / 1024} KiB` : `${size} B`);
const fmt = (n: number) => Math.round(n).toLocaleString('en-US');
const get = (name: string, size: number) => results.get(name)?.get(size) ?? Number.NaN;
const ratio = (what: string, size: number) => median(ratios.get(what)?.get(size) ?? []).toFixed(2);
console.log(
  `Node ${process.version}, verify ops per CPU second (best of ${ROUNDS} rounds of ${ROUND_MS} ms)\n`,
);
console.log(`| implementation | ${sizes.map(label).join(' | ')} |`);
console.log(`|---|${sizes.map(() => '---:').join('|')}|`);
for (const c of cases) console.log(`| ${c.name} | ${sizes.map((s) => fmt(get(c.name, s))).join(' | ')} |`);
console.log(
  `\n| ours (node:crypto build) / bare node:crypto, median of ${ROUNDS} paired rounds | 256 B | 1 KiB | 16 KiB | target at 1 KiB |`,
);
console.log('|---|---:|---:|---:|---:|');
for (const [what] of pairs) {
  const target = what === 'v1a, string body' ? '' : '≥ 0.9x';
  console.log(`| ${what} | ${sizes.map((s) => `${ratio(what, s)}x`).join(' | ')} | ${target} |`);
}
console.log(
  `\nsummary at 1 KiB: v1a ${ratio('v1a, byte body', 1024)}x bare node:crypto ed25519; ` +
    `v1 string ${ratio('v1, string body', 1024)}x and v1 bytes ${ratio('v1, byte body', 1024)}x bare node:crypto HMAC`,
);
