import { fileURLToPath } from 'node:url';
import { preparePgliteTemplate } from '@holdfast/pg/testing';

// Runs once per `vitest run`, before the test processes start: the template every test PGlite
// boots from (an initialised data directory), made once per PGlite version and kept in
// node_modules/.cache, so no test process pays for PGlite's initdb.
export default async function setup(): Promise<void> {
  await preparePgliteTemplate(
    fileURLToPath(new URL('../node_modules/.cache/holdfast-test', import.meta.url)),
  );
}
