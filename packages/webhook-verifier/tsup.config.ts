import { resolve } from 'node:path';
import type { Plugin } from 'esbuild';
import { defineConfig, holdfastBuild } from '../../tsup.config.base';

const entries = {
  index: 'src/index.ts',
  receiver: 'src/receiver.ts',
  postgres: 'src/postgres.ts',
  hono: 'src/hono.ts',
};

// The Node build swaps the noble HMAC for node:crypto; everything else is the same source.
const nodeHmac: Plugin = {
  name: 'holdfast-node-hmac',
  setup(build) {
    build.onResolve({ filter: /^\.\/hmac$/ }, (args) => ({ path: resolve(args.resolveDir, 'hmac-node.ts') }));
  },
};

export default defineConfig([
  holdfastBuild(entries, { clean: false, platform: 'neutral' }),
  holdfastBuild(
    { index: entries.index, hono: entries.hono },
    { clean: false, outDir: 'dist/node', platform: 'node', esbuildPlugins: [nodeHmac] },
  ),
]);
