/**
 * Host patterns that limit where something may go: a browser's `allowedDomains` (enforced by its egress proxy) and
 * the hosts a v4 secret binding may be typed on (checked by the runner). `example.com` covers example.com and its
 * subdomains, `*.example.com` only the subdomains. An IP literal matches only itself. Pure: no I/O, so domain code
 * loads it through `@bas/egress-policy/domains`.
 */

/** The syntax of one pattern (the gateway's schemas use the same source, so a 422 names this pattern). */
export const DOMAIN_PATTERN =
  /^(?=.{1,253}$)(\*\.)?([a-zA-Z0-9]([a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?)(\.[a-zA-Z0-9]([a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?)*$/;

/**
 * The syntax of a custom proxy's host: a host name or an IP literal (IPv6 in brackets), without scheme, port, path or
 * credentials. The gateway, sessions and browser-pool check it alike (the gateway's 422 names this pattern).
 */
export const PROXY_HOST_PATTERN = /^(?:[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.?|\[[0-9A-Fa-f:.]+\])$/;

/** How many patterns a browser's `allowedDomains` may hold. */
export const MAX_ALLOWED_DOMAINS = 50;

/** Lowercase, without a trailing dot: the form patterns and hosts are compared in. */
const normalised = (host: string) => host.trim().toLowerCase().replace(/\.$/, "");

/**
 * Whether `host` is one of `domains` or under one: `example.com` covers example.com and its subdomains,
 * `*.example.com` only the subdomains. `domains` are expected lowercase (as {@link normaliseDomains} returns them).
 *
 * @example hostAllowed("login.example.com", ["example.com"]) // true
 * @example hostAllowed("example.com", ["*.example.com"]) // false
 */
export function hostAllowed(host: string, domains: readonly string[]): boolean {
  const h = normalised(host.replace(/^\[|\]$/g, ""));
  return domains.some((d) => {
    const wildcard = d.startsWith("*.");
    const base = wildcard ? d.slice(2) : d;
    return h.endsWith(`.${base}`) || (!wildcard && h === base);
  });
}

/**
 * Checks and normalises a list of patterns (lowercase, duplicates dropped). Returns the index of the first bad one
 * instead when a pattern does not match {@link DOMAIN_PATTERN}, so the caller can name the field.
 */
export function normaliseDomains(patterns: readonly string[]): { domains: string[] } | { badIndex: number } {
  const domains: string[] = [];
  for (const [i, pattern] of patterns.entries()) {
    const p = pattern.trim();
    if (!DOMAIN_PATTERN.test(p)) return { badIndex: i };
    const lower = p.toLowerCase();
    if (!domains.includes(lower)) domains.push(lower);
  }
  return { domains };
}

const IPV4 = /^\d{1,3}(\.\d{1,3}){3}$/;

const describePattern = (d: string) => {
  if (d.startsWith("*.")) return `a subdomain of ${d.slice(2)}`;
  return IPV4.test(d) ? d : `${d} or one of its subdomains`;
};

/**
 * Undefined when `host` is allowed (or there is no limit: `domains` null or empty); otherwise the reason, for the
 * person or agent whose request was refused, e.g. "Blocked by the browser's allowedDomains: evil.test is not
 * example.com or one of its subdomains" (the egress proxy's 403 and the runner's step error say the same).
 */
export function domainRefusal(host: string, domains: readonly string[] | null): string | undefined {
  if (!domains || domains.length === 0 || hostAllowed(host, domains)) return undefined;
  const shown = domains.slice(0, 10).map(describePattern);
  const more = domains.length > shown.length ? ` (or ${domains.length - shown.length} more allowed patterns)` : "";
  return `Blocked by the browser's allowedDomains: ${normalised(host.replace(/^\[|\]$/g, ""))} is not ${shown.join(", nor ")}${more}`;
}
