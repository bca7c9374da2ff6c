import { defineConfig, holdfastBuild } from '../../tsup.config.base';

// @holdfast/db (private: the database boundary and its adapters) is bundled in: dist never imports it.
export default defineConfig(
  holdfastBuild(
    { index: 'src/index.ts', postgres: 'src/postgres.ts', zod: 'src/zod.ts' },
    { noExternal: ['@holdfast/db'], dts: { resolve: ['@holdfast/db'] } },
  ),
);
