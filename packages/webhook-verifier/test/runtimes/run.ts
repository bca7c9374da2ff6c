// Runs the signer's and verifier's vectors (vectors.ts, and svix.ts: the Svix server's v1a keys
// in their 64-byte whsk_ and DER whpk_ forms) on real runtimes: Node, Deno and Bun on
// both crypto files (Deno and Bun match the `node` condition, so `#hmac` and `#ed25519` are
// node:crypto there by default; the portable files are what a bundler targeting them may pick),
// and workerd (the Cloudflare Workers runtime) on the portable files, served over loopback HTTP. The binaries are
// the npm packages `deno`, `bun` and `workerd`: nothing is downloaded.
// Usage: npx tsx packages/webhook-verifier/test/runtimes/run.ts [--from=dist|src]
//   dist (default, after `npm run build`): the files that are published; src: the live source.
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, type Plugin } from 'esbuild';
import type { Outcome } from './vectors';

type Build = 'portable' | 'node';
type Runtime = 'node' | 'deno' | 'bun' | 'workerd';

const here = fileURLToPath(new URL('.', import.meta.url));
const root = resolve(here, '../../../..');
const from = process.argv.includes('--from=src') ? 'src' : 'dist';
const bin = (name: string) => join(root, 'node_modules', '.bin', name);
const work = mkdtempSync(join(tmpdir(), 'holdfast-runtimes-'));

function sources(): { signer: string; verifier: string; v1: string } {
  const pkg = (name: string) => join(root, 'packages', name);
  if (from === 'src') {
    return {
      signer: join(pkg('webhook-signer'), 'src/index.ts'),
      verifier: join(pkg('webhook-verifier'), 'src/index.ts'),
      v1: join(pkg('webhook-verifier'), 'src/v1.ts'),
    };
  }
  return {
    signer: join(pkg('webhook-signer'), 'dist/index.js'),
    verifier: join(pkg('webhook-verifier'), 'dist/index.js'),
    v1: join(pkg('webhook-verifier'), 'dist/v1.js'),
  };
}

// `crypto` as `node:crypto`, the one spelling every runtime accepts.
const nodeCrypto: Plugin = {
  name: 'node-crypto',
  setup(b) {
    b.onResolve({ filter: /^(node:)?crypto$/ }, () => ({ path: 'node:crypto', external: true }));
  },
};

// The verifier's @noble/curves fallback left out of the bundle (the signer's curve stays in): a
// runtime without WebCrypto Ed25519 would fail the v1a vectors instead of passing on the fallback.
const noFallback: Plugin = {
  name: 'no-fallback',
  setup(b) {
    b.onResolve({ filter: /^@noble\/curves/ }, (args) =>
      args.importer.includes('webhook-verifier') ? { path: args.path, external: true } : undefined,
    );
  },
};

async function bundle(kind: Build, worker: boolean): Promise<string> {
  const { signer, verifier, v1 } = sources();
  const contents = [
    `import * as signer from ${JSON.stringify(signer)};`,
    `import { createVerifier } from ${JSON.stringify(verifier)};`,
    `import { createVerifier as createV1Verifier } from ${JSON.stringify(v1)};`,
    `import { runVectors } from ${JSON.stringify(join(here, 'vectors.ts'))};`,
    'const run = () => runVectors({ ...signer, createVerifier, createV1Verifier });',
    worker
      ? 'export default { fetch: async () => Response.json(await run()) };'
      : 'console.log(JSON.stringify(await run()));',
  ].join('\n');
  const file = join(work, `${kind}${worker ? '-worker' : ''}.mjs`);
  await build({
    stdin: { contents, resolveDir: root, loader: 'ts' },
    bundle: true,
    format: 'esm',
    outfile: file,
    platform: kind === 'node' ? 'node' : 'neutral',
    mainFields: ['module', 'main'],
    // The `node` condition picks node:crypto for `#hmac` and `#ed25519`, as Node, Deno and Bun do.
    conditions: [
      ...(from === 'src' ? ['@holdfast/source'] : []),
      ...(kind === 'node' ? ['node'] : []),
      'import',
      'default',
    ],
    plugins: kind === 'node' ? [nodeCrypto, noFallback] : [noFallback],
    logLevel: 'silent',
  });
  return file;
}

function exec(command: string, args: string[], env: NodeJS.ProcessEnv = {}): Promise<string> {
  return new Promise((done, failed) => {
    const child = spawn(command, args, { cwd: work, env: { ...process.env, ...env } });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => {
      out += d;
    });
    child.stderr.on('data', (d) => {
      err += d;
    });
    child.on('error', failed);
    child.on('close', (code) =>
      code === 0 ? done(out) : failed(new Error(`${command} exited ${code}: ${err.slice(0, 2000)}`)),
    );
  });
}

function freePort(): Promise<number> {
  return new Promise((done, failed) => {
    const server = createServer();
    server.on('error', failed);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => done(port));
    });
  });
}

async function onWorkerd(file: string): Promise<string> {
  const port = await freePort();
  const config = join(work, 'workerd.capnp');
  writeFileSync(
    config,
    `using Workerd = import "/workerd/workerd.capnp";
const config :Workerd.Config = (
  services = [(name = "main", worker = .vectors)],
  sockets = [(name = "http", address = "127.0.0.1:${port}", http = (), service = "main")],
);
const vectors :Workerd.Worker = (
  modules = [(name = "worker", esModule = embed "${file.split('/').pop()}")],
  compatibilityDate = "2025-09-01",
);
`,
  );
  const child = spawn(bin('workerd'), ['serve', config], { cwd: work, stdio: ['ignore', 'ignore', 'pipe'] });
  let err = '';
  child.stderr.on('data', (d) => {
    err += d;
  });
  try {
    for (let attempt = 0; attempt < 100; attempt += 1) {
      if (child.exitCode !== null) throw new Error(`workerd exited ${child.exitCode}: ${err.slice(0, 2000)}`);
      try {
        const response = await fetch(`http://127.0.0.1:${port}/`);
        return await response.text();
      } catch {
        await new Promise((r) => setTimeout(r, 100));
      }
    }
    throw new Error(`workerd did not answer: ${err.slice(0, 2000)}`);
  } finally {
    child.kill();
  }
}

async function run(runtime: Runtime, kind: Build): Promise<Outcome[]> {
  const file = await bundle(kind, runtime === 'workerd');
  const output =
    runtime === 'node'
      ? await exec(process.execPath, [file])
      : runtime === 'deno'
        ? await exec(bin('deno'), ['run', '--quiet', '--no-prompt', '--no-config', file], {
            DENO_NO_UPDATE_CHECK: '1',
            DENO_DIR: join(work, 'deno'),
          })
        : runtime === 'bun'
          ? await exec(bin('bun'), ['run', file])
          : await onWorkerd(file);
  return JSON.parse(output) as Outcome[];
}

// The private @holdfast/webhook-keys is bundled into each package at build time: published
// files that imported it would fail to install anywhere.
if (from === 'dist') {
  for (const pkg of ['webhook-signer', 'webhook-verifier']) {
    for (const file of readdirSync(join(root, 'packages', pkg, 'dist'), { recursive: true })) {
      const text = String(file).match(/\.(c?js|d\.c?ts)$/)
        ? readFileSync(join(root, 'packages', pkg, 'dist', String(file)), 'utf8')
        : '';
      if (/(from|require\()\s*['"]@holdfast\/webhook-keys/.test(text)) {
        console.error(`${pkg}/dist/${String(file)} imports @holdfast/webhook-keys at run time`);
        process.exit(1);
      }
    }
  }
}

const matrix: [Runtime, Build][] = [
  ['node', 'portable'],
  ['node', 'node'],
  ['deno', 'portable'],
  ['deno', 'node'],
  ['bun', 'portable'],
  ['bun', 'node'],
  ['workerd', 'portable'],
];
let failed = 0;
const rows: string[] = [];
try {
  for (const [runtime, kind] of matrix) {
    try {
      const outcomes = await run(runtime, kind);
      const bad = outcomes.filter((o) => !o.ok);
      failed += bad.length;
      const svix = outcomes.filter((o) => o.ok && o.name.startsWith('svix:')).length;
      rows.push(`| ${runtime} | ${kind} | ${outcomes.length - bad.length} | ${svix} | ${bad.length} |`);
      for (const o of bad) rows.push(`|   | ✗ ${o.name}: ${o.error ?? ''} | | | |`);
    } catch (error) {
      failed += 1;
      rows.push(
        `| ${runtime} | ${kind} | 0 | 0 | ✗ ${error instanceof Error ? error.message : String(error)} |`,
      );
    }
  }
} finally {
  rmSync(work, { recursive: true, force: true });
}
console.log(`Webhook vectors on real runtimes (from ${from})\n`);
console.log('| runtime | build | passed | of which Svix | failed |\n|---|---|---:|---:|---:|');
for (const row of rows) console.log(row);
if (failed > 0) {
  console.error(`\n${failed} failure(s)`);
  process.exit(1);
}
