import { realpathSync } from "node:fs";
import { basename } from "node:path";
import { ANGLE_FEATURES_ARG, DISABLED_FEATURES, MODEL_MANIFEST_ARG, windowArgs } from "../chromium-features";

export interface ChromiumArgsOptions {
  userDataDir: string;
  screenWidth: number;
  screenHeight: number;
  /** Inside the browser's network namespace: where DevTools listens and where the bridge to the egress proxy is. */
  devtoolsPort: number;
  proxyPort: number;
  /** Only where the kernel allows no sandbox inside bubblewrap (CHROMIUM_SANDBOX=false). */
  noSandbox: boolean;
  /**
   * The network service (in Chromium's sandbox) and the GPU (software compositing) in processes of their own
   * (CHROMIUM_ISOLATED_SERVICES); otherwise both run inside the browser process, ~34 MB less per browser.
   */
  isolatedServices: boolean;
  /**
   * The GPU process (with isolatedServices) in Chromium's sandbox too (CHROMIUM_GPU_SANDBOX). Headless Chromium starts
   * it without one; started early, before the GPU is set up, it leaves pages without WebGL.
   */
  gpuSandbox?: boolean;
  /** A caller's own proxy inspects TLS (customProxy.ignoreCertErrors). */
  ignoreCertificateErrors?: boolean;
  extraArgs?: readonly string[];
}

/**
 * Flags for a headless Chromium in its sandbox: DevTools on the sandbox's own loopback, every request through the
 * egress proxy (loopback included, and WebRTC may not send UDP around it), nothing that phones home or waits for a
 * first-run UI, and a profile of its own.
 */
export function chromiumArgs(options: ChromiumArgsOptions): string[] {
  return [
    "--headless",
    "--remote-debugging-address=127.0.0.1",
    `--remote-debugging-port=${options.devtoolsPort}`,
    `--user-data-dir=${options.userDataDir}`,
    ...windowArgs(options.screenWidth, options.screenHeight),
    ...(options.noSandbox ? ["--no-sandbox"] : []),
    // Chromium on Linux runs its network service unsandboxed unless asked: it parses every byte the sites send.
    ...(options.isolatedServices
      ? ["--enable-features=NetworkServiceSandbox", ...(options.gpuSandbox ? ["--gpu-sandbox-start-early"] : [])]
      : // Nothing is then forked from the zygote for processes that sandbox themselves (the GPU process was), so
        // none is started: any such process (audio, printing) is started by exec when needed.
        ["--enable-features=NetworkServiceInProcess2", "--in-process-gpu", "--no-unsandboxed-zygote"]),
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-default-apps",
    "--disable-sync",
    "--disable-breakpad",
    "--disable-domain-reliability",
    "--disable-client-side-phishing-detection",
    `--disable-features=${DISABLED_FEATURES.join(",")}`,
    ANGLE_FEATURES_ARG,
    MODEL_MANIFEST_ARG,
    "--metrics-recording-only",
    "--no-first-run",
    "--no-default-browser-check",
    "--password-store=basic",
    "--use-mock-keychain",
    // Without <-loopback> Chromium would go around the proxy for loopback, and the egress policy would not see it.
    `--proxy-server=http://127.0.0.1:${options.proxyPort}`,
    "--proxy-bypass-list=<-loopback>",
    "--force-webrtc-ip-handling-policy=disable_non_proxied_udp",
    ...(options.ignoreCertificateErrors ? ["--ignore-certificate-errors"] : []),
    ...(options.extraArgs ?? []),
    "about:blank",
  ];
}

/**
 * Whether CHROMIUM_PATH is Chromium's headless shell (the old headless implementation, lighter at rest) rather than
 * the full browser: Debian's `chromium-headless-shell`, Chrome for Testing's `chrome-headless-shell`, a build's
 * `headless_shell`, by its name or the name of the file it links to.
 */
export function isHeadlessShell(chromiumPath: string): boolean {
  const named = (path: string) => /headless[-_]shell/.test(basename(path));
  try {
    return named(chromiumPath) || named(realpathSync(chromiumPath));
  } catch {
    return named(chromiumPath);
  }
}
