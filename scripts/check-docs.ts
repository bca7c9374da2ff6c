// `npm run check:docs` (in .ci/run): fails when a README says what the code or the tarball does
// not. Each rule reads its truth from the repository, never from a copy kept by hand:
// - migrations: the `NNN_name.sql` files a package README names are its `migrations/*.sql` files;
// - Node: a README's "Node X+", "Node X or later" or "Node >= X" is the root `engines.node`, and so
//   is every package's own `engines.node`;
// - sizes: a bench summary line a README quotes is that bench's last printed line
//   (`bench/<area>/<script>.last.txt`), and a byte size in a package README stands in a block a
//   bench writes (`<!-- size:start ... -->`) or in a bench's last line;
// - citations: no published file (README, `src`, `migrations`, `dist` when built) cites a document
//   its reader cannot open: our spec, contract, style guide, issue numbers, or a link out of the
//   package (npm shows the README without the repository around it);
// - install: until a release exists, a README that shows `npm install @holdfast/...` also says how
//   to install from a clone (`npm pack`), since the registry answers 404.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

export interface Finding {
  readonly file: string;
  readonly line: number;
  readonly rule: 'migrations' | 'node' | 'size' | 'citation' | 'install';
  readonly message: string;
}

const read = (path: string) => readFileSync(join(ROOT, path), 'utf8');
const lineOf = (text: string, index: number) => text.slice(0, index).split('\n').length;

// --- migrations ---------------------------------------------------------------------------------

/** The migration files a README names: `NNN_name.sql`, a `<placeholder>` matching any run of name characters. */
export function namedMigrations(readme: string): { name: string; pattern: RegExp; line: number }[] {
  const found = new Map<string, { name: string; pattern: RegExp; line: number }>();
  // Not preceded by a name character or `-`: `V12__holdfast_api_keys_001_keys.sql` and
  // `<timestamp>_holdfast-api-keys-001-keys.sql` are a tool's renaming, not the shipped file.
  for (const match of readme.matchAll(/(?<![\w<>-])(\d{3}_(?:[a-z0-9_]|<[^>\s]+>)+)\.sql\b/g)) {
    const name = `${match[1]}.sql`;
    if (found.has(name)) continue;
    const source = name
      .split(/(<[^>]+>)/)
      .map((part) => (part.startsWith('<') ? '[a-z0-9_]+' : part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
      .join('');
    found.set(name, { name, pattern: new RegExp(`^${source}$`), line: lineOf(readme, match.index ?? 0) });
  }
  return [...found.values()];
}

export function checkMigrations(
  pkgDir: string,
  readme: string,
  files: readonly string[] | undefined,
): Finding[] {
  const file = `${pkgDir}/README.md`;
  const named = namedMigrations(readme);
  if (files === undefined) {
    return named.map(({ name, line }) => ({
      file,
      line,
      rule: 'migrations',
      message: `names ${name}, but ${pkgDir} has no migrations/ directory`,
    }));
  }
  const findings: Finding[] = [];
  for (const { name, pattern, line } of named) {
    if (!files.some((f) => pattern.test(f)))
      findings.push({
        file,
        line,
        rule: 'migrations',
        message: `names ${name}, not in ${pkgDir}/migrations/`,
      });
  }
  if (named.length > 0 || files.length > 0) {
    for (const f of files) {
      if (!named.some(({ pattern }) => pattern.test(f)))
        findings.push({
          file,
          line: 1,
          rule: 'migrations',
          message: `never names ${pkgDir}/migrations/${f}`,
        });
    }
  }
  return findings;
}

// --- Node version -------------------------------------------------------------------------------

/** The lowest version of a `>=x.y` range. */
export function floorOf(range: string): string | undefined {
  return /^>=\s*(\d+(?:\.\d+){0,2})$/.exec(range.trim())?.[1];
}

/** A README's claims of the lowest Node it runs on: "Node 20.19+", "Node 20 or later", "Node >= 20". */
export function nodeClaims(text: string): { version: string; line: number }[] {
  const claims: { version: string; line: number }[] = [];
  const pattern =
    /\bNode(?:\.js)?\s+(?:>=\s*(\d+(?:\.\d+)*)|(\d+(?:\.\d+)*)(?:\+|\s+or\s+(?:later|newer|above)))/gi;
  for (const match of text.matchAll(pattern)) {
    claims.push({ version: match[1] ?? match[2] ?? '', line: lineOf(text, match.index ?? 0) });
  }
  return claims;
}

// --- sizes --------------------------------------------------------------------------------------

export interface BenchLine {
  readonly file: string;
  /** Everything before the first `: `, such as `webhooks size`. */
  readonly prefix: string;
  readonly line: string;
}

function benchLines(): BenchLine[] {
  const lines: BenchLine[] = [];
  if (!existsSync(join(ROOT, 'bench'))) return lines;
  for (const area of readdirSync(join(ROOT, 'bench')).sort()) {
    const dir = join('bench', area);
    if (!statSync(join(ROOT, dir)).isDirectory()) continue;
    for (const name of readdirSync(join(ROOT, dir)).sort()) {
      if (!name.endsWith('.last.txt')) continue;
      const line = read(join(dir, name)).split('\n')[0] ?? '';
      const prefix = /^([^:`]+):\s/.exec(line)?.[1];
      if (prefix) lines.push({ file: join(dir, name), prefix, line });
    }
  }
  return lines;
}

/** A quoted summary line must be the bench's last one; one with `<placeholders>` describes the form. */
export function checkQuotedLines(file: string, text: string, benches: readonly BenchLine[]): Finding[] {
  const findings: Finding[] = [];
  for (const match of text.matchAll(/`([^`\n]+)`/g)) {
    const quoted = match[1] ?? '';
    const bench = benches.find((b) => quoted.startsWith(`${b.prefix}: `));
    if (!bench || quoted.includes('<') || quoted === bench.line) continue;
    findings.push({
      file,
      line: lineOf(text, match.index ?? 0),
      rule: 'size',
      message: `quotes \`${quoted.slice(0, 80)}\`, but ${bench.file} last printed \`${bench.line.slice(0, 80)}\``,
    });
  }
  return findings;
}

const SIZE = /(?<![\w.,])\d[\d,]*(?:\.\d+)?\s?(?:B|kB|KB|MB)\b/g;

/** Byte sizes in a package README come from a bench: inside a block it writes, or in its last line. */
export function checkSizes(file: string, text: string, benches: readonly BenchLine[]): Finding[] {
  const findings: Finding[] = [];
  let inBlock = false;
  text.split('\n').forEach((line, index) => {
    if (/<!-- [\w-]+:start\b/.test(line)) inBlock = true;
    if (/<!-- [\w-]+:end\b/.test(line)) {
      inBlock = false;
      return;
    }
    if (inBlock) return;
    for (const match of line.matchAll(SIZE)) {
      const size = match[0];
      if (benches.some((b) => b.line.includes(size))) continue;
      findings.push({
        file,
        line: index + 1,
        rule: 'size',
        message: `quotes the size ${size}, which no bench's last printed line holds (measure it and quote the line)`,
      });
    }
  });
  return findings;
}

// --- citations ----------------------------------------------------------------------------------

const CITATIONS: readonly [RegExp, string][] = [
  [/\bSPEC(?:\.md)?\s*(?:section\s*\d|sec\.\s*\d|§)/i, 'the spec'],
  [/\bCONTRACT(?:\.md)?\s*(?:section\s*\d|sec\.\s*\d|§)/i, 'the contract'],
  [/\b(?:SPEC|CONTRACT|STYLE|BRIEF)\.md\b/, 'a repository document'],
  [/\bSTYLE\s*(?:rule|section)\s*\d/i, 'the style guide'],
  [/\bissues?\s+#?\d+\b/i, 'an issue'],
];

/** Where `text` cites a document its reader cannot open. */
export function citations(text: string): { line: number; what: string; quote: string }[] {
  const found: { line: number; what: string; quote: string }[] = [];
  const seen = new Set<number>();
  for (const [pattern, what] of CITATIONS) {
    for (const match of text.matchAll(new RegExp(pattern.source, `${pattern.flags.replace('g', '')}g`))) {
      // One place named by two patterns ("SPEC.md section 6") is one finding.
      if (seen.has(match.index ?? 0)) continue;
      seen.add(match.index ?? 0);
      found.push({ line: lineOf(text, match.index ?? 0), what, quote: match[0] });
    }
  }
  return found.sort((a, b) => a.line - b.line);
}

/** Markdown links that leave the package: npm shows the README without the repository around it. */
export function outsideLinks(readme: string): { line: number; target: string }[] {
  const found: { line: number; target: string }[] = [];
  for (const match of readme.matchAll(/\]\((\.\.\/[^)\s]*)\)/g)) {
    found.push({ line: lineOf(readme, match.index ?? 0), target: match[1] ?? '' });
  }
  return found;
}

function filesUnder(dir: string): string[] {
  if (!existsSync(join(ROOT, dir))) return [];
  if (statSync(join(ROOT, dir)).isFile()) return [dir];
  return readdirSync(join(ROOT, dir))
    .sort()
    .flatMap((name) => filesUnder(join(dir, name)));
}

/** What a package publishes, as text we can read: its README, `src` (what `dist` is built from) and `files`. */
function publishedFiles(pkgDir: string, manifest: { files?: string[] }): string[] {
  const entries = new Set(['README.md', 'src', ...(manifest.files ?? [])]);
  return [...entries]
    .flatMap((entry) => filesUnder(join(pkgDir, entry)))
    .filter((f) => /\.(?:md|ts|cts|mts|js|cjs|mjs|sql|json)$/.test(f) && !f.endsWith('.map'));
}

// --- install ----------------------------------------------------------------------------------

/** A README telling readers to install from the registry must say how to install from a clone. */
export function checkInstall(file: string, readme: string, released: boolean): Finding[] {
  if (released) return [];
  const install = /npm (?:install|i|add)\s+(?:-\S+\s+)*@holdfast\//.exec(readme);
  if (!install || /\bnpm pack\b/.test(readme)) return [];
  return [
    {
      file,
      line: lineOf(readme, install.index),
      rule: 'install',
      message:
        'shows npm install @holdfast/... but not how to install from a clone (npm pack): no release exists yet',
    },
  ];
}

// --- the run ------------------------------------------------------------------------------------

export function check(): Finding[] {
  const findings: Finding[] = [];
  const root = JSON.parse(read('package.json')) as { engines?: { node?: string } };
  const floor = floorOf(root.engines?.node ?? '');
  if (!floor) {
    findings.push({
      file: 'package.json',
      line: 1,
      rule: 'node',
      message: 'engines.node is not a ">=x.y" range',
    });
  }
  const benches = benchLines();
  const readmes = [
    ...readdirSync(join(ROOT, 'packages')).map((p) => `packages/${p}/README.md`),
    ...readdirSync(join(ROOT, 'examples')).map((p) => `examples/${p}/README.md`),
    'README.md',
  ].filter((f) => existsSync(join(ROOT, f)));

  for (const file of readmes) {
    const text = read(file);
    if (floor) {
      for (const { version, line } of nodeClaims(text)) {
        if (version !== floor)
          findings.push({
            file,
            line,
            rule: 'node',
            message: `says Node ${version}, but engines.node is >=${floor}`,
          });
      }
    }
    // The root README's Measured table is checked by scripts/bench-table.ts --check.
    if (file !== 'README.md') findings.push(...checkQuotedLines(file, text, benches));
  }

  for (const name of readdirSync(join(ROOT, 'packages')).sort()) {
    const pkgDir = `packages/${name}`;
    if (!existsSync(join(ROOT, pkgDir, 'package.json'))) continue;
    const manifest = JSON.parse(read(`${pkgDir}/package.json`)) as {
      files?: string[];
      engines?: { node?: string };
    };
    if (floor && floorOf(manifest.engines?.node ?? '') !== floor) {
      findings.push({
        file: `${pkgDir}/package.json`,
        line: 1,
        rule: 'node',
        message: `engines.node is ${manifest.engines?.node ?? 'missing'}, the root's is >=${floor}`,
      });
    }
    const readmePath = `${pkgDir}/README.md`;
    const readme = existsSync(join(ROOT, readmePath)) ? read(readmePath) : '';
    const migrationsDir = join(ROOT, pkgDir, 'migrations');
    const migrationFiles = existsSync(migrationsDir)
      ? readdirSync(migrationsDir)
          .filter((f) => f.endsWith('.sql'))
          .sort()
      : undefined;
    findings.push(...checkMigrations(pkgDir, readme, migrationFiles));
    // A package is released once a CHANGELOG names a version: changesets writes it at release.
    findings.push(...checkInstall(readmePath, readme, existsSync(join(ROOT, pkgDir, 'CHANGELOG.md'))));
    findings.push(...checkSizes(readmePath, readme, benches));
    for (const { line, target } of outsideLinks(readme)) {
      findings.push({
        file: readmePath,
        line,
        rule: 'citation',
        message: `links to ${target}, outside the package: a reader of the tarball or of npm cannot open it`,
      });
    }
    for (const file of publishedFiles(pkgDir, manifest)) {
      for (const { line, what, quote } of citations(read(file))) {
        findings.push({
          file,
          line,
          rule: 'citation',
          message: `cites ${what} ("${quote}"), which its reader cannot open: state the rule itself`,
        });
      }
    }
  }
  return findings;
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const findings = check();
  for (const f of findings)
    console.error(`${relative(ROOT, join(ROOT, f.file))}:${f.line}: [${f.rule}] ${f.message}`);
  if (findings.length > 0) {
    console.error(
      `\ncheck-docs: ${findings.length} place(s) where a README or a published file says what is not so`,
    );
    process.exit(1);
  }
  console.log(
    'check-docs: READMEs match the migrations, engines.node and the benches; no published file cites what its reader cannot open',
  );
}
