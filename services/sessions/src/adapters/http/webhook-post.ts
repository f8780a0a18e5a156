import { lookup as dnsLookup, type LookupAddress } from "node:dns";
import { request as httpRequest } from "node:http";
import { request as httpsRequest } from "node:https";
import { isIP, type LookupFunction } from "node:net";
import type { EgressPolicy } from "@bas/egress-policy";

export type PostResult = { status: number } | { error: string };

const portOf = (url: URL) => Number(url.port || (url.protocol === "https:" ? 443 : 80));

/** Why the policy refuses `url` as given (an address in it), or undefined. Names are checked when resolved. */
export function literalRefusal(policy: EgressPolicy, url: URL): string | undefined {
  const host = url.hostname.replace(/^\[|\]$/g, "");
  return isIP(host) ? policy.refusal(host, portOf(url)) : undefined;
}

/**
 * POSTs a webhook body. The connection goes only to an address the egress policy allows: a literal address is
 * checked as is, a name where it is resolved, and the connection is made to the very address that was checked (no
 * second lookup that a rebinding DNS could answer differently). Redirects are not followed.
 */
export function createWebhookPoster(policy: EgressPolicy, timeoutMs: number) {
  return function post(rawUrl: string, body: string, headers: Record<string, string>): Promise<PostResult> {
    const url = new URL(rawUrl);
    const refused = literalRefusal(policy, url);
    if (refused) return Promise.resolve({ error: refused });
    const port = portOf(url);
    const lookup: LookupFunction = (hostname, options, callback) => {
      dnsLookup(hostname, { ...options, all: true }, (err, addresses: LookupAddress[]) => {
        if (err) return callback(err, "", 0);
        const allowed = addresses.filter((a) => !policy.refusal(a.address, port));
        if (allowed.length === 0) {
          const why = policy.refusal(addresses[0].address, port) ?? "no address";
          return callback(Object.assign(new Error(`${hostname}: ${why}`), { code: "EREFUSED" }), "", 0);
        }
        if ((options as { all?: boolean }).all)
          return (callback as (e: null, a: LookupAddress[]) => void)(null, allowed);
        return callback(null, allowed[0].address, allowed[0].family);
      });
    };
    const send = url.protocol === "https:" ? httpsRequest : httpRequest;
    return new Promise((resolve) => {
      const req = send(
        url,
        {
          method: "POST",
          lookup,
          timeout: timeoutMs,
          headers: { ...headers, "Content-Type": "application/json", "Content-Length": Buffer.byteLength(body) },
        },
        (res) => {
          res.resume(); // the answer's body is not needed, only its status
          res.on("end", () => resolve({ status: res.statusCode ?? 0 }));
          res.on("error", (err) => resolve({ error: err.message }));
        },
      );
      req.on("timeout", () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
      req.on("error", (err) => resolve({ error: err.message }));
      req.end(body);
    });
  };
}

export type WebhookPoster = ReturnType<typeof createWebhookPoster>;

/** Why an endpoint URL may not be registered: an address it names or resolves to is closed. */
export async function endpointRefusal(policy: EgressPolicy, url: URL): Promise<string | undefined> {
  const literal = literalRefusal(policy, url);
  if (literal || isIP(url.hostname.replace(/^\[|\]$/g, ""))) return literal;
  const addresses = await new Promise<LookupAddress[] | undefined>((resolve) =>
    dnsLookup(url.hostname, { all: true }, (err, found) => resolve(err ? undefined : found)),
  );
  if (!addresses?.length) return `${url.hostname} does not resolve`;
  for (const a of addresses) {
    const refused = policy.refusal(a.address, portOf(url));
    if (refused) return `${url.hostname} resolves to ${refused}`;
  }
  return undefined;
}
