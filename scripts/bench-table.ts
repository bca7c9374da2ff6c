// Renders the root README's "Measured" table from the summary lines the benches last printed
// (bench/<area>/<script>.last.txt, written by bench/summary.ts), between the bench-table markers.
// `--check` (in .ci/run) fails when the README says something no bench printed.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';

const README = 'README.md';
const START = '<!-- bench-table:start (scripts/bench-table.ts renders this table) -->';
const END = '<!-- bench-table:end -->';

/** The benches the README quotes: where the line is, and what it measures. */
const ROWS: readonly { readonly bench: string; readonly script: string; readonly what: string }[] = [
  {
    bench: 'pagination',
    script: 'run',
    what: 'page at depth 500,000 of 1,000,000 rows vs page 1, keyset and OFFSET',
  },
  {
    bench: 'idempotency',
    script: 'run',
    what: 'POST with a key vs without, and the replay; postgres.js vs node-postgres through the Db boundary',
  },
  {
    bench: 'webhooks',
    script: 'verify',
    what: 'verify throughput vs `standardwebhooks`, `svix` and bare `node:crypto`',
  },
  { bench: 'webhooks', script: 'size', what: "the verifier's bundle, gzipped, vs `standardwebhooks`" },
  { bench: 'delivery', script: 'run', what: 'deliveries/s with one and two workers vs the bare limit' },
  {
    bench: 'delivery',
    script: 'fairness',
    what: "one account's deliveries beside another's hanging receivers, p99 vs alone",
  },
  {
    bench: 'delivery',
    script: 'run.ordered',
    what: 'deliveries/s to a per-resource endpoint vs an unordered one, and beside a stuck resource',
  },
  {
    bench: 'delivery',
    script: 'idle',
    what: "a webhook's insert-to-receipt at 200/s beside 1,000 endpoints with nothing to send vs alone",
  },
  {
    bench: 'history',
    script: 'run',
    what: '10 million rows of finished history vs none: throughput, a lease round, the lists, a day of retention',
  },
  {
    bench: 'latency',
    script: 'run',
    what: "from an order's `201` to its webhook's arrival, `npm start` on PostgreSQL",
  },
  { bench: 'soak', script: 'run', what: '30 s of `POST /v1/orders` at full speed: drained after the load' },
  {
    bench: 'server',
    script: 'run',
    what: 'the whole stack vs bare Hono running the same statements on the same driver',
  },
  {
    bench: 'hostile',
    script: 'run',
    what: "hostile requests' cost to everyone else: worst event-loop delay",
  },
];

function cell(text: string): string {
  return text.replaceAll('|', '\\|');
}

function render(): string {
  const lines = ['| Bench | What | Last printed summary | Run |', '|---|---|---|---|'];
  for (const { bench, script, what } of ROWS) {
    const file = `bench/${bench}/${script}.last.txt`;
    const link = `[\`bench/${bench}\`](bench/${bench}/README.md)`;
    if (!existsSync(file)) {
      lines.push(`| ${link} | ${cell(what)} | not run since its summary line was added | |`);
      continue;
    }
    const [line = '', run = ''] = readFileSync(file, 'utf8').split('\n');
    lines.push(`| ${link} | ${cell(what)} | \`${cell(line)}\` | ${cell(run.replace(/^run /, ''))} |`);
  }
  return lines.join('\n');
}

const readme = readFileSync(README, 'utf8');
const start = readme.indexOf(START);
const end = readme.indexOf(END);
if (start === -1 || end < start) {
  console.error(`bench-table: ${README} has no ${START} ... ${END} block`);
  process.exit(1);
}
const next = `${readme.slice(0, start + START.length)}\n${render()}\n${readme.slice(end)}`;
if (process.argv.includes('--check')) {
  if (next !== readme) {
    console.error(
      'bench-table: README.md does not show what the benches last printed; run `npm run bench:table`',
    );
    process.exit(1);
  }
  console.log("bench-table: README.md matches the benches' last printed lines");
} else {
  writeFileSync(README, next);
  console.log('bench-table: README.md updated');
}
