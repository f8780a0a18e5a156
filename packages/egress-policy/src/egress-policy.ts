import { BlockList, isIP } from "node:net";

/**
 * Where something a tenant points us at may connect: its browser, its webhook endpoints. Public addresses are open;
 * the host's loopback, private networks, link-local (cloud metadata lives there), multicast and every other
 * special-purpose range are closed, except the destinations an operator opens (BROWSER_EGRESS_ALLOW,
 * WEBHOOK_EGRESS_ALLOW). The stack's own addresses stay closed even when a range that holds them is opened.
 */
export interface EgressPolicy {
  /** Undefined when `ip:port` may be reached; otherwise why not, in words for the person who asked. */
  refusal(ip: string, port: number): string | undefined;
}

/** One allow or deny entry: an address or CIDR range, with a port or any port. */
export interface EgressRule {
  network: string;
  prefix: number;
  family: "ipv4" | "ipv6";
  port: number | null;
}

/** The ranges no tenant may reach unless opened (IANA special-purpose registries, IPv4 and IPv6). */
const CLOSED_RANGES: ReadonlyArray<[string, number, string]> = [
  ["0.0.0.0", 8, "a 'this network' address"],
  ["10.0.0.0", 8, "a private address"],
  ["100.64.0.0", 10, "a carrier-grade NAT address"],
  ["127.0.0.0", 8, "a loopback address"],
  ["169.254.0.0", 16, "a link-local address (cloud metadata lives there)"],
  ["172.16.0.0", 12, "a private address"],
  ["192.0.0.0", 24, "a special-purpose address"],
  ["192.0.2.0", 24, "a documentation address"],
  ["192.88.99.0", 24, "a 6to4 relay address"],
  ["192.168.0.0", 16, "a private address"],
  ["198.18.0.0", 15, "a benchmarking address"],
  ["198.51.100.0", 24, "a documentation address"],
  ["203.0.113.0", 24, "a documentation address"],
  ["224.0.0.0", 4, "a multicast address"],
  ["240.0.0.0", 4, "a reserved address"],
  ["::", 128, "the unspecified address"],
  ["::1", 128, "a loopback address"],
  ["64:ff9b::", 96, "a NAT64 address"],
  ["64:ff9b:1::", 48, "a NAT64 address"],
  ["100::", 64, "a discard address"],
  ["2001::", 32, "a Teredo address"],
  ["2001:db8::", 32, "a documentation address"],
  ["2002::", 16, "a 6to4 address"],
  ["fc00::", 7, "a private (unique local) address"],
  ["fe80::", 10, "a link-local address"],
  ["fec0::", 10, "a site-local address"],
  ["ff00::", 8, "a multicast address"],
];

/**
 * Parses `host[:port]` / `CIDR[:port]` entries separated by commas (IPv6 in brackets when a port follows:
 * `[::1]:8080`). `localhost` stands for both loopback addresses. Throws with the bad entry named.
 */
export function parseEgressRules(list: string): EgressRule[] {
  return list
    .split(",")
    .map((entry) => entry.trim())
    .filter(Boolean)
    .flatMap(parseEntry);
}

function parseEntry(raw: string): EgressRule[] {
  const bad = () => new Error(`'${raw}' is not an IP address or CIDR range with an optional port (e.g. 10.1.2.3:8080)`);
  let host = raw;
  let port: string | undefined;
  const bracketed = /^\[(.+)\](?::(\d+))?$/.exec(raw);
  if (bracketed) [, host, port] = bracketed;
  else if (isIP(raw.split("/")[0]) !== 6 && raw.includes(":")) {
    const colon = raw.lastIndexOf(":");
    [host, port] = [raw.slice(0, colon), raw.slice(colon + 1)];
  }
  const portNumber = port === undefined ? null : Number(port);
  if (portNumber !== null && !(Number.isInteger(portNumber) && portNumber >= 1 && portNumber <= 65535)) throw bad();
  const [address, prefix] = host.split("/");
  const addresses = address === "localhost" ? ["127.0.0.1", "::1"] : [address];
  return addresses.map((ip) => {
    const family = isIP(ip) === 6 ? "ipv6" : isIP(ip) === 4 ? "ipv4" : undefined;
    if (!family) throw bad();
    const max = family === "ipv6" ? 128 : 32;
    const bits = prefix === undefined ? max : Number(prefix);
    if (!/^\d{1,3}$/.test(prefix ?? String(max)) || bits > max) throw bad();
    return { network: ip, prefix: bits, family, port: portNumber };
  });
}

/**
 * `deny` is read at every check, so a caller may add to it later (a port bound after the policy was made).
 * `allowVariable` names the setting that opens a closed address, for the refusal's hint.
 */
export function createEgressPolicy(options: {
  allow: readonly EgressRule[];
  deny: readonly EgressRule[];
  allowVariable?: string;
}) {
  const hint = `open it with ${options.allowVariable ?? "BROWSER_EGRESS_ALLOW"} if it is meant to be reachable`;
  const closed = CLOSED_RANGES.map(([network, prefix, what]) => {
    const list = new BlockList();
    list.addSubnet(network, prefix, isIP(network) === 6 ? "ipv6" : "ipv4");
    return { list, what };
  });
  const matches = (rules: readonly EgressRule[], ip: string, family: "ipv4" | "ipv6", port: number) =>
    rules.some((r) => r.family === family && (r.port === null || r.port === port) && inRange(r, ip, family));

  const policy: EgressPolicy = {
    refusal(address, port) {
      const { ip, family } = normalize(address);
      if (matches(options.deny, ip, family, port)) return `${describe(ip, port)} is one of this service's own ports`;
      if (matches(options.allow, ip, family, port)) return undefined;
      const range = closed.find(({ list }) => list.check(ip, family));
      return range ? `${describe(ip, port)} is ${range.what}; ${hint}` : undefined;
    },
  };
  return policy;
}

function inRange(rule: EgressRule, ip: string, family: "ipv4" | "ipv6"): boolean {
  const list = new BlockList();
  list.addSubnet(rule.network, rule.prefix, rule.family);
  return list.check(ip, family);
}

/** IPv4-mapped IPv6 (`::ffff:127.0.0.1`) is judged as the IPv4 address it carries. */
function normalize(address: string): { ip: string; family: "ipv4" | "ipv6" } {
  const bare = address.replace(/^\[|\]$/g, "");
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(bare);
  if (mapped) return { ip: mapped[1], family: "ipv4" };
  const mappedHex = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/i.exec(bare);
  if (mappedHex) {
    const [hi, lo] = [Number.parseInt(mappedHex[1], 16), Number.parseInt(mappedHex[2], 16)];
    return { ip: `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`, family: "ipv4" };
  }
  return { ip: bare, family: isIP(bare) === 6 ? "ipv6" : "ipv4" };
}

function describe(ip: string, port: number): string {
  return isIP(ip) === 6 ? `[${ip}]:${port}` : `${ip}:${port}`;
}
