import { resolve } from 'node:path';
import type { Plugin } from 'esbuild';
import type { Options } from 'tsup';
import { defineConfig, holdfastBuild } from '../../tsup.config.base';

const entries = {
  index: 'src/index.ts',
  v1: 'src/v1.ts',
  receiver: 'src/receiver.ts',
  postgres: 'src/postgres.ts',
  hono: 'src/hono.ts',
};

// The Node build swaps the portable HMAC and ed25519 (WebCrypto) for node:crypto; everything else
// is the same source. @holdfast/webhook-keys and @holdfast/node-bridge (private) are bundled in:
// dist never imports them; @holdfast/db (the database boundary) is a dependency, never bundled.
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

const nodeEntries = {
  index: entries.index,
  v1: entries.v1,
  receiver: entries.receiver,
  hono: entries.hono,
  express: 'src/express.ts',
  fastify: 'src/fastify.ts',
};
const portable: Partial<Options> = {
  clean: false,
  platform: 'neutral',
  noExternal,
};
const node: Partial<Options> = {
  clean: false,
  outDir: 'dist/node',
  platform: 'node',
  esbuildPlugins: [nodeCrypto],
  noExternal,
};

// The entries share the code they have in common (the verifier, the receiver) in chunks instead
// of a copy each: about half of what the package installs.
export default defineConfig([
  holdfastBuild(entries, { ...portable, splitting: true }),
  holdfastBuild(nodeEntries, { ...node, splitting: true }),
]);
