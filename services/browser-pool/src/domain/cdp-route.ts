import { randomBytes, timingSafeEqual } from "node:crypto";

/** What a request path on the CDP port asks for: `/cdp/<browserId>/<secret>[/rest]`. */
export type CdpRoute =
  | { kind: "browser"; browserId: string; secret: string }
  | { kind: "target"; browserId: string; secret: string; targetPath: string }
  | { kind: "json-version"; browserId: string; secret: string }
  | { kind: "json-list"; browserId: string; secret: string };

export const CDP_PATH_PREFIX = "/cdp";

const PATTERN = /^\/cdp\/([0-9a-fA-F-]{36})\/([A-Za-z0-9_-]{16,128})(\/.*)?$/;
const TARGET = /^\/devtools\/(page|browser|worker|shared_worker|service_worker)\/[A-Za-z0-9_-]{1,128}$/;

/** Parses a request URL; undefined for anything that is not a CDP route (including a missing credential). */
export function parseCdpRoute(url: string | undefined): CdpRoute | undefined {
  const path = (url ?? "").split("?")[0].replace(/\/+$/, "");
  const match = PATTERN.exec(path);
  if (!match) return undefined;
  const [, browserId, secret, rest] = match;
  const base = { browserId: browserId.toLowerCase(), secret };
  if (!rest) return { kind: "browser", ...base };
  if (rest === "/json/version") return { kind: "json-version", ...base };
  if (rest === "/json/list" || rest === "/json") return { kind: "json-list", ...base };
  if (TARGET.test(rest)) return { kind: "target", ...base, targetPath: rest };
  return undefined;
}

/** 192 bits from the system's CSPRNG, URL-safe. */
export function newCdpSecret(): string {
  return randomBytes(24).toString("base64url");
}

export function secretMatches(expected: string, given: string): boolean {
  const a = Buffer.from(expected);
  const b = Buffer.from(given);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** The public CDP URL of a browser: a WebSocket endpoint puppeteer accepts as is. */
export function cdpUrlFor(base: string, browserId: string, secret: string): string {
  return `${base.replace(/\/+$/, "")}${CDP_PATH_PREFIX}/${browserId}/${secret}`;
}
