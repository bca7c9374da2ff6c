import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';
import { expect, it } from 'vitest';

// The portable build must run on Deno, Bun, Workers and browsers: no Buffer, no node: imports.
it.each(['index', 'v1', 'receiver', 'hono', 'postgres'])(
  'the portable %s bundle uses no Buffer and no node: module',
  async (entry) => {
    const result = await build({
      entryPoints: [fileURLToPath(new URL(`../src/${entry}.ts`, import.meta.url))],
      bundle: true,
      write: false,
      platform: 'neutral',
      format: 'esm',
      mainFields: ['module', 'main'],
      external: ['hono', 'hono/*', 'postgres'],
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
