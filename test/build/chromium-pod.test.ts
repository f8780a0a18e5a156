/**
 * The browser pod image's entrypoint (deploy/image/chromium-pod.sh) with this machine's Chromium, as the pod runs it:
 * the arguments browser-pool's pod manifest gives it appended, DevTools answering on an address other than loopback (what browser-pool and the
 * readiness probe call), and the image's HEALTHCHECK command passing. The image itself is not built here.
 */
import { execFile, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { networkInterfaces, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { freePort, waitForExit } from "@bas/embedded-infra";
import { eventually, runEnv } from "@bas/testing";
import puppeteer from "puppeteer-core";
import { browserPodManifest } from "../../services/browser-pool/src/adapters/kubernetes/pod-manifest";
import { effectiveInstructions, execForm, last, parseDockerfile } from "../support/dockerfile";

const ROOT = resolve(__dirname, "../..");
/** The arguments browser-pool's Kubernetes driver appends (its proxy is not there: a blank page needs none). */
const podArgs = browserPodManifest({
  browserId: "5f0c6c1e-8a43-4d5e-9a3b-1c2d3e4f5a6b",
  namespace: "browsers",
  nodeId: "node",
  deployment: "bas",
  image: "bas/chromium",
  devtoolsPort: 9222,
  screenWidth: 800,
  screenHeight: 600,
  proxyServer: "http://127.0.0.1:9",
  resources: { cpu: "500m", memory: "1Gi" },
}).spec!.containers[0].args!;
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
  const pod = spawn("sh", [join(ROOT, "deploy/image/chromium-pod.sh"), ...podArgs], {
    env: { ...env, CHROMIUM_DEVTOOLS_PORT: String(await freePort()) },
    detached: true,
    stdio: "ignore",
  });
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
    // At rest, one renderer (the blank page's): none preloaded for the omnibox's popups, no spare one. The blank
    // page's own can still be starting when DevTools first answers (Chromium lists a process once it has its pid).
    const browser = await puppeteer.connect({ browserURL: `http://${podIp()}:${port}` });
    const session = await browser.target().createCDPSession();
    const renderers = async () =>
      ((await session.send("SystemInfo.getProcessInfo")) as { processInfo: { type: string }[] }).processInfo.filter(
        (p) => p.type === "renderer",
      );
    const atRest = await eventually(renderers, (found) => found.length > 0, 10_000);
    await browser.disconnect();
    expect(atRest).toHaveLength(1);

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
