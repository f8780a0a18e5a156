import { PROXY_HOST_PATTERN } from "@bas/egress-policy/domains";
import { z } from "zod";

const credential = (description: string) => z.string().min(1).max(255).nullable().optional().describe(description);

/**
 * The caller's own HTTP proxy for a browser (v3/v4 browsers, v4 runs). It overrides `proxyCountryCode`, costs no
 * proxy fee, and its credentials are kept in memory (a run's: encrypted until the run ends), never stored with the
 * browser.
 */
export const CustomProxy = z
  .object({
    host: z.string().min(1).max(255).regex(PROXY_HOST_PATTERN).describe("Host of the proxy."),
    port: z.int().min(1).max(65535).describe("Port of the proxy."),
    username: credential("Username for proxy authentication.").refine((u) => !u?.includes(":"), {
      message: "The username must not contain ':'",
    }),
    password: credential("Password for proxy authentication."),
    ignoreCertErrors: z
      .boolean()
      .default(false)
      .describe("The browser accepts any TLS certificate (a proxy that inspects TLS, such as Burp Suite)."),
  })
  .meta({ id: "CustomProxy" });

/** The proto form (absent rather than null). */
export function customProxyOf(proxy: z.infer<typeof CustomProxy> | null | undefined) {
  if (!proxy) return undefined;
  return {
    host: proxy.host,
    port: proxy.port,
    username: proxy.username ?? undefined,
    password: proxy.password ?? undefined,
    ignoreCertErrors: proxy.ignoreCertErrors,
  };
}
