/** How many of the slowest test files the summary names. */
const SLOWEST = 10;

/**
 * After jest's own summary: the slowest test files, each with the part of its time outside its tests (loading,
 * `beforeAll`/`afterAll`: what sharing a server would save), then the run's totals as one plain line ("N passed,
 * N failed, N skipped") last, so any CI that reads closing lines sees how many tests ran.
 */
class SummaryReporter {
  constructor(globalConfig) {
    this.rootDir = globalConfig.rootDir;
  }

  onRunComplete(_contexts, results) {
    const files = results.testResults.map((file) => {
      const total = (file.perfStats.end - file.perfStats.start) / 1000;
      const inTests = file.testResults.reduce((sum, t) => sum + (t.duration ?? 0), 0) / 1000;
      return { path: file.testFilePath, total, outside: Math.max(0, total - inTests), tests: file.testResults.length };
    });
    files.sort((a, b) => b.total - a.total);
    const lines = files.slice(0, SLOWEST).map(({ path, total, outside, tests }) => {
      const name = path.startsWith(`${this.rootDir}/`) ? path.slice(this.rootDir.length + 1) : path;
      return `${total.toFixed(1).padStart(7)} s  ${name} (${tests} tests; ${outside.toFixed(1)} s outside them)`;
    });
    const skipped = results.numPendingTests + results.numTodoTests;
    process.stdout.write(
      `\nslowest test files (${((Date.now() - results.startTime) / 1000).toFixed(0)} s in all):\n${lines.join("\n")}\n` +
        `\n${results.numPassedTests} passed, ${results.numFailedTests} failed, ${skipped} skipped\n`,
    );
  }
}

module.exports = SummaryReporter;
