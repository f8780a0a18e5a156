import { ANGLE_FEATURES_ARG, DISABLED_FEATURES, MODEL_MANIFEST_ARG, windowArgs } from "./chromium-features";

export interface BrowserImageArgsOptions {
  screenWidth: number;
  screenHeight: number;
  /** http://host:port of the browser's egress proxy, as the browser reaches it: its only way out. */
  proxyServer: string;
  ignoreCertificateErrors?: boolean;
}

/**
 * The Chromium flags browser-pool appends to the browser image's entrypoint (deploy/image/chromium-pod.sh, which
 * sets DevTools, the profile and the sandbox), the same for a pod of the Kubernetes driver and a container of the
 * container driver: the window, nothing that phones home, every request through the egress proxy (loopback
 * included, and WebRTC may not send UDP around it), and a blank page.
 */
export function browserImageArgs(o: BrowserImageArgsOptions): string[] {
  return [
    ...windowArgs(o.screenWidth, o.screenHeight),
    "--disable-dev-shm-usage",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    `--disable-features=${DISABLED_FEATURES.join(",")}`,
    ANGLE_FEATURES_ARG,
    MODEL_MANIFEST_ARG,
    `--proxy-server=${o.proxyServer}`,
    "--proxy-bypass-list=<-loopback>",
    "--force-webrtc-ip-handling-policy=disable_non_proxied_udp",
    ...(o.ignoreCertificateErrors ? ["--ignore-certificate-errors"] : []),
    "about:blank",
  ];
}
