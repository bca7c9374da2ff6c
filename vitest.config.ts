import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

// Tests run against live sources through the "@holdfast/source" export condition, so no
// package needs building before its dependents are tested (the zod monorepo does the same).
const conditions = ['@holdfast/source', 'node', 'import', 'module', 'default'];

export default defineConfig({
  resolve: { conditions },
  // vitest hands the SSR conditions to Node as --conditions, so `import` is left out of them: a
  // CommonJS require (node-postgres requiring pg-pool) would otherwise load the ES module
  // build. Vite adds `import` or `require` by itself for each import it resolves.
  ssr: {
    resolve: {
      conditions: conditions.filter((condition) => condition !== 'import'),
      externalConditions: ['@holdfast/source'],
    },
  },
  test: {
    include: [
      'packages/*/test/**/*.test.ts',
      'internal/*/test/**/*.test.ts',
      'examples/*/test/**/*.test.ts',
      'scripts/*/test/**/*.test.ts',
    ],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // vitest's default is one worker fewer than the cores: one worker on a 2-core machine (CI's
    // and ours). The tests spend much of their time waiting (on child processes, the browser,
    // retries), so a worker per core keeps both busy.
    maxWorkers: Math.max(2, availableParallelism()),
    // Files share their worker process (and its module cache and one PGlite, booted once: see
    // createTestDatabase in @holdfast/pg/testing) instead of a fresh process each. No test
    // mocks modules or stubs globals, so nothing leaks from one file to the next.
    isolate: false,
    globalSetup: ['./scripts/vitest-global-setup.ts'],
    setupFiles: ['./vitest.setup.ts'],
    reporters: ['default', './scripts/vitest-summary.ts'],
  },
});
