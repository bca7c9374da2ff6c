// Issue 35, finding 1: one connection pipelines GET /openapi.json and never reads its answers,
// while another client (another /24) keeps asking for /livez and /openapi.json. Prints the
// server's peak RSS during the attack and after the socket closes, how many answers the attacker
// could have received, and the other client's worst and median wait.
//
//   npx tsx --conditions=@holdfast/source bench/pipelining/run.ts [requests] [seconds]
//
// Runs on PostgreSQL (DATABASE_URL, a fresh database is not needed: only keyless routes are
// used) or on PGlite in memory. HOLDFAST_PUBLIC_RATE_LIMIT is raised so that the bound on
// pipelining is measured, not the rate limit; set BENCH_BOUND=off to see it without the bound.
import { readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { startReferenceServer } from '../reference-server';

const requests = Number(process.argv[2] ?? 20_000);
const seconds = Number(process.argv[3] ?? 15);
const { child, url } = await startReferenceServer({
  HOLDFAST_ROLE: 'api',
  HOLDFAST_SEED_DEMO_DATA: '0',
  ...(process.env.DATABASE_URL ? {} : { HOLDFAST_DATA_DIR: 'memory://', DATABASE_URL: '' }),
  HOLDFAST_PUBLIC_RATE_LIMIT: '1000000/1s',
  ...(process.env.BENCH_BOUND === 'off' ? { HOLDFAST_MAX_PIPELINED: '1000000' } : {}),
});
const { port } = new URL(url);
const rss = () => {
  const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'));
  return Number(match?.[1] ?? 0) / 1024;
};

// Warm up: the document is built on its first request.
await (await fetch(`${url}/openapi.json`)).arrayBuffer();
const before = rss();

const attacker = connect({ port: Number(port), host: '127.0.0.1', localAddress: '127.0.1.1' });
// Never reads until the end: 'end' (the server closing) is still seen through 'readable'.
attacker.pause();
let closedAt: number | undefined;
attacker.on('error', () => {
  closedAt ??= performance.now();
});
await new Promise((resolve) => attacker.once('connect', resolve));
const request = Buffer.from(`GET /openapi.json HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n\r\n`);
attacker.write(Buffer.concat(Array.from({ length: requests }, () => request)));
const started = performance.now();

const waits: number[] = [];
let peak = before;
while (performance.now() - started < seconds * 1000) {
  const t0 = performance.now();
  const path = waits.length % 2 === 0 ? '/livez' : '/openapi.json';
  await (await fetch(`${url}${path}`)).arrayBuffer();
  waits.push(performance.now() - t0);
  peak = Math.max(peak, rss());
  await sleep(100);
}
// What the attacker's socket holds unread: the answers the server managed to send it.
attacker.resume();
let received = 0;
attacker.on('data', (chunk: Buffer) => {
  received += chunk.length;
});
await sleep(1000);
attacker.destroy();
await sleep(2000);
const after = rss();
waits.sort((a, b) => a - b);
const answers = received / Math.max(1, (await (await fetch(`${url}/openapi.json`)).arrayBuffer()).byteLength);
console.log(
  `| pipelined requests | bound | RSS before MB | RSS peak MB | RSS after close MB | answers sent | reset by server after ms | other client p50 ms | other client max ms |`,
);
console.log(`|---:|---|---:|---:|---:|---:|---:|---:|---:|`);
console.log(
  `| ${requests} | ${process.env.BENCH_BOUND === 'off' ? 'off' : 'on'} | ${before.toFixed(0)} | ${peak.toFixed(0)} | ${after.toFixed(0)} | ${answers.toFixed(1)} | ${closedAt === undefined ? 'no' : (closedAt - started).toFixed(0)} | ${waits[Math.floor(waits.length / 2)]?.toFixed(1)} | ${waits.at(-1)?.toFixed(1)} |`,
);
child.kill('SIGTERM');
