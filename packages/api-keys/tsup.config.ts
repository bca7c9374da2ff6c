import { coreAndDoors, defineConfig, holdfastBuild } from '../../tsup.config.base';

// @holdfast/ids (private) is bundled in: dist never imports it.
export default defineConfig(holdfastBuild(coreAndDoors, { noExternal: ['@holdfast/ids'] }));
