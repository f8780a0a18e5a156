/**
 * A running browser's exit, reported once: `exit` tells every listener (one that listens later too) the first time,
 * unless `kill` came first; `kill` is true only the first time it is called (a kill is safe to call twice).
 */
export function browserExit() {
  let killed = false;
  let detail: string | undefined;
  const listeners: Array<(detail: string) => void> = [];
  return {
    /** Reports `why` and returns true, unless the browser was killed or has already exited. */
    exit(why: string): boolean {
      if (killed || detail !== undefined) return false;
      detail = why;
      for (const listener of listeners) listener(why);
      return true;
    },
    kill(): boolean {
      if (killed) return false;
      killed = true;
      return true;
    },
    onExit(listener: (detail: string) => void): void {
      // A browser that died before anyone listened still reports it.
      if (detail !== undefined) queueMicrotask(() => listener(detail!));
      else listeners.push(listener);
    },
  };
}
