import { resolve } from 'node:path';
import type { Plugin } from 'esbuild';
import { defineConfig, holdfastBuild } from '../../tsup.config.base';

const entries = {
  index: 'src/index.ts',
  receiver: 'src/receiver.ts',
  postgres: 'src/postgres.ts',
  hono: 'src/hono.ts',
};

// The Node build swaps the noble HMAC and ed25519 for node:crypto; everything else is the same
// source. @holdfast/webhook-keys and @holdfast/node-bridge (private) are bundled in: dist never
// imports them; @holdfast/db (the database boundary) is a dependency, never bundled.
// The Express and Fastify doors run on Node only: they are in the Node build alone.
const nodeCrypto: Plugin = {
  name: 'holdfast-node-crypto',
  setup(build) {
    build.onResolve({ filter: /^\.\/(hmac|ed25519)$/ }, (args) => ({
      path: resolve(args.resolveDir, `${args.path.slice(2)}-node.ts`),
    }));
  },
};
const noExternal = ['@holdfast/webhook-keys', '@holdfast/node-bridge'];

export default defineConfig([
  holdfastBuild(entries, {
    clean: false,
    platform: 'neutral',
    noExternal,
  }),
  holdfastBuild(
    {
      index: entries.index,
      receiver: entries.receiver,
      hono: entries.hono,
      express: 'src/express.ts',
      fastify: 'src/fastify.ts',
    },
    { clean: false, outDir: 'dist/node', platform: 'node', esbuildPlugins: [nodeCrypto], noExternal },
  ),
]);
