import { coreAndDoors, defineConfig, holdfastBuild } from '../../tsup.config.base';

// @holdfast/node-bridge (private) is bundled into the Express and Fastify doors: dist never imports it.
export default defineConfig(
  holdfastBuild({ ...coreAndDoors, openapi: 'src/openapi.ts' }, { noExternal: ['@holdfast/node-bridge'] }),
);
