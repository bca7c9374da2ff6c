import { defineConfig, holdfastBuild } from '../../tsup.config.base';

// @holdfast/node-bridge (private) is bundled into the Express door: dist never imports it.
export default defineConfig(
  holdfastBuild(
    {
      index: 'src/index.ts',
      postgres: 'src/postgres.ts',
      hono: 'src/hono.ts',
      express: 'src/express.ts',
      fastify: 'src/fastify.ts',
    },
    { noExternal: ['@holdfast/node-bridge'] },
  ),
);
