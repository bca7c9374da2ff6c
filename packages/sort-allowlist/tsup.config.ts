import { defineConfig, holdfastBuild } from '../../tsup.config.base';

export default defineConfig(holdfastBuild({ index: 'src/index.ts', zod: 'src/zod.ts' }));
