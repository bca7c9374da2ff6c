// Bundle size of the portable verifier against the `standardwebhooks` package (issue 6, "Must
// show"): each bundled by esbuild the same way (ESM, platform neutral, minified, dependencies
// included), then gzipped at level 9. Usage: npx tsx --conditions=@holdfast/source bench/webhooks/size.ts
import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';
import { summary } from '../summary';

async function size(
  name: string,
  contents: string,
): Promise<{ name: string; minified: number; gzipped: number }> {
  const result = await build({
    stdin: { contents, resolveDir: process.cwd(), loader: 'ts' },
    bundle: true,
    write: false,
    minify: true,
    format: 'esm',
    platform: 'neutral',
    mainFields: ['module', 'main'],
    // Only the portable build: the "node" condition would pick the node:crypto build.
    conditions: ['@holdfast/source', 'import', 'default'],
    logLevel: 'silent',
  });
  const code = result.outputFiles[0]?.contents ?? new Uint8Array();
  return { name, minified: code.length, gzipped: gzipSync(code, { level: 9 }).length };
}

const rows = [
  await size(
    '@holdfast/webhook-verifier (portable, createVerifier)',
    "export { createVerifier } from './packages/webhook-verifier/src/index';",
  ),
  await size('standardwebhooks (Webhook)', "export { Webhook } from 'standardwebhooks';"),
];
console.log('| package | minified | minified + gzip |');
console.log('|---|---:|---:|');
for (const row of rows)
  console.log(
    `| ${row.name} | ${row.minified.toLocaleString('en-US')} B | ${row.gzipped.toLocaleString('en-US')} B |`,
  );
const [ours, theirs] = rows;
if (ours && theirs)
  summary(
    import.meta.url,
    `webhooks size: ${ours.gzipped.toLocaleString('en-US')} B gzipped vs standardwebhooks ${theirs.gzipped.toLocaleString('en-US')} B (${(ours.gzipped / theirs.gzipped).toFixed(2)}x)`,
  );
