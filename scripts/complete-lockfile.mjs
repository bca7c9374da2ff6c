#!/usr/bin/env node
// Completes package-lock.json with the other platforms' native optional packages (esbuild, rollup,
// biome, ...). The registry this project is developed against serves only the host platform's, so
// npm cannot write their entries, and npm 11's `npm ci` then rejects the lock as out of sync
// (npm/cli#8805). An entry tagged with its os/cpu/libc is skipped by `npm ci` on every other
// platform and fetched normally on its own. Run after every `npm install`.
import { readFileSync, writeFileSync } from 'node:fs';

const path = new URL('../package-lock.json', import.meta.url);
const lock = JSON.parse(readFileSync(path, 'utf8'));
const packages = lock.packages;

const OS = [
  'darwin',
  'linux',
  'win32',
  'android',
  'freebsd',
  'openbsd',
  'netbsd',
  'sunos',
  'aix',
  'openharmony',
];
const CPU = ['x64', 'arm64', 'arm', 'ia32', 'ppc64', 's390x', 'riscv64', 'loong64', 'mips64el', 'wasm32'];

function platformOf(name) {
  const parts = name.split('/').pop().split('-');
  const os = parts.find((part) => OS.includes(part)) ?? (parts.includes('win32') ? 'win32' : undefined);
  const cpu = parts.find((part) => CPU.includes(part)) ?? (parts.includes('arm') ? 'arm' : undefined);
  const libc = parts.includes('musl')
    ? 'musl'
    : parts.includes('gnu') || (os === 'linux' && !parts.includes('musl'))
      ? 'glibc'
      : undefined;
  return { os, cpu, libc };
}

let added = 0;
for (const [key, entry] of Object.entries(packages)) {
  if (!entry.optionalDependencies) continue;
  const base = key === '' ? '' : `${key}/`;
  for (const [dep, range] of Object.entries(entry.optionalDependencies)) {
    const nested = `${base}node_modules/${dep}`;
    if (packages[nested] || packages[`node_modules/${dep}`]) continue;
    const { os, cpu, libc } = platformOf(dep);
    if (!os && !cpu) continue;
    const version = /^\d+\.\d+\.\d+/.test(range) ? range : range.replace(/^[\^~=]/, '');
    packages[`node_modules/${dep}`] = {
      version,
      ...(os ? { os: [os] } : {}),
      ...(cpu ? { cpu: [cpu] } : {}),
      ...(libc && os === 'linux' ? { libc: [libc] } : {}),
      optional: true,
      ...(entry.dev ? { dev: true } : {}),
      ...(entry.peer ? { peer: true } : {}),
    };
    added += 1;
  }
}
lock.packages = Object.fromEntries(
  Object.entries(packages).sort(([a], [b]) => (a === '' ? -1 : b === '' ? 1 : a.localeCompare(b))),
);
writeFileSync(path, `${JSON.stringify(lock, null, 2)}\n`);
console.log(`complete-lockfile: added ${added} platform entr${added === 1 ? 'y' : 'ies'}`);
