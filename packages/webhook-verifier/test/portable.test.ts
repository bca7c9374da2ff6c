import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { expect, it } from 'vitest';

// The portable build must run on Deno, Bun, Workers and browsers: no Buffer, no node: imports.
it.each(['index', 'receiver', 'hono', 'postgres'])(
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
