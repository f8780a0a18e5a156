/**
 * The launcher's terminal. A closed pipe (`npm start | tee log`, then Ctrl-C ends `tee` first) must not crash the
 * launcher before it has stopped its children: a write to a closed stream is dropped, and the launcher is told once,
 * so that it can stop everything (it has lost the person who watches it).
 */
let onClosed: (() => void) | undefined;
let closed = false;
for (const stream of [process.stdout, process.stderr]) {
  stream.on("error", () => {
    if (closed) return;
    closed = true;
    onClosed?.();
  });
}

export function whenOutputCloses(handler: () => void): void {
  onClosed = handler;
}

export function say(msg: string): void {
  if (!closed) process.stdout.write(`${msg}\n`);
}

export function complain(msg: string): void {
  if (!closed) process.stderr.write(`${msg}\n`);
}
