import { explainNetError, proxyFailure } from "./net-errors";

test("a failed tunnel says what it usually means; other errors stay as they are", () => {
  expect(explainNetError("net::ERR_TUNNEL_CONNECTION_FAILED at https://x.test")).toMatch(
    /egress policy refuses loopback.*upstream proxy is unreachable/,
  );
  expect(explainNetError("net::ERR_NAME_NOT_RESOLVED")).toBe("net::ERR_NAME_NOT_RESOLVED");
});

test("the proxy's 59x answers are named as the proxy's, not the site's", () => {
  expect(proxyFailure(594, "Connection Refused")).toBe(
    "the browser's proxy could not get through (594 Connection Refused): the site or the upstream proxy is unreachable",
  );
  expect(proxyFailure(502, "Bad Gateway")).toBeUndefined();
  expect(proxyFailure(200, "OK")).toBeUndefined();
});
