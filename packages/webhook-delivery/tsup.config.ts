import { defineConfig, holdfastBuild } from '../../tsup.config.base';

// @holdfast/db (the database boundary) is a dependency, never bundled: one copy per tree.
export default defineConfig(
  holdfastBuild({
    index: 'src/index.ts',
    postgres: 'src/postgres.ts',
    prometheus: 'src/prometheus.ts',
    openapi: 'src/openapi.ts',
  }),
);
