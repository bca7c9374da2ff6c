// `npx tsx scripts/check-tarballs.ts` (in .ci/run, after the build): what a user receives, proven.
//
// 1. `npm pack` of every published package (its prepack builds, strips the "@holdfast/source"
//    condition and adds LICENSE and the migrations' .sql files); each tarball must hold LICENSE,
//    dist and no "@holdfast/source" condition, and nothing that points at a file it lacks.
// 2. A scratch project OUTSIDE the workspace (a temp dir): one `npm install` of the tarballs alone
//    (no peers, no workspace links), where every package's root entry loads by `import` and by
//    `require` (so an optional peer, such as ioredis for @holdfast/rate-limit, is never needed
//    at the root), and where @holdfast/db is installed once, no other package's dist carrying an
//    adapter of its own; then one more `npm install` of the peers the README examples import, from the
//    registry, at the versions the workspace uses.
// 3. Every ```ts runnable example of every packages/<name>/README.md, transpiled to an ES module
//    and to CommonJS (wrapped in an async function, since CommonJS has no top-level await) and
//    run with Node; then type-checked as written with moduleResolution NodeNext and Bundler
//    against the shipped .d.ts. Examples that need PostgreSQL run when DATABASE_URL is set (CI
//    sets it); without it they are type-checked only, and the summary says so.
// It fails when a tarball lacks a file its exports name, an example throws or exits non-zero,
// or an example does not type-check.
import { execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import postgres from 'postgres';
import ts from 'typescript';
import { npm, packTarballs, publishedPackages, ROOT } from './tarballs';

const keep = process.argv.includes('--keep');
const FENCE = /^```(\S*)(?:[ \t]+(\S+))?[ \t]*\n([\s\S]*?)^```[ \t]*$/gm;

interface Example {
  readonly pkg: string;
  readonly index: number;
  readonly line: number;
  readonly code: string;
  readonly needsPostgres: boolean;
}

const failures: string[] = [];
const fail = (message: string) => {
  failures.push(message);
  console.log(`✗ ${message}`);
};

const packages = publishedPackages();

const examples: Example[] = [];
for (const pkg of packages) {
  const text = readFileSync(join(ROOT, 'packages', pkg, 'README.md'), 'utf8');
  let index = 0;
  for (const match of text.matchAll(FENCE)) {
    const [, lang = '', info = '', code = ''] = match;
    if ((lang !== 'ts' && lang !== 'typescript') || info !== 'runnable') continue;
    const line = text.slice(0, match.index).split('\n').length;
    const needsPostgres = /from 'postgres'/.test(code) || /DATABASE_URL/.test(code);
    examples.push({ pkg, index: index++, line, code, needsPostgres });
  }
}

// A README's install lines name every package its examples import (another Holdfast package, a
// peer), so a reader who copies them gets a project where the examples run.
for (const pkg of packages) {
  const text = readFileSync(join(ROOT, 'packages', pkg, 'README.md'), 'utf8');
  const installed = new Set(
    [...text.matchAll(/^npm install (.+)$/gm)].flatMap(([, rest = '']) =>
      rest.replace(/#.*/, '').trim().split(/\s+/),
    ),
  );
  const missing = new Set<string>();
  for (const example of examples.filter((e) => e.pkg === pkg))
    for (const [, spec = ''] of example.code.matchAll(/from '([^']+)'/g)) {
      if (spec.startsWith('node:') || spec.startsWith('.') || spec.startsWith('/')) continue;
      const name = spec.startsWith('@')
        ? spec.split('/').slice(0, 2).join('/')
        : (spec.split('/')[0] ?? spec);
      if (!installed.has(name)) missing.add(name);
    }
  if (missing.size > 0)
    fail(
      `packages/${pkg}/README.md: examples import ${[...missing].join(', ')}, which no install line names`,
    );
}

const scratch = mkdtempSync(join(tmpdir(), 'holdfast-tarballs-'));
const tarballs = join(scratch, 'tarballs');
mkdirSync(tarballs);

/** A database of its own for the examples (`create database` on the server `url` names). */
async function createScratchDatabase(url: string): Promise<{ url: string; drop: () => Promise<void> }> {
  const name = `holdfast_tarballs_${randomBytes(6).toString('hex')}`;
  const admin = postgres(url, { max: 1, onnotice: () => {} });
  try {
    await admin.unsafe(`create database ${name}`);
  } finally {
    await admin.end();
  }
  const scratchUrl = new URL(url);
  scratchUrl.pathname = `/${name}`;
  return {
    url: scratchUrl.toString(),
    async drop() {
      const dropper = postgres(url, { max: 1, onnotice: () => {} });
      try {
        await dropper.unsafe(`drop database if exists ${name} with (force)`);
      } finally {
        await dropper.end();
      }
    },
  };
}

let scratchDatabase: { url: string; drop: () => Promise<void> } | undefined;

try {
  // 1. Pack, in one npm run (each package's prepack builds it). HOLDFAST_TARBALLS=<dir> packs
  // into that directory once and reuses it after, for iterating on the examples.
  const files = packTarballs(tarballs, packages);
  for (const [name, file] of files) {
    const listing = execFileSync('tar', ['tzf', join(tarballs, file)], { encoding: 'utf8' })
      .split('\n')
      .filter(Boolean)
      .map((f) => f.replace(/^package\//, ''));
    const packed = JSON.parse(
      execFileSync('tar', ['xzfO', join(tarballs, file), 'package/package.json'], { encoding: 'utf8' }),
    );
    if (!listing.includes('LICENSE')) fail(`${name}: the tarball has no LICENSE`);
    if (listing.some((f) => f.startsWith('src/'))) fail(`${name}: the tarball ships src/`);
    if (JSON.stringify(packed.exports).includes('@holdfast/source'))
      fail(`${name}: the published exports keep the @holdfast/source condition`);
    const targets: string[] = [];
    const collect = (value: unknown): void => {
      if (typeof value === 'string') targets.push(value);
      else if (value !== null && typeof value === 'object')
        for (const inner of Object.values(value)) collect(inner);
    };
    collect(packed.exports);
    for (const field of ['main', 'module', 'types'])
      if (typeof packed[field] === 'string') targets.push(packed[field]);
    for (const target of targets) {
      const path = target.replace(/^\.\//, '');
      if (!listing.includes(path)) fail(`${name}: its manifest names ${target}, which the tarball lacks`);
    }
    if (packed.engines?.node !== '>=20.19') fail(`${name}: engines.node is not ">=20.19"`);
  }

  // 2. The scratch project: the tarballs alone first.
  const project = join(scratch, 'project');
  mkdirSync(project);
  const deps = Object.fromEntries([...files].map(([name, file]) => [name, `file:../tarballs/${file}`]));
  writeFileSync(
    join(project, 'package.json'),
    `${JSON.stringify({ name: 'scratch', private: true, type: 'module', dependencies: deps, overrides: deps }, null, 2)}\n`,
  );
  console.log('npm install of the tarballs alone');
  npm(['install', '--omit=peer'], project);
  const roots = [...files.keys()];
  writeFileSync(
    join(project, 'roots.mjs'),
    `${roots.map((name, i) => `import * as m${i} from '${name}';\nif (Object.keys(m${i}).length === 0) throw new Error('${name}: empty');`).join('\n')}\n`,
  );
  writeFileSync(
    join(project, 'roots.cjs'),
    `${roots.map((name) => `if (Object.keys(require('${name}')).length === 0) throw new Error('${name}: empty');`).join('\n')}\n`,
  );
  for (const file of ['roots.mjs', 'roots.cjs']) {
    try {
      execFileSync('node', [file], { cwd: project, encoding: 'utf8', stdio: 'pipe' });
      console.log(`✓ every root entry loads without optional peers (${file})`);
    } catch (error) {
      fail(
        `a root entry does not load without its optional peers (${file}): ${String((error as { stderr?: string }).stderr ?? error)}`,
      );
    }
  }

  // The database boundary exists once in the tree: one @holdfast/db, and no other package's
  // dist carries an adapter of its own (a bundled copy numbered or named its statements apart).
  const installed = readdirSync(join(project, 'node_modules', '@holdfast'));
  if (!installed.includes('db')) fail('@holdfast/db is not installed with the tarballs');
  const ADAPTER = /sqlFragments|\$queryRawUnsafe|function fromPg\b|function fromPostgres\b/;
  const filesUnder = (dir: string): string[] =>
    readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
      entry.isDirectory() ? filesUnder(join(dir, entry.name)) : [join(dir, entry.name)],
    );
  for (const name of installed.filter((n) => n !== 'db')) {
    const dist = join(project, 'node_modules', '@holdfast', name, 'dist');
    for (const file of filesUnder(dist).filter((f) => /\.(c|m)?js$/.test(f)))
      if (ADAPTER.test(readFileSync(file, 'utf8')))
        fail(`@holdfast/${name}: ${file.slice(dist.length + 1)} carries a copy of a @holdfast/db adapter`);
    const nested = join(project, 'node_modules', '@holdfast', name, 'node_modules', '@holdfast', 'db');
    if (existsSync(nested)) fail(`@holdfast/${name} has a @holdfast/db of its own`);
  }
  console.log('✓ one @holdfast/db in the tree, no adapter bundled elsewhere');

  // Then the peers the examples import, at the workspace's versions.
  const rootManifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
  const known: Record<string, string> = {
    ...JSON.parse(readFileSync(join(ROOT, 'examples/reference-server/package.json'), 'utf8')).dependencies,
    ...rootManifest.devDependencies,
  };
  const peers = new Set(['typescript', '@types/node']);
  // What the READMEs' install lines name (a peer an entry needs though no example imports it,
  // such as @hono/node-server for /node), and what the examples import.
  for (const pkg of packages)
    for (const [, rest = ''] of readFileSync(join(ROOT, 'packages', pkg, 'README.md'), 'utf8').matchAll(
      /^npm install (.+)$/gm,
    ))
      for (const name of rest.replace(/#.*/, '').trim().split(/\s+/))
        if (!name.startsWith('@holdfast/')) peers.add(name);
  for (const example of examples)
    for (const [, spec = ''] of example.code.matchAll(/from '([^']+)'/g)) {
      if (
        spec.startsWith('node:') ||
        spec.startsWith('@holdfast/') ||
        spec.startsWith('.') ||
        spec.startsWith('/')
      )
        continue;
      const name = spec.startsWith('@')
        ? spec.split('/').slice(0, 2).join('/')
        : (spec.split('/')[0] ?? spec);
      peers.add(name);
    }
  const wanted = [...peers].sort().map((name) => {
    const range = known[name];
    if (!range) throw new Error(`an example imports ${name}, which no workspace manifest names`);
    return `${name}@${range}`;
  });
  console.log(`npm install ${wanted.join(' ')}`);
  npm(['install', ...wanted], project);

  // 3. The examples: ESM and CommonJS, then the type-check.
  const examplesDir = join(project, 'examples');
  mkdirSync(examplesDir);
  // The examples create the packages' tables as a new user would: in a database of their own,
  // made for this run and dropped after it, never one that other runs or tests have written to.
  if (process.env.DATABASE_URL) scratchDatabase = await createScratchDatabase(process.env.DATABASE_URL);
  const env = {
    ...process.env,
    ...(scratchDatabase ? { DATABASE_URL: scratchDatabase.url } : {}),
    REDIS_URL: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
    WEBHOOK_SECRET: `whsec_${randomBytes(24).toString('base64')}`,
    BILLING_WEBHOOK_SECRET: `whsec_${randomBytes(24).toString('base64')}`,
    CURSOR_SECRET: randomBytes(32).toString('base64url'),
  };
  const transpile = (code: string, module: ts.ModuleKind) =>
    ts.transpileModule(code, {
      compilerOptions: {
        module,
        target: ts.ScriptTarget.ES2022,
        esModuleInterop: true,
        verbatimModuleSyntax: false,
      },
    }).outputText;
  const run = (file: string) =>
    new Promise<{ code: number | null; output: string }>((resolve) => {
      const child = spawn('node', [file], { cwd: project, env, stdio: ['ignore', 'pipe', 'pipe'] });
      let output = '';
      child.stdout.on('data', (chunk) => {
        output += chunk;
      });
      child.stderr.on('data', (chunk) => {
        output += chunk;
      });
      const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
      child.on('close', (code) => {
        clearTimeout(timer);
        resolve({ code, output });
      });
    });
  let ran = 0;
  let typeOnly = 0;
  const sources: string[] = [];
  for (const example of examples) {
    const name = `${example.pkg}-${example.index}`;
    const where = `packages/${example.pkg}/README.md:${example.line}`;
    const source = /^\s*(import|export)\b/m.test(example.code)
      ? example.code
      : `${example.code}\nexport {};\n`;
    const tsFile = join(examplesDir, `${name}.ts`);
    writeFileSync(tsFile, source);
    sources.push(tsFile);
    writeFileSync(join(examplesDir, `${name}.mjs`), transpile(source, ts.ModuleKind.ESNext));
    writeFileSync(
      join(examplesDir, `${name}.cjs`),
      `(async () => {\n${transpile(source, ts.ModuleKind.CommonJS)}\n})().catch((error) => { console.error(error); process.exitCode = 1; });\n`,
    );
    if (example.needsPostgres && !process.env.DATABASE_URL) {
      typeOnly++;
      continue;
    }
    for (const format of ['mjs', 'cjs']) {
      const result = await run(join(examplesDir, `${name}.${format}`));
      if (result.code !== 0)
        fail(`${where} (${format}) exited ${result.code}:\n${result.output.trim().slice(0, 2000)}`);
      else ran++;
    }
  }
  console.log(`ran ${ran} example runs (${examples.length - typeOnly} examples, ESM and CommonJS each)`);
  if (typeOnly > 0)
    console.log(`! ${typeOnly} examples need PostgreSQL and DATABASE_URL is not set: type-checked only`);

  const base: ts.CompilerOptions = {
    strict: true,
    noUncheckedIndexedAccess: true,
    exactOptionalPropertyTypes: true,
    target: ts.ScriptTarget.ES2022,
    lib: ['lib.es2023.d.ts', 'lib.dom.d.ts', 'lib.dom.iterable.d.ts'],
    types: ['node'],
    typeRoots: [join(project, 'node_modules/@types')],
    noEmit: true,
    skipLibCheck: false,
  };
  for (const [label, options] of [
    ['NodeNext', { module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext }],
    ['Bundler', { module: ts.ModuleKind.ESNext, moduleResolution: ts.ModuleResolutionKind.Bundler }],
  ] as const) {
    const program = ts.createProgram(sources, { ...base, ...options });
    const ours = program
      .getSourceFiles()
      .filter(
        (file) => sources.includes(file.fileName) || file.fileName.includes('/node_modules/@holdfast/'),
      );
    const diagnostics = [
      ...program.getOptionsDiagnostics(),
      ...ours.flatMap((file) => [
        ...program.getSyntacticDiagnostics(file),
        ...program.getSemanticDiagnostics(file),
      ]),
    ];
    for (const diagnostic of diagnostics) {
      const file = diagnostic.file;
      const at = file
        ? `${file.fileName.replace(project, '<scratch>')}:${file.getLineAndCharacterOfPosition(diagnostic.start ?? 0).line + 1}`
        : '';
      fail(`${label}: ${at} ${ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n')}`);
    }
    if (diagnostics.length === 0)
      console.log(
        `✓ ${sources.length} examples type-check with moduleResolution ${label} against the shipped .d.ts`,
      );
  }
} finally {
  await scratchDatabase?.drop();
  if (keep) console.log(`scratch project kept at ${scratch}`);
  else rmSync(scratch, { recursive: true, force: true });
}

if (failures.length > 0) {
  console.error(`\n${failures.length} tarball check(s) failed`);
  process.exit(1);
}
console.log(
  `\nAll ${packages.length} tarballs install outside the workspace and run their ${examples.length} README examples.`,
);
