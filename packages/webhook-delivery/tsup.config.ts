import { defineConfig, holdfastBuild } from '../../tsup.config.base';

export default defineConfig(
  holdfastBuild({
    index: 'src/index.ts',
    postgres: 'src/postgres.ts',
    prometheus: 'src/prometheus.ts',
    openapi: 'src/openapi.ts',
  }),
);
