import { defineConfig, holdfastBuild } from '../../tsup.config.base';

// One build serves every runtime: `#hmac` and `#ed25519` (package.json "imports") resolve to
// node:crypto on Node, Deno and Bun (the `node` condition) and to @noble elsewhere, so the entry
// is built once. @holdfast/webhook-keys (private) is bundled in: dist never imports it.
const shared = {
  clean: false,
  platform: 'neutral' as const,
  noExternal: ['@holdfast/webhook-keys'],
  external: ['#hmac', '#ed25519', /^node:/],
  // `node:crypto`, as written: the spelling Deno and Bun import without a bundler.
  removeNodeProtocol: false,
};

export default defineConfig([
  holdfastBuild({ index: 'src/index.ts' }, shared),
  holdfastBuild(
    {
      hmac: 'src/hmac.ts',
      'hmac-node': 'src/hmac-node.ts',
      ed25519: 'src/ed25519.ts',
      'ed25519-node': 'src/ed25519-node.ts',
    },
    { ...shared, dts: false },
  ),
]);
