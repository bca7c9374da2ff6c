import { defineConfig, holdfastBuild } from '../../tsup.config.base';

// @holdfast/node-bridge and @holdfast/db (private) are bundled in: dist never imports them.
export default defineConfig(
  holdfastBuild(
    {
      index: 'src/index.ts',
      postgres: 'src/postgres.ts',
      hono: 'src/hono.ts',
      express: 'src/express.ts',
      fastify: 'src/fastify.ts',
    },
    { noExternal: ['@holdfast/node-bridge', '@holdfast/db'], dts: { resolve: ['@holdfast/db'] } },
  ),
);
