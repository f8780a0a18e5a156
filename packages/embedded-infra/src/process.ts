import type { ChildProcess } from "node:child_process";

/** Resolves when the child prints a line matching `pattern` on stderr or stdout; rejects if it exits first. */
export function waitForLine(child: ChildProcess, pattern: RegExp, timeoutMs: number, name: string): Promise<string> {
  return new Promise((resolve, reject) => {
    let output = "";
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const match = output.match(pattern);
      if (match) {
        done();
        resolve(match[0]);
      }
    };
    const onExit = (code: number | null) => {
      done();
      reject(new Error(`${name} exited (code ${code}) before it was ready:\n${output.slice(-2000)}`));
    };
    const timer = setTimeout(() => {
      done();
      child.kill("SIGKILL");
      reject(new Error(`${name} was not ready within ${timeoutMs} ms:\n${output.slice(-2000)}`));
    }, timeoutMs);
    const done = () => {
      clearTimeout(timer);
      child.stderr?.off("data", onData);
      child.stdout?.off("data", onData);
      child.off("exit", onExit);
      // Keep draining so a chatty child never blocks on a full pipe.
      child.stderr?.resume();
      child.stdout?.resume();
    };
    child.stderr?.on("data", onData);
    child.stdout?.on("data", onData);
    child.on("exit", onExit);
  });
}

/** Waits for the child to exit, killing it hard after `timeoutMs`. */
export function waitForExit(child: ChildProcess, timeoutMs: number): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
    child.once("exit", () => {
      clearTimeout(timer);
      resolve();
    });
  });
}
