import { defineConfig, holdfastBuild } from '../../tsup.config.base';

// One build serves every runtime: the crypto differs by file, not by build. `#hmac` and
// `#ed25519` (package.json "imports") resolve to node:crypto on Node, Deno and Bun (the `node`
// condition) and to the portable HMAC and WebCrypto elsewhere, so no entry is built twice.
// @holdfast/webhook-keys and @holdfast/node-bridge (private) are bundled in: dist never imports
// them; @holdfast/db (the database boundary) is an optional peer, never bundled.
const entries = {
  index: 'src/index.ts',
  v1: 'src/v1.ts',
  receiver: 'src/receiver.ts',
  postgres: 'src/postgres.ts',
  hono: 'src/hono.ts',
  express: 'src/express.ts',
  fastify: 'src/fastify.ts',
};
const crypto = {
  hmac: 'src/hmac.ts',
  'hmac-node': 'src/hmac-node.ts',
  ed25519: 'src/ed25519.ts',
  'ed25519-node': 'src/ed25519-node.ts',
};
const shared = {
  clean: false,
  platform: 'neutral' as const,
  noExternal: ['@holdfast/webhook-keys', '@holdfast/node-bridge'],
  external: ['#hmac', '#ed25519', /^node:/],
  // `node:crypto`, as written: the spelling Deno and Bun import without a bundler.
  removeNodeProtocol: false,
};

// The entries share the code they have in common (the verifier, the receiver) in chunks instead
// of a copy each. The crypto files are loaded through "imports" alone: no declarations.
export default defineConfig([
  holdfastBuild(entries, { ...shared, splitting: true }),
  holdfastBuild(crypto, { ...shared, dts: false }),
]);
