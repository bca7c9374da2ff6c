import { coreAndDoors, defineConfig, holdfastBuild } from '../../tsup.config.base';

// shims: the CommonJS build gets an import.meta.url, which finds the portal's files beside dist/.
export default defineConfig(holdfastBuild(coreAndDoors, { shims: true }));
