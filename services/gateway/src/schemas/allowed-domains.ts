import { DOMAIN_PATTERN, MAX_ALLOWED_DOMAINS } from "@bas/egress-policy/domains";
import { z } from "zod";

/**
 * A host pattern: `example.com` (it and its subdomains) or `*.example.com` (only the subdomains); an IP address
 * matches only itself. The syntax of a v4 secret binding's hosts and of a browser's `allowedDomains`.
 */
export const HostPattern = z
  .string()
  .regex(DOMAIN_PATTERN, { message: "a host name like example.com or *.example.com" })
  .transform((h) => h.toLowerCase());

/** `allowedDomains` of a browser, v3 session or v4 run: the only hosts its browser may reach. */
export const AllowedDomains = z
  .array(HostPattern)
  .min(1)
  .max(MAX_ALLOWED_DOMAINS)
  .nullable()
  .optional()
  .describe(
    "The only hosts the browser may reach (navigation, frames and every request): `example.com` covers it and its " +
      "subdomains, `*.example.com` only the subdomains, an IP address only itself. Other hosts are refused with " +
      "403 by the browser's proxy.",
  );
