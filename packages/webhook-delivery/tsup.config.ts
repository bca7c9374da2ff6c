import { defineConfig, holdfastBuild } from '../../tsup.config.base';

export default defineConfig(
  holdfastBuild(
    {
      index: 'src/index.ts',
      postgres: 'src/postgres.ts',
      prometheus: 'src/prometheus.ts',
      openapi: 'src/openapi.ts',
    },
    // @holdfast/db (private: the database boundary and its adapters) is bundled in.
    { noExternal: ['@holdfast/db'], dts: { resolve: ['@holdfast/db'] } },
  ),
);
