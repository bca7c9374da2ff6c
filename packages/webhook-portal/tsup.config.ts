import { coreAndDoors, defineConfig, holdfastBuild } from '../../tsup.config.base';

export default defineConfig(holdfastBuild(coreAndDoors));
