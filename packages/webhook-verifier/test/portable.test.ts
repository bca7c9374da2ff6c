import { execFile } from 'node:child_process';
import { generateKeyPairSync, sign } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';
import { expect, it } from 'vitest';

const run = promisify(execFile);

// Without the `node` condition every entry but the Node-only doors and /postgres (which reads its
// SQL files) must run on Workers and browsers: no Buffer, no node: imports.
it.each(['index', 'v1', 'receiver', 'hono'])(
  'the portable %s bundle uses no Buffer and no node: module',
  async (entry) => {
    const result = await build({
      entryPoints: [fileURLToPath(new URL(`../src/${entry}.ts`, import.meta.url))],
      bundle: true,
      write: false,
      platform: 'neutral',
      format: 'esm',
      mainFields: ['module', 'main'],
      // The live source: `#hmac` and `#ed25519` as a browser or a Worker resolves them.
      conditions: ['@holdfast/source', 'import', 'default'],
      external: ['hono', 'hono/*'],
      logLevel: 'silent',
    });
    const text = result.outputFiles.map((f) => f.text).join('\n');
    expect(text).not.toMatch(/\bBuffer\b/);
    expect(text).not.toMatch(/from\s*["']node:|require\(["']node:/);
    expect(text).not.toMatch(/\bprocess\./);
  },
);

// The size budget of the /v1 entry (a byte count, not a timing): what a v1-only receiver bundles
// for a browser or a Worker, as bench/webhooks/size.ts measures it from the packed tarball.
it('the portable /v1 entry carries no ed25519 and bundles to at most 4,000 bytes gzipped', async () => {
  const result = await build({
    stdin: {
      contents: "export { createVerifier } from './src/v1';",
      resolveDir: fileURLToPath(new URL('..', import.meta.url)),
      loader: 'ts',
    },
    bundle: true,
    write: false,
    minify: true,
    platform: 'neutral',
    format: 'esm',
    mainFields: ['module', 'main'],
    conditions: ['@holdfast/source', 'import', 'default'],
    metafile: true,
    logLevel: 'silent',
  });
  const inputs = Object.keys(result.metafile.inputs);
  expect(inputs.filter((input) => /noble|ed25519/.test(input))).toEqual([]);
  const code = result.outputFiles[0]?.contents ?? new Uint8Array();
  expect(code.length).toBeGreaterThan(1000);
  expect(gzipSync(code, { level: 9 }).length).toBeLessThanOrEqual(4000);
});

// v1a off Node goes through WebCrypto's Ed25519 where the platform has it, and loads the
// @noble/curves fallback only where it has not: the portable ed25519 file run in a child Node
// (its `crypto.subtle` as it is, then with Ed25519 refused as a runtime without it would), with
// the fallback's import recorded.
it.each([
  ['has Ed25519: WebCrypto verifies, @noble/curves is never loaded', false, false],
  ['lacks Ed25519: @noble/curves is loaded and verifies', true, true],
])('portable v1a where WebCrypto %s', async (_name, withoutEd25519, loadsNoble) => {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  const raw = publicKey.export({ format: 'der', type: 'spki' }).subarray(12);
  const message = new TextEncoder().encode('msg_1.1700000000.{"a":1}');
  const signature = sign(null, message, privateKey);
  const dir = mkdtempSync(join(tmpdir(), 'holdfast-ed25519-'));
  try {
    const file = join(dir, 'check.mjs');
    await build({
      stdin: {
        contents: [
          withoutEd25519
            ? `const importKey = crypto.subtle.importKey.bind(crypto.subtle);
crypto.subtle.importKey = (format, key, algorithm, ...rest) =>
  algorithm?.name === 'Ed25519' ? Promise.reject(new DOMException('no Ed25519', 'NotSupportedError')) : importKey(format, key, algorithm, ...rest);`
            : '',
          "import { ed25519Verify } from './src/ed25519';",
          `const key = ed25519Verify(Uint8Array.from(${JSON.stringify([...raw])}));`,
          `const message = Uint8Array.from(${JSON.stringify([...message])});`,
          `const signature = Uint8Array.from(${JSON.stringify([...signature])});`,
          'const valid = await key.verify(message, signature);',
          'const forged = await key.verify(message, signature.map((b, i) => (i === 0 ? b ^ 1 : b)));',
          'console.log(JSON.stringify({ valid, forged, noble: globalThis.nobleLoaded === true }));',
        ].join('\n'),
        resolveDir: fileURLToPath(new URL('..', import.meta.url)),
        loader: 'ts',
      },
      bundle: true,
      format: 'esm',
      platform: 'neutral',
      outfile: file,
      mainFields: ['module', 'main'],
      conditions: ['@holdfast/source', 'import', 'default'],
      // The fallback, wrapped to record that it was imported (kept in its own lazily run module).
      plugins: [
        {
          name: 'record-noble',
          setup(b) {
            b.onResolve({ filter: /^@noble\/curves\/ed25519$/ }, (args) =>
              args.importer.endsWith('record-noble')
                ? undefined
                : { path: 'record-noble', namespace: 'record' },
            );
            b.onLoad({ filter: /.*/, namespace: 'record' }, () => ({
              contents: "globalThis.nobleLoaded = true; export * from '@noble/curves/ed25519';",
              resolveDir: fileURLToPath(new URL('..', import.meta.url)),
            }));
          },
        },
      ],
      logLevel: 'silent',
    });
    const { stdout } = await run(process.execPath, [file]);
    expect(JSON.parse(stdout)).toEqual({ valid: true, forged: false, noble: loadsNoble });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
