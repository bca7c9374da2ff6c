import { coreAndDoors, defineConfig, holdfastBuild } from '../../tsup.config.base';

// @holdfast/node-bridge (private) is bundled in: dist never imports it. @holdfast/db (the
// database boundary) is a dependency, never bundled, so an installed tree holds one copy.
export default defineConfig(holdfastBuild(coreAndDoors, { noExternal: ['@holdfast/node-bridge'] }));
