#!/usr/bin/env node
// Runs publint and @arethetypeswrong/cli on every publishable package. attw packs each one
// (`npm pack`: prepack builds it and writes the manifest it ships) and checks it under its
// default profile, every TypeScript resolution: node10, node16 from CJS and from ESM, bundler.
// node10 reads no "exports"; it finds the subpaths' types (`/hono`, `/postgres`, ...) through
// the "typesVersions" scripts/pack-manifest.mjs derives from "exports" in the packed manifest.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

const root = new URL('..', import.meta.url).pathname;
const packages = readdirSync(join(root, 'packages')).filter((name) =>
  existsSync(join(root, 'packages', name, 'package.json')),
);
const failures = [];
for (const name of packages) {
  const dir = join('packages', name);
  for (const [tool, args] of [
    ['publint', ['publint', '--strict', dir]],
    ['attw', ['attw', '--pack', dir, '--format', 'table-flipped']],
  ]) {
    const result = spawnSync('npx', ['--no-install', ...args], { cwd: root, encoding: 'utf8' });
    const output = `${result.stdout}${result.stderr}`.replace(/^npm warn .*\n/gm, '');
    if (result.status !== 0) {
      failures.push(`${name}: ${tool}`);
      console.log(`✗ ${name}: ${tool}\n${output}`);
    } else {
      console.log(`✓ ${name}: ${tool}`);
    }
  }
}
if (failures.length > 0) {
  console.error(`\n${failures.length} package check(s) failed: ${failures.join(', ')}`);
  process.exit(1);
}
console.log(`\nAll ${packages.length} packages pass publint and attw.`);
