// `npm run check:adopters` (in .ci/run): the packages composed outside the monorepo, as an
// adopter composes them. For every service under adopters/services/<name>/ (one framework and
// one driver each):
// 1. its own project in a temp dir: its package.json, with each `"@holdfast/<pkg>": "tarball"`
//    pointing at the packed tarball, one `npm install` (frameworks and drivers from the
//    registry; the npm cache serves what it has); the modules its manifest lists under
//    `adopter.absent` (postgres, for a node-postgres service) must not be in node_modules;
// 2. its `adopter.prepare` script when it has one (Prisma's client generation);
// 3. `tsc --noEmit` with the service's tsconfig (skipLibCheck false: our .d.ts are checked too);
// 4. the service started on a database of its own, driven over HTTP by ./driver.ts, then
//    stopped with SIGTERM (it must exit by itself within 15 s).
// Services run a few at a time (HOLDFAST_ADOPTERS_JOBS, default 2); `--only a,b` picks some,
// `--keep` keeps the temp dir, HOLDFAST_TARBALLS=<dir> reuses tarballs packed earlier.
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  cpSync,
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
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import pg from 'pg';
import { packTarballs, ROOT } from '../scripts/tarballs';
import { drive } from './driver';

const exec = promisify(execFile);
const HERE = join(ROOT, 'adopters');
const keep = process.argv.includes('--keep');
const onlyAt = process.argv.indexOf('--only');
const only = onlyAt > 0 ? new Set((process.argv[onlyAt + 1] ?? '').split(',')) : undefined;
const jobs = Number(process.env.HOLDFAST_ADOPTERS_JOBS ?? 2);
const serverUrl = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

interface Manifest {
  dependencies?: Record<string, string>;
  overrides?: Record<string, string>;
  adopter?: { absent?: string[]; prepare?: string; describe?: string };
}

interface Result {
  readonly name: string;
  readonly passed: string[];
  readonly failed: string[];
  readonly notes?: string[];
  readonly seconds: number;
}

const services = readdirSync(join(HERE, 'services'))
  .filter((name) => existsSync(join(HERE, 'services', name, 'package.json')))
  .filter((name) => only === undefined || only.has(name))
  .sort();

const scratch = mkdtempSync(join(tmpdir(), 'holdfast-adopters-'));
const tarballs = join(scratch, 'tarballs');
mkdirSync(tarballs);

async function withAdmin<T>(work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: serverUrl });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

const run = async (command: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = process.env) => {
  try {
    await exec(command, args, { cwd, env, maxBuffer: 64 * 1024 * 1024 });
    return undefined;
  } catch (error) {
    const { stdout = '', stderr = '' } = error as { stdout?: string; stderr?: string };
    return `${stdout}${stderr}`.trim() || String(error);
  }
};

/** Starts the service; resolves with what it printed on its `READY {json}` line. */
function start(
  dir: string,
  env: NodeJS.ProcessEnv,
  log: string[],
): { child: ChildProcess; ready: Promise<{ url: string; key: string }> } {
  // Node itself with tsx's loader, not the tsx command: the command relays SIGTERM and, when the
  // child does not acknowledge it within 30 ms (an event loop busy on a loaded machine), kills it
  // (exit 143), so the graceful stop under test never ran.
  const loader = pathToFileURL(join(ROOT, 'node_modules', 'tsx', 'dist', 'loader.mjs')).href;
  const child = spawn(process.execPath, ['--import', loader, 'service.ts'], {
    cwd: dir,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const ready = new Promise<{ url: string; key: string }>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('no READY line within 60 s')), 60_000);
    let buffer = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      buffer += chunk.toString();
      log.push(chunk.toString());
      const line = buffer.split('\n').find((l) => l.startsWith('READY '));
      if (line) {
        clearTimeout(timer);
        resolve(JSON.parse(line.slice('READY '.length)));
      }
    });
    child.stderr?.on('data', (chunk: Buffer) => log.push(chunk.toString()));
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`exited ${code} before READY`));
    });
  });
  return { child, ready };
}

async function check(name: string, files: Map<string, string>): Promise<Result> {
  const began = Date.now();
  const passed: string[] = [];
  const failed: string[] = [];
  const notes: string[] = [];
  const step = (label: string, problem: string | undefined) => {
    if (problem === undefined) passed.push(label);
    else failed.push(`${label}:\n${problem.slice(0, 4000)}`);
    return problem === undefined;
  };
  const dir = join(scratch, name);
  cpSync(join(HERE, 'services', name), dir, { recursive: true });
  cpSync(join(HERE, 'services', 'common.ts'), join(dir, 'common.ts'));
  const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as Manifest;
  const local: Record<string, string> = {};
  for (const [dependency, range] of Object.entries(manifest.dependencies ?? {})) {
    if (range !== 'tarball') continue;
    const file = files.get(dependency);
    if (!file) throw new Error(`${name}: no tarball of ${dependency}`);
    local[dependency] = `file:../tarballs/${file}`;
  }
  // The tarballs name each other at their version, which no registry has yet: the overrides
  // point those at the tarballs too, as a reader installing them side by side gets.
  writeFileSync(
    join(dir, 'package.json'),
    `${JSON.stringify({ ...manifest, dependencies: { ...manifest.dependencies, ...local }, overrides: local }, null, 2)}\n`,
  );
  const database = `holdfast_adopters_${name.replace(/[^a-z0-9]/g, '_')}_${randomBytes(4).toString('hex')}`;
  const databaseUrl = new URL(serverUrl);
  databaseUrl.pathname = `/${database}`;
  let child: ChildProcess | undefined;
  const log: string[] = [];
  try {
    if (
      !step('npm install', await run('npm', ['install', '--no-audit', '--no-fund', '--loglevel=error'], dir))
    )
      return { name, passed, failed, notes, seconds: 0 };
    for (const absent of manifest.adopter?.absent ?? [])
      step(
        `${absent} is not installed`,
        existsSync(join(dir, 'node_modules', absent))
          ? `node_modules/${absent} is there (${await why(dir, absent)})`
          : undefined,
      );
    if (manifest.adopter?.prepare)
      if (
        !step(
          manifest.adopter.prepare,
          await run('npm', ['run', manifest.adopter.prepare, '--silent'], dir, {
            ...process.env,
            PRISMA_SCHEMA_ENGINE_BINARY: '/bin/true',
            PRISMA_HIDE_UPDATE_MESSAGE: '1',
          }),
        )
      )
        return { name, passed, failed, notes, seconds: (Date.now() - began) / 1000 };
    const typed = await typecheck(dir);
    step('tsc --noEmit (skipLibCheck: false): the service and every @holdfast .d.ts', typed.ours);
    if (typed.others) notes.push(`tsc: errors in other libraries' .d.ts, not counted:\n${typed.others}`);
    await withAdmin((admin) => admin.query(`create database ${database}`));
    const started = start(
      dir,
      { ...process.env, DATABASE_URL: databaseUrl.toString(), NODE_ENV: 'production' },
      log,
    );
    child = started.child;
    let ready: { url: string; key: string };
    try {
      ready = await started.ready;
      passed.push('starts (migrations, API key, webhook endpoint, worker, receiver)');
    } catch (error) {
      failed.push(`start: ${String(error)}\n${log.join('').trim().slice(-4000)}`);
      return { name, passed, failed, notes, seconds: (Date.now() - began) / 1000 };
    }
    const outcome = await drive({
      name,
      url: ready.url,
      key: ready.key,
      databaseUrl: databaseUrl.toString(),
    });
    passed.push(...outcome.passed);
    failed.push(...outcome.failed);
    const exited = new Promise<number | null>((resolve) => child?.once('exit', (code) => resolve(code)));
    child.kill('SIGTERM');
    const code = await Promise.race([
      exited,
      new Promise<'hung'>((resolve) => setTimeout(() => resolve('hung'), 15_000)),
    ]);
    step(
      'stops on SIGTERM (worker drained, pools ended)',
      code === 0 ? undefined : `exit ${code}\n${log.join('').trim().slice(-2000)}`,
    );
    child = undefined;
  } finally {
    child?.kill('SIGKILL');
    await withAdmin((admin) => admin.query(`drop database if exists ${database} with (force)`)).catch(
      () => {},
    );
  }
  return { name, passed, failed, notes, seconds: (Date.now() - began) / 1000 };
}

/** Which installed packages depend on `module` (`npm explain`). */
async function why(dir: string, module: string): Promise<string> {
  try {
    const { stdout } = await exec('npm', ['explain', module, '--json'], { cwd: dir });
    const nodes = JSON.parse(stdout) as {
      dependents?: { from?: { name?: string }; spec?: string; type?: string }[];
    }[];
    const by = nodes.flatMap((node) =>
      (node.dependents ?? []).map((d) => `${d.from?.name ?? 'the service'} (${d.type} ${d.spec})`),
    );
    return `required by ${[...new Set(by)].join(', ')}`;
  } catch (error) {
    return String(error).slice(0, 300);
  }
}

/**
 * `tsc --noEmit -p tsconfig.json` in the service. What it reports in the service's own files and
 * in @holdfast's .d.ts fails the check; what it reports inside other libraries (a framework's
 * .d.ts that does not pass skipLibCheck: false) is kept as a note, since no change of ours fixes it.
 */
async function typecheck(dir: string): Promise<{ ours: string | undefined; others: string | undefined }> {
  const output = await run(
    process.execPath,
    [join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.json', '--pretty', 'false'],
    dir,
  );
  if (output === undefined) return { ours: undefined, others: undefined };
  const ours: string[] = [];
  const others: string[] = [];
  let into = ours;
  for (const line of output.split('\n')) {
    if (!line.startsWith(' ')) into = /^node_modules\/(?!@holdfast\/)/.test(line) ? others : ours;
    into.push(line);
  }
  const join_ = (lines: string[]) => (lines.join('').trim() === '' ? undefined : lines.join('\n'));
  return { ours: join_(ours), others: join_(others) };
}

const results: Result[] = [];
try {
  const files = packTarballs(tarballs);
  const queue = [...services];
  await Promise.all(
    Array.from({ length: Math.max(1, jobs) }, async () => {
      for (let name = queue.shift(); name !== undefined; name = queue.shift()) {
        console.log(`… ${name}`);
        const result = await check(name, files).catch((error: unknown) => ({
          name,
          passed: [],
          failed: [String(error)],
          seconds: 0,
        }));
        results.push(result);
        // Each project's node_modules goes as soon as it is done, not all at the end.
        if (!keep) rmSync(join(scratch, name), { recursive: true, force: true });
        console.log(
          `${result.failed.length === 0 ? '✓' : '✗'} ${name}: ${result.passed.length} passed, ${result.failed.length} failed (${result.seconds.toFixed(0)} s)`,
        );
      }
    }),
  );
} finally {
  if (keep) console.log(`scratch kept at ${scratch}`);
  else rmSync(scratch, { recursive: true, force: true });
}

for (const result of results.sort((a, b) => a.name.localeCompare(b.name))) {
  console.log(`\n${result.name}`);
  for (const line of result.passed) console.log(`  ✓ ${line}`);
  for (const line of result.failed) console.log(`  ✗ ${line.replaceAll('\n', '\n    ')}`);
  for (const line of result.notes ?? []) console.log(`  ! ${line.split('\n').slice(0, 6).join('\n    ')}`);
}
const failures = results.reduce((n, r) => n + r.failed.length, 0);
if (failures > 0 || results.length !== services.length) {
  console.error(`\n${failures} adopter check(s) failed`);
  process.exit(1);
}
console.log(
  `\nAll ${results.length} adopter services install from the tarballs, type-check and hold under the driver.`,
);
