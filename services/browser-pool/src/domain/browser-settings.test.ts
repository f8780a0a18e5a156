import { InvalidArgumentError } from "@bas/errors";
import {
  checkMetadata,
  isWarmEligible,
  proxyCredentialsOf,
  resolveSettings,
  resolveTimeoutMinutes,
  WARM_SETTINGS,
} from "./browser-settings";

test("defaults: proxy in us, 1920x1080, no profile; a null proxy means none", () => {
  expect(resolveSettings()).toEqual({
    proxyCountryCode: "us",
    profileId: null,
    screenWidth: 1920,
    screenHeight: 1080,
    record: false,
    customProxy: null,
    allowedDomains: null,
  });
  expect(resolveSettings({ proxyCountryCode: null }).proxyCountryCode).toBeNull();
});

test("allowedDomains are recorded lowercase without duplicates; empty means no limit", () => {
  const settings = resolveSettings({ allowedDomains: ["Example.COM", "*.Shop.test", "example.com", "127.0.0.1"] });
  expect(settings.allowedDomains).toEqual(["example.com", "*.shop.test", "127.0.0.1"]);
  expect(resolveSettings({ allowedDomains: [] }).allowedDomains).toBeNull();
  expect(resolveSettings({ allowedDomains: null }).allowedDomains).toBeNull();
});

test.each([
  [
    ["ok.test", "https://evil.test"],
    ["body", "allowedDomains", 1],
  ],
  [["example.com/path"], ["body", "allowedDomains", 0]],
  [["example.com:443"], ["body", "allowedDomains", 0]],
  [["*"], ["body", "allowedDomains", 0]],
  [["[::1]"], ["body", "allowedDomains", 0]],
  [Array.from({ length: 51 }, (_, i) => `d${i}.test`), ["body", "allowedDomains"]],
])("allowedDomains %j is INVALID_ARGUMENT at %j", (allowedDomains, field) => {
  expect(() => resolveSettings({ allowedDomains })).toThrow(InvalidArgumentError);
  expect(() => resolveSettings({ allowedDomains })).toThrow(expect.objectContaining({ field }));
});

test("a custom proxy overrides the country and is recorded without its credentials", () => {
  const input = {
    proxyCountryCode: "de",
    customProxy: { host: "Proxy.Example.com", port: 8080, username: "u", password: "p" },
  };
  const settings = resolveSettings(input);
  expect(settings.proxyCountryCode).toBeNull();
  expect(settings.customProxy).toEqual({
    host: "proxy.example.com",
    port: 8080,
    ignoreCertErrors: false,
    authenticated: true,
  });
  expect(JSON.stringify(settings)).not.toContain('"p"');
  expect(proxyCredentialsOf(input)).toEqual({ username: "u", password: "p" });
  expect(proxyCredentialsOf({ customProxy: { host: "10.0.0.1", port: 3128 } })).toBeUndefined();
  expect(resolveSettings({ customProxy: { host: "[::1]", port: 1 } }).customProxy?.authenticated).toBe(false);
  expect(isWarmEligible(resolveSettings({ customProxy: { host: "proxy.example.com", port: 80 } }))).toBe(true);
  const inspecting = { host: "proxy.example.com", port: 80, ignoreCertErrors: true };
  expect(isWarmEligible(resolveSettings({ customProxy: inspecting }))).toBe(false);
});

test.each([
  [{ host: "http://proxy.example.com", port: 80 }, "host"],
  [{ host: "user@proxy.example.com", port: 80 }, "host"],
  [{ host: "proxy.example.com:80", port: 80 }, "host"],
  [{ host: "", port: 80 }, "host"],
  [{ host: "proxy.example.com", port: 0 }, "port"],
  [{ host: "proxy.example.com", port: 65536 }, "port"],
  [{ host: "proxy.example.com", port: 80, username: "a:b" }, "username"],
  [{ host: "proxy.example.com", port: 80, password: "" }, "password"],
])("an invalid custom proxy %j names customProxy.%s", (customProxy, field) => {
  expect(() => resolveSettings({ customProxy })).toThrow(
    expect.objectContaining({ field: ["body", "customProxy", field] }),
  );
});

test("every request but one with a profile (or a TLS-inspecting proxy) may take a warm browser, fitted to it", () => {
  expect(isWarmEligible(WARM_SETTINGS)).toBe(true);
  expect(isWarmEligible(resolveSettings({ screenWidth: 1920, screenHeight: 1080, record: true }))).toBe(true);
  expect(isWarmEligible(resolveSettings({ screenWidth: 1280, screenHeight: 720 }))).toBe(true);
  expect(isWarmEligible(resolveSettings({ proxyCountryCode: "de" }))).toBe(true);
  expect(isWarmEligible(resolveSettings({ proxyCountryCode: null }))).toBe(true);
  expect(isWarmEligible(resolveSettings({ allowedDomains: ["example.com"] }))).toBe(true);
  expect(isWarmEligible(resolveSettings({ profileId: "5f0c6c1e-8a43-4d5e-9a3b-1c2d3e4f5a6b" }))).toBe(false);
});

test.each([
  [{ proxyCountryCode: "US" }, "proxyCountryCode"],
  [{ profileId: "x" }, "profileId"],
  [{ screenWidth: 1280 }, "browserScreenHeight"],
  [{ screenHeight: 720 }, "browserScreenWidth"],
  [{ screenWidth: 319, screenHeight: 720 }, "browserScreenWidth"],
  [{ screenWidth: 800, screenHeight: 4321 }, "browserScreenHeight"],
])("invalid settings %j name the REST field %s", (input, field) => {
  expect(() => resolveSettings(input)).toThrow(expect.objectContaining({ field: ["body", field] }));
});

test("timeout: 0/absent is the default 60, 1..240 accepted, outside refused", () => {
  expect(resolveTimeoutMinutes(undefined)).toBe(60);
  expect(resolveTimeoutMinutes(0)).toBe(60);
  expect(resolveTimeoutMinutes(1)).toBe(1);
  expect(resolveTimeoutMinutes(240)).toBe(240);
  for (const bad of [-1, 241, 1.5]) expect(() => resolveTimeoutMinutes(bad)).toThrow(InvalidArgumentError);
});

test("metadata: at most 10 string pairs", () => {
  const ten = Object.fromEntries(Array.from({ length: 10 }, (_, i) => [`k${i}`, "v"]));
  expect(checkMetadata(ten)).toEqual(ten);
  expect(() => checkMetadata({ ...ten, k10: "v" })).toThrow(InvalidArgumentError);
});
