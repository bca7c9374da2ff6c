#!/usr/bin/env node
// A package's `prepack` and `postpack` (run in its directory by `npm pack` and `npm publish`).
//
// In the workspace, every export carries an "@holdfast/source" condition pointing at src/, so
// the tests, tsx and the typecheck run on live sources without a build. The tarball ships dist/
// only, so that condition must not be published: `strip` (prepack, after the build) saves
// package.json as package.json.workspace, removes the condition from "exports" and copies the
// root LICENSE in; `restore` (postpack) puts the workspace manifest back and removes the copy.
// npm reads the manifest it packs from disk after prepack, so the tarball gets the stripped one.
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

const command = process.argv[2];
if (command === 'strip') {
  // A saved manifest left by an interrupted pack is the workspace one: never overwrite it.
  const text = existsSync(saved) ? readFileSync(saved, 'utf8') : readFileSync(manifest, 'utf8');
  if (!existsSync(saved)) writeFileSync(saved, text);
  const parsed = JSON.parse(text);
  parsed.exports = strip(parsed.exports);
  writeFileSync(manifest, `${JSON.stringify(parsed, null, 2)}\n`);
  copyFileSync(rootLicense, license);
} else if (command === 'restore') {
  if (existsSync(saved)) renameSync(saved, manifest);
  rmSync(license, { force: true });
} else {
  console.error('usage: pack-manifest.mjs strip|restore');
  process.exit(2);
}
