/**
 * Prints the run's totals as one plain line ("N passed, N failed, N skipped") after jest's own summary, so any CI
 * that reads closing lines sees how many tests ran.
 */
class SummaryReporter {
  onRunComplete(_contexts, results) {
    const skipped = results.numPendingTests + results.numTodoTests;
    process.stdout.write(`\n${results.numPassedTests} passed, ${results.numFailedTests} failed, ${skipped} skipped\n`);
  }
}

module.exports = SummaryReporter;
