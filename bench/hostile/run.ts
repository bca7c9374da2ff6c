// bench/hostile (issue 28, finding 2): the event-loop delay a hostile 1 MiB body causes in the
// reference server, per body shape, beside a normal order. The server runs as `npm start` runs
// it (src/main.ts, API role) in its own process with perf_hooks.monitorEventLoopDelay preloaded
// (examples/reference-server/test/loop-monitor.ts); this process sends each shape `rounds`
// times, one request at a time, and reads the delay histogram after each shape. Target: no
// request blocks the loop for more than 50 ms.
//
//   npx tsx --conditions=@holdfast/source bench/hostile/run.ts [rounds]
//   DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npx tsx --conditions=@holdfast/source bench/hostile/run.ts
import { randomBytes } from 'node:crypto';
import postgres from 'postgres';
import {
  API_KEYS,
  send,
  shapes,
  startMonitoredServer,
} from '../../examples/reference-server/test/hostile-harness';
import { summary } from '../summary';

const rounds = Number(process.argv[2] ?? 20);
const base = process.env.DATABASE_URL;
const schema = `bench_hostile_${randomBytes(4).toString('hex')}`;
let databaseUrl = '';
if (base) {
  const admin = postgres(base, { max: 1, onnotice: () => {} });
  await admin.unsafe(`create schema ${schema}`);
  await admin.end();
  const url = new URL(base);
  url.searchParams.set('options', `-c search_path=${schema}`);
  databaseUrl = url.toString();
}

const server = await startMonitoredServer({
  DATABASE_URL: databaseUrl,
  HOLDFAST_DATA_DIR: 'memory://',
  HOLDFAST_API_KEYS: API_KEYS,
  HOLDFAST_ROLE: 'api',
  HOLDFAST_RATE_LIMIT: '1000000/1s',
  HOLDFAST_ADDRESS_RATE_LIMIT: '1000000/1s',
});

try {
  const created = await send(server.url, {
    name: 'order',
    method: 'POST',
    path: '/v1/orders',
    body: Buffer.from('{"currency":"EUR","total":100}'),
  });
  const orderId = (JSON.parse(created.text) as { id: string }).id;
  const all = shapes(orderId);
  // Warm-up: every path compiled once, so the rounds measure steady work.
  for (let i = 0; i < 3; i += 1) for (const shape of all) await send(server.url, shape);
  await server.loopDelay();

  const rows: string[][] = [];
  let worst = 0;
  for (const shape of all) {
    let bytes = 0;
    let status = 0;
    const started = performance.now();
    for (let round = 0; round < rounds; round += 1) {
      const answer = await send(server.url, shape);
      bytes = Buffer.byteLength(answer.text);
      status = answer.status;
    }
    const perRequest = (performance.now() - started) / rounds;
    const delay = await server.loopDelay();
    if (shape.name !== 'normal order') worst = Math.max(worst, delay.maxMs);
    rows.push([
      shape.name,
      String(shape.body?.length ?? 0),
      String(status),
      String(bytes),
      delay.maxMs.toFixed(1),
      delay.p99Ms.toFixed(1),
      perRequest.toFixed(1),
      (delay.cpuMs / rounds).toFixed(1),
    ]);
  }
  const header = [
    'body shape',
    'request bytes',
    'status',
    'response bytes',
    'loop max ms',
    'loop p99 ms',
    'ms per request',
    'server CPU ms per request',
  ];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) =>
    `| ${cells.map((c, i) => (i === 0 ? c.padEnd(widths[i] ?? 0) : c.padStart(widths[i] ?? 0))).join(' | ')} |`;
  console.log(
    `${base ? 'PostgreSQL' : 'PGlite'}; ${rounds} requests per shape, one at a time, after 3 warm-up rounds`,
  );
  console.log();
  console.log(line(header));
  console.log(`|${widths.map((w, i) => (i === 0 ? '-'.repeat(w + 2) : `${'-'.repeat(w + 1)}:`)).join('|')}|`);
  for (const row of rows) console.log(line(row));
  console.log();
  summary(import.meta.url, `hostile: worst event-loop delay ${worst.toFixed(1)} ms (target 50 ms)`);
} finally {
  await server.stop();
  if (base) {
    const admin = postgres(base, { max: 1, onnotice: () => {} });
    await admin.unsafe(`drop schema if exists ${schema} cascade`);
    await admin.end();
  }
}
