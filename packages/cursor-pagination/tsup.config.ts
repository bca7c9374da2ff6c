import { defineConfig, holdfastBuild } from '../../tsup.config.base';

// @holdfast/db and @holdfast/node-bridge (private) are bundled in: dist never imports them.
export default defineConfig(
  holdfastBuild(
    {
      index: 'src/index.ts',
      postgres: 'src/postgres.ts',
      zod: 'src/zod.ts',
      hono: 'src/hono.ts',
      express: 'src/express.ts',
      fastify: 'src/fastify.ts',
    },
    { noExternal: ['@holdfast/db', '@holdfast/node-bridge'], dts: { resolve: ['@holdfast/db'] } },
  ),
);
