/**
 * What a failed page load means, in words for the model and the caller. The browser's traffic goes through
 * browser-pool's egress proxy, and from there, for a browser with a country, through an upstream proxy: their
 * failures look like a site's unless they are named.
 */

/** An HTTPS destination the egress proxy refused, or one it could not reach, shows only as a failed tunnel. */
export function explainNetError(message: string): string {
  if (!message.includes("ERR_TUNNEL_CONNECTION_FAILED")) return message;
  return (
    `${message} (the browser's egress policy refuses loopback, private and link-local destinations; ` +
    "otherwise the site or the browser's upstream proxy is unreachable)"
  );
}

/**
 * The browser's proxy answered for the site with one of the 59x statuses it uses for "could not get there" (590 the
 * upstream proxy refused, 593 no such host, 594 connection refused, 595 reset, 597 upstream authentication failed,
 * 599 another upstream error); undefined for any other status.
 */
export function proxyFailure(status: number, statusText: string): string | undefined {
  if (status < 590 || status > 599) return undefined;
  return `the browser's proxy could not get through (${status} ${statusText}): the site or the upstream proxy is unreachable`;
}
