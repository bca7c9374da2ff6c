import { defineConfig, holdfastBuild } from '../../tsup.config.base';

// @holdfast/node-bridge (private) is bundled into the Express and Fastify doors: dist never imports it.
export default defineConfig(
  holdfastBuild(
    {
      index: 'src/index.ts',
      hono: 'src/hono.ts',
      node: 'src/hono-node.ts',
      express: 'src/express.ts',
      fastify: 'src/fastify.ts',
    },
    { noExternal: ['@holdfast/node-bridge'] },
  ),
);
