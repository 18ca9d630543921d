/**
 * Ends a vitest run with one plain line, `N passed, N failed` (and `, N skipped`), after vitest's own
 * summary: a line any CI can read, whatever it knows of vitest's output.
 */
import type { Reporter, TestModule } from 'vitest/node';

/** The closing-line reporter; used beside vitest's default one (vitest.config.ts). */
export default class SummaryReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    let passed = 0;
    let failed = 0;
    let skipped = 0;
    for (const module of testModules) {
      let failedHere = 0;
      for (const test of module.children.allTests()) {
        const state = test.result().state;
        if (state === 'passed') passed += 1;
        else if (state === 'failed') failedHere += 1;
        else if (state === 'skipped') skipped += 1;
      }
      // A file that failed to load, or whose beforeAll/afterAll threw (its tests then show as skipped or
      // passed), has no failed test to count but is a failure all the same.
      if (module.state() === 'failed' && failedHere === 0) failedHere = 1;
      failed += failedHere;
    }
    process.stdout.write(
      `\n${passed} passed, ${failed} failed${skipped > 0 ? `, ${skipped} skipped` : ''}\n`,
    );
  }
}
