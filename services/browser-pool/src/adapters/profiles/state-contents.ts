/**
 * What a saved state leaves out of a profile folder: caches (they rebuild), Chromium's per-run files (locks,
 * sockets, crash reports) and downloads (kept elsewhere). Cookies, local storage, IndexedDB, service workers and
 * preferences stay.
 */
const LEFT_OUT =
  /(^|\/)(Singleton[^/]*|DevToolsActivePort|Crashpad|BrowserMetrics[^/]*|[^/]*Cache|Code Cache|CacheStorage|component_crx_cache|Downloads|\.cache)(\/|$)/;

/**
 * Whether a saved state holds this entry of a profile folder (`path` relative to it): plain files and folders only,
 * as a link could lead out of the folder once restored.
 */
export function heldInState(path: string, entry: { isFile(): boolean; isDirectory(): boolean }): boolean {
  // The archive names entries "./a/b"; a folder's listing, "a/b".
  return (entry.isFile() || entry.isDirectory()) && !LEFT_OUT.test(path.replace(/^\.\//, ""));
}
