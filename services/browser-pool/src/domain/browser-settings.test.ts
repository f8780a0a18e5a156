import { InvalidArgumentError } from "@bas/errors";
import {
  checkMetadata,
  isWarmEligible,
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
  });
  expect(resolveSettings({ proxyCountryCode: null }).proxyCountryCode).toBeNull();
});

test("only requests for exactly the warm configuration may take a warm browser", () => {
  expect(isWarmEligible(WARM_SETTINGS)).toBe(true);
  expect(isWarmEligible(resolveSettings({ screenWidth: 1920, screenHeight: 1080, record: true }))).toBe(true);
  expect(isWarmEligible(resolveSettings({ screenWidth: 1280, screenHeight: 720 }))).toBe(false);
  expect(isWarmEligible(resolveSettings({ proxyCountryCode: "de" }))).toBe(false);
  expect(isWarmEligible(resolveSettings({ proxyCountryCode: null }))).toBe(false);
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
