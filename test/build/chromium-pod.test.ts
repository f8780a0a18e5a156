/**
 * The browser pod image's entrypoint (deploy/image/chromium-pod.sh) with this machine's Chromium, as the pod runs it:
 * the pod's arguments appended, DevTools answering on an address other than loopback (what browser-pool and the
 * readiness probe call), and the image's HEALTHCHECK command passing. The image itself is not built here.
 */
import { execFile, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { networkInterfaces, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { freePort, waitForExit } from "@bas/embedded-infra";
import { eventually, runEnv } from "@bas/testing";
import { effectiveInstructions, execForm, last, parseDockerfile } from "../support/dockerfile";

const ROOT = resolve(__dirname, "../..");
const run = promisify(execFile);

/** An address of this machine other than loopback (the pod IP's stand-in), else loopback. */
const podIp = () =>
  Object.values(networkInterfaces())
    .flat()
    .find((a) => a?.family === "IPv4" && !a.internal)?.address ?? "127.0.0.1";

test("Chromium serves DevTools on the pod's address, and the image's HEALTHCHECK passes", async () => {
  const dir = mkdtempSync(join(tmpdir(), "bas-chromium-pod-"));
  const port = String(await freePort());
  const env = { ...runEnv(), HOME: dir, TMPDIR: dir, DEVTOOLS_PORT: port };
  // Its own process group: socat and Chromium's helpers end with it.
  const pod = spawn(
    "sh",
    [join(ROOT, "deploy/image/chromium-pod.sh"), "--window-size=800,600", "--disable-dev-shm-usage", "about:blank"],
    { env: { ...env, CHROMIUM_DEVTOOLS_PORT: String(await freePort()) }, detached: true, stdio: "ignore" },
  );
  try {
    // A first request can reach Chromium before its DevTools answer, and then waits forever: each try is bounded.
    const version = await eventually(
      () =>
        fetch(`http://${podIp()}:${port}/json/version`, { signal: AbortSignal.timeout(2_000) }).then(
          (r) => r.json() as Promise<any>,
          () => undefined,
        ),
      (v) => v !== undefined,
      20_000,
    );
    expect(version.Browser).toMatch(/^Chrome\//);
    expect(new URL(version.webSocketDebuggerUrl).host).toBe(`${podIp()}:${port}`);
    const pages = (await (await fetch(`http://${podIp()}:${port}/json/list`)).json()) as Array<{ url: string }>;
    expect(pages.map((p) => p.url)).toContain("about:blank");

    const [command, ...args] = execForm(
      last(effectiveInstructions(parseDockerfile(join(ROOT, "Dockerfile")), "chromium"), "HEALTHCHECK")!.args,
    );
    await expect(run(command, args, { env, timeout: 5_000 })).resolves.toBeDefined();
  } finally {
    process.kill(-pod.pid!, "SIGKILL");
    await waitForExit(pod, 10_000);
    rmSync(dir, { recursive: true, force: true });
  }
});
