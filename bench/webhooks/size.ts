// What a receiver pays for a Standard Webhooks verifier, as a user gets it (issue 38, "Must
// show"): each package packed (ours: `npm pack` of the built dist, with the manifest its prepack
// writes) or taken from the registry at the workspace's version, installed alone by `npm install` in a scratch project
// outside the workspace, its node_modules summed; then a script importing only the verifier
// bundled from that install by esbuild the same way for all (ESM, platform neutral, the
// `import`/`default` conditions a browser or Workers bundle gets, minified, dependencies
// included) and gzipped at level 9.
// Usage: npm run build -w @holdfast/webhook-verifier && npx tsx bench/webhooks/size.ts  (~20 s)
import { execFileSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';
import { summary } from '../summary';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const work = mkdtempSync(join(tmpdir(), 'holdfast-webhooks-size-'));

interface Row {
  name: string;
  installed: number;
  packages: number;
  minified: number;
  gzipped: number;
}

const versionOf = (name: string): string =>
  JSON.parse(readFileSync(join(ROOT, 'node_modules', name, 'package.json'), 'utf8')).version;

/** Bytes of every file under `dir`, and how many packages (folders with a package.json) it holds. */
function measure(dir: string): { bytes: number; packages: number } {
  let bytes = 0;
  let packages = 0;
  for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const path = join(entry.parentPath, entry.name);
    if (entry.name === '.package-lock.json') continue;
    bytes += statSync(path).size;
    // A package's root: node_modules/<name>/package.json or node_modules/@scope/<name>/package.json.
    if (entry.name === 'package.json' && /node_modules\/(@[^/]+\/)?[^/@]+$/.test(entry.parentPath))
      packages += 1;
  }
  return { bytes, packages };
}

/** A scratch project with `spec` alone installed, as `npm install` gives it to a user. */
function install(name: string, spec: string): string {
  const dir = join(work, name.replace(/[^a-z0-9]+/gi, '-'));
  mkdirSync(dir);
  writeFileSync(
    join(dir, 'package.json'),
    JSON.stringify({ name: 'scratch', private: true, type: 'module' }),
  );
  execFileSync(
    'npm',
    ['install', '--prefer-offline', '--no-audit', '--no-fund', '--ignore-scripts', '--loglevel=error', spec],
    { cwd: dir, stdio: ['ignore', 'ignore', 'inherit'] },
  );
  return dir;
}

async function bundled(dir: string, contents: string): Promise<{ minified: number; gzipped: number }> {
  const result = await build({
    stdin: { contents, resolveDir: dir, loader: 'js' },
    bundle: true,
    write: false,
    minify: true,
    format: 'esm',
    platform: 'neutral',
    mainFields: ['module', 'main'],
    // Not "node": that condition picks our node:crypto build, which no browser or Worker gets.
    conditions: ['import', 'default'],
    logLevel: 'silent',
  });
  const code = result.outputFiles[0]?.contents ?? new Uint8Array();
  return { minified: code.length, gzipped: gzipSync(code, { level: 9 }).length };
}

const rows: Row[] = [];
try {
  // The package's prepack without its build (run beforehand: a build takes minutes on a shared
  // machine): the published manifest, restored after the pack.
  const pkg = join(ROOT, 'packages/webhook-verifier');
  if (!existsSync(join(pkg, 'dist/v1.js')))
    throw new Error('build first: npm run build -w @holdfast/webhook-verifier');
  const run = (command: string, args: string[]) =>
    execFileSync(command, args, { cwd: pkg, stdio: ['ignore', 'ignore', 'inherit'] });
  run('node', ['../../scripts/pack-manifest.mjs', 'strip']);
  try {
    run('npm', ['pack', '--ignore-scripts', '--pack-destination', work, '--loglevel=error']);
  } finally {
    run('node', ['../../scripts/pack-manifest.mjs', 'restore']);
  }
  const tarball = readdirSync(work).find((file) => file.endsWith('.tgz'));
  if (!tarball) throw new Error('npm pack wrote no tarball');
  const ours = install('ours', join(work, tarball));
  const standard = `standardwebhooks@${versionOf('standardwebhooks')}`;
  const svix = `svix@${versionOf('svix')}`;
  const targets: [string, string, string][] = [
    [
      '@holdfast/webhook-verifier/v1 (`createVerifier`, v1 only)',
      ours,
      "export { createVerifier } from '@holdfast/webhook-verifier/v1';",
    ],
    [
      '@holdfast/webhook-verifier (`createVerifier`, v1 and v1a; without the optional `@noble/curves`)',
      ours,
      "export { createVerifier } from '@holdfast/webhook-verifier';",
    ],
    [
      `${standard} (\`Webhook\`, v1 only)`,
      install('standard', standard),
      "export { Webhook } from 'standardwebhooks';",
    ],
    [`${svix} (\`Webhook\`, v1 only)`, install('svix', svix), "export { Webhook } from 'svix';"],
  ];
  for (const [name, dir, contents] of targets) {
    const { bytes, packages } = measure(join(dir, 'node_modules'));
    rows.push({ name, installed: bytes, packages, ...(await bundled(dir, contents)) });
  }
} finally {
  rmSync(work, { recursive: true, force: true });
}

const n = (value: number) => value.toLocaleString('en-US');
const table = [
  '| package (what the script imports) | installed (packages) | minified | minified + gzip |',
  '|---|---:|---:|---:|',
  ...rows.map(
    (row) =>
      `| ${row.name} | ${n(row.installed)} B (${row.packages}) | ${n(row.minified)} B | ${n(row.gzipped)} B |`,
  ),
];
console.log(table.join('\n'));
const [v1, full, theirs] = rows;
if (v1 && full && theirs) {
  const kb = (bytes: number) => `${n(Math.round(bytes / 1000))} kB`;
  const line = `webhooks size: ${n(v1.gzipped)} B gzipped (v1 only; ${n(full.gzipped)} B with v1a) vs standardwebhooks ${n(theirs.gzipped)} B (${(v1.gzipped / theirs.gzipped).toFixed(2)}x); installed ${kb(full.installed)} vs ${kb(theirs.installed)}`;
  summary(import.meta.url, line);
  // The package README quotes this run, table and line, instead of numbers typed by hand.
  const readme = join(ROOT, 'packages/webhook-verifier/README.md');
  const text = readFileSync(readme, 'utf8');
  const start = '<!-- size:start (bench/webhooks/size.ts writes this block) -->';
  const end = '<!-- size:end -->';
  const from = text.indexOf(start);
  const to = text.indexOf(end);
  if (from === -1 || to < from) throw new Error(`${readme} has no ${start} ... ${end} block`);
  const day = new Date().toISOString().slice(0, 10);
  const block = [start, '', ...table, '', `\`${line}\` (${day})`, '', end];
  writeFileSync(readme, `${text.slice(0, from)}${block.join('\n')}${text.slice(to + end.length)}`);
}
