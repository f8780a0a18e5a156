import {
  cdpUrlFor,
  liveModeOf,
  liveToken,
  liveUrlFor,
  newCdpSecret,
  parseCdpRoute,
  parseLiveRoute,
  secretMatches,
} from "./cdp-route";

const id = "5f0c6c1e-8a43-4d5e-9a3b-1c2d3e4f5a6b";
const secret = "abcdefghijklmnopqrstuvwxyz012345";

test("routes: the browser, a target, /json/version and /json/list, with or without a trailing slash or query", () => {
  expect(parseCdpRoute(`/cdp/${id}/${secret}`)).toEqual({ kind: "browser", browserId: id, secret });
  expect(parseCdpRoute(`/cdp/${id.toUpperCase()}/${secret}/`)).toEqual({ kind: "browser", browserId: id, secret });
  expect(parseCdpRoute(`/cdp/${id}/${secret}/json/version/`)).toMatchObject({ kind: "json-version" });
  expect(parseCdpRoute(`/cdp/${id}/${secret}/json/version?x=1`)).toMatchObject({ kind: "json-version" });
  expect(parseCdpRoute(`/cdp/${id}/${secret}/json`)).toMatchObject({ kind: "json-list" });
  expect(parseCdpRoute(`/cdp/${id}/${secret}/devtools/page/ABC123`)).toMatchObject({
    kind: "target",
    targetPath: "/devtools/page/ABC123",
  });
});

test("anything else is no route: no secret, a short one, path tricks, unknown endpoints", () => {
  for (const path of [
    `/cdp/${id}`,
    `/cdp/${id}/short`,
    `/cdp/not-an-id/${secret}`,
    `/cdp/${id}/${secret}/../../json/version`,
    `/cdp/${id}/${secret}/devtools/page/../browser/x`,
    `/cdp/${id}/${secret}/json/new`,
    "/json/version",
    undefined,
  ]) {
    expect(parseCdpRoute(path)).toBeUndefined();
  }
});

test("secrets: 32 URL-safe characters, fresh each time, compared exactly", () => {
  const a = newCdpSecret();
  expect(a).toMatch(/^[A-Za-z0-9_-]{32}$/);
  expect(newCdpSecret()).not.toBe(a);
  expect(secretMatches(a, a)).toBe(true);
  expect(secretMatches(a, `${a.slice(0, -1)}${a.endsWith("x") ? "y" : "x"}`)).toBe(false);
  expect(secretMatches(a, a.slice(1))).toBe(false);
  expect(cdpUrlFor("wss://cdp.example.com/", id, a)).toBe(`wss://cdp.example.com/cdp/${id}/${a}`);
});

test("live view links: one per mode, derived from the CDP secret without revealing it, beside the CDP URL", () => {
  const control = liveUrlFor(cdpUrlFor("wss://browsers.example.com/pool", id, secret))!;
  const view = liveUrlFor(cdpUrlFor("ws://127.0.0.1:9223", id, secret), "view")!;
  expect(control).toBe(`https://browsers.example.com/pool/live/${id}/${liveToken(secret, "control")}`);
  expect(view).toBe(`http://127.0.0.1:9223/live/${id}/${liveToken(secret, "view")}`);
  expect(liveToken(secret, "view")).not.toBe(liveToken(secret, "control"));
  expect(control).not.toContain(secret);
  expect(liveModeOf(secret, liveToken(secret, "control"))).toBe("control");
  expect(liveModeOf(secret, liveToken(secret, "view"))).toBe("view");
  expect(liveModeOf(newCdpSecret(), liveToken(secret, "view"))).toBeUndefined();
  expect(parseLiveRoute(new URL(view).pathname)).toEqual({
    kind: "live-page",
    browserId: id,
    token: liveToken(secret, "view"),
  });
  expect(parseLiveRoute(`${new URL(view).pathname}/ws`)).toMatchObject({ kind: "live-socket" });
  expect(parseLiveRoute(`/live/${id}`)).toBeUndefined();
  expect(parseLiveRoute(`/live/${id}/short`)).toBeUndefined();
});
