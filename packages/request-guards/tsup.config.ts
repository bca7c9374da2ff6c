import { defineConfig, holdfastBuild } from '../../tsup.config.base';

export default defineConfig(
  holdfastBuild({ index: 'src/index.ts', hono: 'src/hono.ts', node: 'src/hono-node.ts' }),
);
