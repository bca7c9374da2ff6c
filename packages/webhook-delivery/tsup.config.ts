import { defineConfig, holdfastBuild } from '../../tsup.config.base';

// @holdfast/db (the database boundary) is a dependency, never bundled: one copy per tree. The
// shims give the CommonJS build the `import.meta.url` that finds the migration files.
// @holdfast/ids (private) is bundled in: dist never imports it.
export default defineConfig(
  holdfastBuild(
    {
      index: 'src/index.ts',
      prometheus: 'src/prometheus.ts',
      openapi: 'src/openapi.ts',
    },
    { shims: true, noExternal: ['@holdfast/ids'] },
  ),
);
