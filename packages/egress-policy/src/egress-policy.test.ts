import { createEgressPolicy, parseEgressRules } from "./egress-policy";

const closed = createEgressPolicy({ allow: [], deny: [] });

test.each([
  ["127.0.0.1", "loopback"],
  ["127.255.0.9", "loopback"],
  ["::1", "loopback"],
  ["::ffff:127.0.0.1", "loopback"],
  ["::ffff:7f00:1", "loopback"],
  ["10.1.2.3", "private"],
  ["172.16.0.1", "private"],
  ["192.168.1.1", "private"],
  ["169.254.169.254", "link-local"],
  ["fe80::1", "link-local"],
  ["fd00:ec2::254", "private"],
  ["0.0.0.0", "'this network'"],
  ["100.64.0.1", "carrier-grade NAT"],
  ["224.0.0.1", "multicast"],
  ["64:ff9b::7f00:1", "NAT64"],
])("%s is closed (%s) unless allowed", (ip, what) => {
  expect(closed.refusal(ip, 80)).toContain(what);
  expect(closed.refusal(ip, 80)).toContain("BROWSER_EGRESS_ALLOW");
});

test.each(["93.184.216.34", "1.1.1.1", "2606:4700:4700::1111"])("the public address %s is open", (ip) => {
  expect(closed.refusal(ip, 443)).toBeUndefined();
});

test("BROWSER_EGRESS_ALLOW opens exactly the address and port, or the range, it names", () => {
  const policy = createEgressPolicy({ allow: parseEgressRules("127.0.0.1:8080, 10.20.0.0/16, [::1]:9000"), deny: [] });
  expect(policy.refusal("127.0.0.1", 8080)).toBeUndefined();
  expect(policy.refusal("127.0.0.1", 8081)).toMatch(/loopback/);
  expect(policy.refusal("10.20.255.1", 5432)).toBeUndefined();
  expect(policy.refusal("10.21.0.1", 5432)).toMatch(/private/);
  expect(policy.refusal("::1", 9000)).toBeUndefined();
  expect(policy.refusal("::1", 9001)).toMatch(/loopback/);
});

test("the stack's own addresses stay closed even inside an allowed range", () => {
  const policy = createEgressPolicy({
    allow: parseEgressRules("127.0.0.0/8"),
    deny: parseEgressRules("127.0.0.1:4222"),
  });
  expect(policy.refusal("127.0.0.1", 4222)).toMatch(/own ports/);
  expect(policy.refusal("127.0.0.1", 4223)).toBeUndefined();
});

test("entries are parsed strictly: a bad entry is named", () => {
  expect(parseEgressRules("localhost:3000").map((r) => r.network)).toEqual(["127.0.0.1", "::1"]);
  expect(parseEgressRules("fd00::/8")).toEqual([{ network: "fd00::", prefix: 8, family: "ipv6", port: null }]);
  expect(parseEgressRules(" ")).toEqual([]);
  for (const bad of ["example.com", "10.0.0.0/33", "127.0.0.1:0", "127.0.0.1:70000", "[::1]:x"]) {
    expect(() => parseEgressRules(bad)).toThrow(`'${bad}'`);
  }
});
