import { defineConfig, holdfastBuild } from '../../tsup.config.base';

export default defineConfig(
  holdfastBuild({
    index: 'src/index.ts',
    hono: 'src/hono.ts',
    express: 'src/express.ts',
    fastify: 'src/fastify.ts',
  }),
);
