import { spawn } from "node:child_process";
import { closeSync, fstatSync, openSync, readFileSync } from "node:fs";
import { createInterface } from "node:readline";
import type { CdpRelay, RelayRun } from "../../domain/browser-driver";
import { RELAY_HOST_PROGRAM } from "./relay-program";
import { SANDBOX_DEVTOOLS_PORT } from "./sandbox";

/**
 * Carries callers' CDP connections into a local browser's sandbox, one relay process each, so that a message passes
 * one relay as it would on the sandbox's own DevTools socket, rather than this service and then the sandbox's bridge.
 * A relay joins the sandbox's network only: it runs as the browser's user without capabilities, cannot be seen from
 * inside the sandbox (another PID namespace), and reaches nothing but the browser's loopback (`RELAY_HOST_PROGRAM`).
 * Relays are forked by this process's relay host, so no program starts for a caller.
 *
 * Only when browser-pool runs as root (`uid` set). Otherwise bubblewrap's network belongs to a user namespace no
 * process is in (it nests a second one for the sandbox), which could not be entered: undefined, and the proxy relays.
 * The network is held open by descriptor from the start, so a relay never enters another process's should the
 * sandbox end and its pid be reused. Undefined too when it cannot be opened (the sandbox is gone).
 */
export function sandboxRelay(bwrapPid: number, uid: number | undefined): CdpRelay | undefined {
  const init = uid === undefined ? undefined : sandboxInitPid(bwrapPid);
  if (init === undefined) return undefined;
  let network: number;
  try {
    network = openSync(`/proc/${init}/ns/net`, "r");
  } catch {
    return undefined;
  }
  const { dev, ino } = fstatSync(network);
  // Started with the first browser rather than on its first caller, whom its start (~40 ms) would hold up.
  relayHost();
  let closed = false;
  return {
    start(caller, request) {
      if (closed) throw new Error("the browser's sandbox is closed");
      const from = `${caller.descriptor} ${caller.remoteAddress ?? "-"} ${caller.remotePort ?? 0}`;
      return relayHost().start(`${from} ${network} ${dev}:${ino} ${uid} ${SANDBOX_DEVTOOLS_PORT}`, request);
    },
    close() {
      if (closed) return;
      closed = true;
      closeSync(network);
    },
  };
}

interface RelayHost {
  /** A relay for the connection and network `spec` names (see `RELAY_HOST_PROGRAM`), sending `request` first. */
  start(spec: string, request: string): RelayRun;
}

let host: RelayHost | undefined;

/** This process's relay host: started with the first relay, and again after it has ended. */
function relayHost(): RelayHost {
  if (host) return host;
  const child = spawn("perl", ["-e", RELAY_HOST_PROGRAM], {
    stdio: ["pipe", "pipe", "pipe"],
    env: { PATH: process.env.PATH },
  });
  const runs = new Map<string, { resolve(ended: { failure?: string }): void; failure?: string }>();
  let nextId = 0;
  let stderr = "";
  child.stderr.on("data", (chunk: Buffer) => {
    if (stderr.length < 1_000) stderr += chunk.toString();
  });
  createInterface({ input: child.stdout }).on("line", (line) => {
    const [kind, id, ...rest] = line.split(" ");
    const run = runs.get(id);
    if (!run) return;
    if (kind === "failed") run.failure = rest.join(" ");
    if (kind !== "ended") return;
    runs.delete(id);
    // Killed: ended as asked. Any other exit but 0 is a failure, told by what the relay said.
    const failed = rest[0] === "code" && rest[1] !== "0";
    run.resolve({ failure: failed ? (run.failure ?? `the relay exited with code ${rest[1]}`) : undefined });
  });
  const gone = (why: string) => {
    if (host === started) host = undefined;
    for (const run of runs.values()) run.resolve({ failure: `the relay host ended (${why}): ${stderr.trim()}` });
    runs.clear();
  };
  child.once("exit", (code, signal) => gone(signal ?? `code ${code}`));
  child.once("error", (err) => gone(err.message));
  child.stdin.on("error", () => undefined);
  // It ends with this process (its input closes), and holds up nothing until then.
  child.unref();
  for (const stream of [child.stdin, child.stdout, child.stderr]) (stream as unknown as { unref(): void }).unref();
  const started: RelayHost = {
    start(spec, request) {
      const id = String(nextId++);
      const ended = new Promise<{ failure?: string }>((resolve) => runs.set(id, { resolve }));
      child.stdin.write(`relay ${id} ${spec} ${Buffer.byteLength(request)}\n${request}`);
      return { kill: () => child.stdin.write(`kill ${id}\n`), ended };
    },
  };
  host = started;
  return started;
}

/** bubblewrap's child: the sandbox's first process, in its namespaces for as long as the sandbox lives. */
function sandboxInitPid(bwrapPid: number): number | undefined {
  try {
    const [first] = readFileSync(`/proc/${bwrapPid}/task/${bwrapPid}/children`, "utf8").trim().split(" ");
    return first ? Number(first) : undefined;
  } catch {
    return undefined;
  }
}
