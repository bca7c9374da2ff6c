import { defineConfig, holdfastBuild } from '../../tsup.config.base';

// @holdfast/ids (private) is bundled in: dist never imports it.
export default defineConfig(
  holdfastBuild(
    {
      index: 'src/index.ts',
      hono: 'src/hono.ts',
      express: 'src/express.ts',
      fastify: 'src/fastify.ts',
    },
    { noExternal: ['@holdfast/ids'] },
  ),
);
