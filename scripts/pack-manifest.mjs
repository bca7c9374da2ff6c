#!/usr/bin/env node
// A package's `prepack` and `postpack` (run in its directory by `npm pack` and `npm publish`).
//
// In the workspace, every export carries an "@holdfast/source" condition pointing at src/, so
// the tests, tsx and the typecheck run on live sources without a build. The tarball ships dist/
// only, so that condition must not be published: `strip` (prepack, after the build) saves
// package.json as package.json.workspace, removes the condition from "exports" (and "imports") and copies the
// root LICENSE in; `restore` (postpack) puts the workspace manifest back and removes the copy.
// npm reads the manifest it packs from disk after prepack, so the tarball gets the stripped one.
// `strip` also writes "typesVersions" for the subpaths (see typesVersionsOf).
import { copyFileSync, existsSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const CONDITION = '@holdfast/source';
const dir = process.cwd();
const manifest = join(dir, 'package.json');
const saved = join(dir, 'package.json.workspace');
const license = join(dir, 'LICENSE');
const rootLicense = new URL('../LICENSE', import.meta.url);

function strip(value) {
  if (Array.isArray(value)) return value.map(strip);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([key]) => key !== CONDITION)
      .map(([key, inner]) => [key, strip(inner)]),
  );
}

/**
 * "typesVersions" for every subpath of `exports`: TypeScript's `node10` module resolution (what
 * `moduleResolution: "node"` means, still common beside `module: "commonjs"`) does not read
 * "exports", so without it `@holdfast/x/hono` has no types there (attw's default profile:
 * NoResolution). Derived from "exports" at pack time, so a new subpath never lacks one. Each
 * points at the CommonJS declarations Node itself would load for `require()`. node16, nodenext
 * and bundler resolution read "exports" and never consult it.
 */
function typesVersionsOf(exports) {
  const paths = {};
  for (const [subpath, target] of Object.entries(exports ?? {})) {
    if (!subpath.startsWith('./') || subpath === './package.json' || subpath.includes('*')) continue;
    const types = target?.node?.require?.types ?? target?.require?.types;
    if (typeof types === 'string') paths[subpath.slice(2)] = [types];
  }
  return Object.keys(paths).length > 0 ? { '*': paths } : undefined;
}

const command = process.argv[2];
if (command === 'strip') {
  // A saved manifest left by an interrupted pack is the workspace one: never overwrite it.
  const text = existsSync(saved) ? readFileSync(saved, 'utf8') : readFileSync(manifest, 'utf8');
  if (!existsSync(saved)) writeFileSync(saved, text);
  const parsed = JSON.parse(text);
  parsed.exports = strip(parsed.exports);
  // Package "imports" (`#hmac`) carry the condition too: the tarball has no src/ to point at.
  if (parsed.imports) parsed.imports = strip(parsed.imports);
  const typesVersions = typesVersionsOf(parsed.exports);
  if (typesVersions) parsed.typesVersions = typesVersions;
  writeFileSync(manifest, `${JSON.stringify(parsed, null, 2)}\n`);
  copyFileSync(rootLicense, license);
} else if (command === 'restore') {
  if (existsSync(saved)) renameSync(saved, manifest);
  rmSync(license, { force: true });
} else {
  console.error('usage: pack-manifest.mjs strip|restore');
  process.exit(2);
}
