import { spawn } from "node:child_process";
import { closeSync, openSync, readFileSync } from "node:fs";
import type { CdpRelay } from "../../domain/browser-driver";
import { SANDBOX_DEVTOOLS_PORT } from "./sandbox";

/**
 * Inside the sandbox's network: connects to Chromium's DevTools, sends it the caller's upgrade request, and becomes
 * socat between that connection (fd 4) and the caller's (fd 3). bash's /dev/tcp opens the connection so that the
 * request goes first; nothing of the caller's is ever run, only printed.
 */
const RELAY_SCRIPT = `exec 4<>/dev/tcp/127.0.0.1/${SANDBOX_DEVTOOLS_PORT} && printf %s "$CDP_REQUEST" >&4 && exec socat FD:3 FD:4`;

/**
 * Carries callers' CDP connections into a local browser's sandbox, one relay process each, so that a message passes
 * one relay as it would on the sandbox's own DevTools socket, rather than this service and then the sandbox's bridge.
 * The relay joins the sandbox's network only: it runs as the browser's user without capabilities or groups, cannot
 * be seen from inside the sandbox (another PID namespace), and reaches nothing but the browser's loopback.
 *
 * Only when browser-pool runs as root (`uid` set). Otherwise bubblewrap's network belongs to a user namespace no
 * process is in (it nests a second one for the sandbox), which nsenter cannot enter: undefined, and the proxy relays.
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
  let closed = false;
  return {
    start(client, request) {
      if (closed) throw new Error("the browser's sandbox is closed");
      // The network is the relay's descriptor 4 until bash puts the connection to Chromium there.
      const enter = ["--net=/proc/self/fd/4", `--setuid=${uid}`, `--setgid=${uid}`];
      // setpriv: the relay ends with this process, as the connections it spliced itself would (a restart adopts the
      // browsers, not their callers' connections).
      return spawn("nsenter", [...enter, "--", "setpriv", "--pdeathsig", "KILL", "--", "bash", "-c", RELAY_SCRIPT], {
        stdio: ["ignore", "ignore", "pipe", client, network],
        env: { PATH: process.env.PATH, CDP_REQUEST: request },
      });
    },
    close() {
      if (closed) return;
      closed = true;
      closeSync(network);
    },
  };
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
