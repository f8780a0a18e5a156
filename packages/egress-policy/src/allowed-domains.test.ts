import { DOMAIN_PATTERN, domainRefusal, hostAllowed, normaliseDomains } from "./allowed-domains";

test("a domain covers itself and its subdomains, *.domain only the subdomains; look-alikes are not under it", () => {
  expect(hostAllowed("example.com", ["example.com"])).toBe(true);
  expect(hostAllowed("login.example.com", ["example.com"])).toBe(true);
  expect(hostAllowed("example.com", ["*.example.com"])).toBe(false);
  expect(hostAllowed("a.b.example.com", ["*.example.com"])).toBe(true);
  expect(hostAllowed("evilexample.com", ["example.com"])).toBe(false);
  expect(hostAllowed("example.com.evil.net", ["example.com"])).toBe(false);
  expect(hostAllowed("EXAMPLE.com.", ["example.com"])).toBe(true);
  expect(hostAllowed("other.test", ["example.com", "other.test"])).toBe(true);
});

test("an IP literal matches only itself; an IPv6 host never matches a pattern", () => {
  expect(hostAllowed("127.0.0.1", ["127.0.0.1"])).toBe(true);
  expect(hostAllowed("127.0.0.2", ["127.0.0.1"])).toBe(false);
  expect(hostAllowed("[::1]", ["127.0.0.1"])).toBe(false);
  expect(DOMAIN_PATTERN.test("::1")).toBe(false);
});

test("patterns are checked and normalised: lowercase, trimmed, duplicates dropped; the first bad one is named", () => {
  expect(normaliseDomains(["Example.COM", " *.Shop.test ", "example.com"])).toEqual({
    domains: ["example.com", "*.shop.test"],
  });
  for (const bad of ["https://example.com", "example.com/path", "example.com:443", "*", "*.", "a..b", "", "ex ample"]) {
    expect(normaliseDomains(["ok.test", bad])).toEqual({ badIndex: 1 });
  }
  expect(normaliseDomains(["a.*.example.com"])).toEqual({ badIndex: 0 });
});

test("a refusal names the host and what is allowed; an allowed host or no limit is no refusal", () => {
  expect(domainRefusal("evil.test", ["example.com"])).toBe(
    "Blocked by the browser's allowedDomains: evil.test is not example.com or one of its subdomains",
  );
  expect(domainRefusal("EVIL.test.", ["example.com", "*.shop.test"])).toBe(
    "Blocked by the browser's allowedDomains: evil.test is not example.com or one of its subdomains, nor a subdomain of shop.test",
  );
  expect(domainRefusal("localhost", ["127.0.0.1"])).toBe(
    "Blocked by the browser's allowedDomains: localhost is not 127.0.0.1",
  );
  expect(domainRefusal("www.example.com", ["example.com"])).toBeUndefined();
  expect(domainRefusal("evil.test", null)).toBeUndefined();
  expect(domainRefusal("evil.test", [])).toBeUndefined();
  const many = Array.from({ length: 12 }, (_, i) => `d${i}.test`);
  expect(domainRefusal("evil.test", many)).toMatch(
    /nor d9\.test or one of its subdomains \(or 2 more allowed patterns\)$/,
  );
});
