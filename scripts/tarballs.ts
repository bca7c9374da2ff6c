// Packing the published packages, shared by `scripts/check-tarballs.ts` and `adopters/run.ts`:
// one `npm pack` run of every non-private package under packages/ (each package's prepack
// builds it, strips the "@holdfast/source" condition and adds LICENSE and the migrations' .sql
// files). HOLDFAST_TARBALLS=<dir> shares one packing between runs: the first run (the directory
// empty or missing) packs into it, later ones copy the tarballs from it (.ci/run packs once for
// check:tarballs and check:adopters).
import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('..', import.meta.url));

/** The directory names under packages/ of every package that is not private, sorted. */
export function publishedPackages(): string[] {
  return readdirSync(join(ROOT, 'packages'))
    .filter((name) => {
      try {
        return !JSON.parse(readFileSync(join(ROOT, 'packages', name, 'package.json'), 'utf8')).private;
      } catch {
        return false;
      }
    })
    .sort();
}

/** `npm <args>` quietly, its stdout returned, its errors on this process's stderr. */
export function npm(args: string[], cwd: string, env: NodeJS.ProcessEnv = process.env): string {
  return execFileSync('npm', [...args, '--no-audit', '--no-fund', '--loglevel=error'], {
    cwd,
    env,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  });
}

/**
 * Packs `packages` (directory names) into `destination` and returns each package's name with
 * its tarball's file name there (`@holdfast/db` -> `holdfast-db-0.1.0.tgz`).
 */
export function packTarballs(destination: string, packages = publishedPackages()): Map<string, string> {
  const shared = process.env.HOLDFAST_TARBALLS;
  const packed = (dir: string) => existsSync(dir) && readdirSync(dir).some((file) => file.endsWith('.tgz'));
  if (shared && packed(shared)) {
    console.log(`Reusing the tarballs of ${shared}`);
  } else {
    const into = shared ?? destination;
    mkdirSync(into, { recursive: true });
    console.log(`Packing ${packages.length} packages into ${into}`);
    npm(['pack', '--pack-destination', into, ...packages.flatMap((p) => ['-w', `packages/${p}`])], ROOT);
  }
  if (shared)
    for (const file of readdirSync(shared))
      if (file.endsWith('.tgz')) copyFileSync(join(shared, file), join(destination, file));
  const files = new Map<string, string>();
  for (const pkg of packages) {
    const manifest = JSON.parse(readFileSync(join(ROOT, 'packages', pkg, 'package.json'), 'utf8'));
    files.set(manifest.name, `${manifest.name.replace(/^@/, '').replace('/', '-')}-${manifest.version}.tgz`);
  }
  return files;
}
