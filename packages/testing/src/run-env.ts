/**
 * What a process a test starts with an environment of its own must still carry from the run: the run's temp folder
 * (so its caches, tsx's among them, go with the run instead of into /tmp) and the run's marker (so the run's janitor
 * stops it when the run dies), besides PATH and HOME.
 */
export function runEnv(): Record<string, string> {
  const { PATH, HOME, TMPDIR, BAS_TEST_ROOT } = process.env;
  return Object.fromEntries(
    Object.entries({ PATH, HOME, TMPDIR, BAS_TEST_ROOT }).filter((e): e is [string, string] => e[1] !== undefined),
  );
}
