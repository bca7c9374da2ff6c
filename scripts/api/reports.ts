import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Extractor, ExtractorConfig, ExtractorLogLevel } from '@microsoft/api-extractor';

// `npm run check:api` (in .ci/run, after the build): an API Extractor report per entry point of
// every package (`packages/<name>/api/<entry>.api.md`), compared with the committed one. A
// changed report needs a changeset for that package, added since the report was last committed;
// when an export was removed or an existing one changed (it may narrow), that changeset's bump
// must be major, or minor while the package is 0.x (https://semver.org/#spec-item-4).
// `npm run api:accept` (`--accept`) rewrites the committed reports.

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const accept = process.argv.includes('--accept');
// Package names given on the command line limit the run to them (`tsx scripts/api/reports.ts @holdfast/x`).
const only = process.argv.slice(2).filter((arg) => !arg.startsWith('--'));
const BUMPS = ['patch', 'minor', 'major'] as const;
type Bump = (typeof BUMPS)[number];

interface Entry {
  readonly subpath: string;
  readonly name: string;
  readonly types: string;
}

function entriesOf(dir: string): Entry[] {
  const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
  const entries: Entry[] = [];
  for (const [subpath, target] of Object.entries<{ import?: { types?: string }; types?: string }>(
    manifest.exports ?? {},
  )) {
    const types = target.import?.types ?? target.types;
    if (typeof types !== 'string') continue;
    entries.push({ subpath, name: subpath === '.' ? 'index' : subpath.slice(2).replace(/\//g, '-'), types });
  }
  return entries;
}

/** The report of one entry point as API Extractor writes it, or throws when it cannot. */
function report(dir: string, entry: Entry, temp: string): string {
  const config = ExtractorConfig.prepare({
    configObject: {
      projectFolder: dir,
      mainEntryPointFilePath: join(dir, entry.types),
      compiler: { tsconfigFilePath: join(ROOT, 'tsconfig.base.json') },
      apiReport: {
        enabled: true,
        reportFileName: `${entry.name}.api.md`,
        reportFolder: temp,
        reportTempFolder: temp,
      },
      docModel: { enabled: false },
      dtsRollup: { enabled: false },
      tsdocMetadata: { enabled: false },
      messages: {
        extractorMessageReporting: { default: { logLevel: ExtractorLogLevel.None } },
        compilerMessageReporting: { default: { logLevel: ExtractorLogLevel.None } },
        tsdocMessageReporting: { default: { logLevel: ExtractorLogLevel.None } },
      },
    },
    configObjectFullPath: join(dir, 'api-extractor.json'),
    packageJsonFullPath: join(dir, 'package.json'),
  });
  Extractor.invoke(config, {
    localBuild: true,
    messageCallback: (message) => {
      message.handled = true;
    },
  });
  return readFileSync(join(temp, `${entry.name}.api.md`), 'utf8');
}

/** Export name -> its declaration lines, from a report's code block. */
function declarations(text: string): Map<string, string[]> {
  const map = new Map<string, string[]>();
  let current: string | undefined;
  for (const line of text.split('\n')) {
    const named =
      /^export (?:declare )?(?:abstract )?(?:function|const|let|class|interface|type|enum|namespace) (\w+)/.exec(
        line,
      );
    if (named?.[1]) current = named[1];
    const reexport = /^export \{ (.+) \}/.exec(line);
    if (reexport?.[1]) {
      for (const part of reexport[1].split(',')) map.set(part.trim().split(' as ').pop() ?? part, [line]);
      current = undefined;
      continue;
    }
    if (current) map.set(current, [...(map.get(current) ?? []), line.trim()]);
  }
  return map;
}

/** What a new report does to the exports of an old one. */
function narrowing(before: string, after: string): string[] {
  const old = declarations(before);
  const now = declarations(after);
  const found: string[] = [];
  for (const [name, lines] of old) {
    const next = now.get(name);
    if (!next) found.push(`export ${name} removed`);
    else if (lines.some((line) => !next.includes(line))) found.push(`export ${name} changed (it may narrow)`);
  }
  return found;
}

const git = (...args: string[]) => {
  try {
    return execFileSync('git', args, { cwd: ROOT, encoding: 'utf8' }).trim();
  } catch {
    return '';
  }
};

/** Bumps of changesets naming `pkg` added or changed since the report folder was last committed. */
function newChangesets(pkg: string, reports: string): { file: string; bump: Bump }[] {
  const since = git('log', '-1', '--format=%H', '--', reports);
  const files = new Set(
    [
      ...(since
        ? git('diff', '--name-only', '--diff-filter=AM', since, '--', '.changeset').split('\n')
        : git('ls-files', '.changeset').split('\n')),
      ...git('ls-files', '--others', '--exclude-standard', '.changeset').split('\n'),
    ].filter((f) => f.endsWith('.md') && !f.endsWith('README.md')),
  );
  const found: { file: string; bump: Bump }[] = [];
  for (const file of files) {
    if (!existsSync(join(ROOT, file))) continue;
    const front = /^---\n([\s\S]*?)\n---/.exec(readFileSync(join(ROOT, file), 'utf8'))?.[1] ?? '';
    for (const line of front.split('\n')) {
      const match = /^["']?([^"':]+)["']?\s*:\s*(patch|minor|major)\s*$/.exec(line.trim());
      if (match?.[1] === pkg && match[2]) found.push({ file, bump: match[2] as Bump });
    }
  }
  return found;
}

const failures: string[] = [];
const pending: string[] = [];
const temp = mkdtempSync(join(tmpdir(), 'holdfast-api-'));
try {
  for (const name of readdirSync(join(ROOT, 'packages')).sort()) {
    const dir = join(ROOT, 'packages', name);
    if (!existsSync(join(dir, 'package.json'))) continue;
    const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
    const pkg: string = manifest.name;
    if (only.length > 0 && !only.includes(pkg)) continue;
    const reports = join('packages', name, 'api');
    const changes: string[] = [];
    let changed = false;
    for (const entry of entriesOf(dir)) {
      if (!existsSync(join(dir, entry.types)))
        throw new Error(`${pkg}: ${entry.types} is missing: run npm run build first`);
      const fresh = report(dir, entry, temp);
      const committedPath = join(ROOT, reports, `${entry.name}.api.md`);
      const committed = existsSync(committedPath) ? readFileSync(committedPath, 'utf8') : undefined;
      if (committed === fresh) continue;
      changed = true;
      if (committed !== undefined)
        changes.push(...narrowing(committed, fresh).map((c) => `${entry.subpath}: ${c}`));
      if (accept) {
        mkdirSync(join(ROOT, reports), { recursive: true });
        copyFileSync(join(temp, `${entry.name}.api.md`), committedPath);
      }
    }
    if (!changed) {
      console.log(`✓ ${pkg}: API unchanged`);
      continue;
    }
    if (accept) {
      console.log(`✓ ${pkg}: API report rewritten in ${reports}/: review and commit it`);
      continue;
    }
    const sets = newChangesets(pkg, reports);
    const major = String(manifest.version).startsWith('0.') ? 'minor' : 'major';
    const strongest = sets.reduce<Bump | undefined>(
      (best, s) => (best === undefined || BUMPS.indexOf(s.bump) > BUMPS.indexOf(best) ? s.bump : best),
      undefined,
    );
    const breaking = changes.length > 0;
    const detail = changes.map((c) => `\n    ${c}`).join('');
    if (strongest === undefined) {
      failures.push(
        `${pkg}: its public API changed without a changeset for ${pkg}.${detail}\n  Add .changeset/<name>.md naming "${pkg}" (${breaking ? major : 'patch or minor'}), then run npm run api:accept to regenerate the committed reports.`,
      );
    } else if (breaking && BUMPS.indexOf(strongest) < BUMPS.indexOf(major)) {
      failures.push(
        `${pkg}: an export was removed or changed, which needs a ${major} bump (semver${major === 'minor' ? "'s 0.x rule" : ''}), but its changesets say ${strongest} (${sets.map((s) => s.file).join(', ')}).${detail}\n  Raise the bump, then run npm run api:accept to regenerate the committed reports.`,
      );
    } else {
      pending.push(`${pkg} (${sets.map((s) => `${s.file}: ${s.bump}`).join(', ')})`);
    }
  }
} finally {
  rmSync(temp, { recursive: true, force: true });
}
for (const p of pending)
  console.log(
    `✓ ${p}: API changed with a changeset; run npm run api:accept to regenerate the committed reports`,
  );
for (const f of failures) console.error(`✗ ${f}`);
if (failures.length > 0) process.exit(1);
