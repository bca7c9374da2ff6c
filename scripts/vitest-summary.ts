import type { Reporter, TestModule } from 'vitest/node';

/**
 * Ends every run with one plain line, `Tests: N passed, N failed, N skipped`, and lists the
 * skipped tests with their reasons, so a run that silently skipped its PostgreSQL or browser
 * tests says so.
 */
export default class SummaryReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    let passed = 0;
    let failed = 0;
    let skipped = 0;
    const skippedNames: string[] = [];
    for (const module of testModules) {
      for (const test of module.children.allTests()) {
        const state = test.result().state;
        if (state === 'passed') passed += 1;
        else if (state === 'failed') failed += 1;
        else {
          skipped += 1;
          skippedNames.push(`${module.moduleId.replace(`${process.cwd()}/`, '')} > ${test.fullName}`);
        }
      }
    }
    if (skippedNames.length > 0) {
      console.log(`\nSkipped (${skippedNames.length}):`);
      for (const name of skippedNames.slice(0, 50)) console.log(`  - ${name}`);
    }
    console.log(`\nTests: ${passed} passed, ${failed} failed, ${skipped} skipped`);
  }
}
