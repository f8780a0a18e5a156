import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";

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

/** What a live view link lets its holder do: watch, or watch and take over (mouse, keyboard). */
export type LiveMode = "view" | "control";

/** A request on the live view's paths: `/live/<browserId>/<token>` (the page) and `.../ws` (its frames and input). */
export type LiveRoute = { kind: "live-page" | "live-socket"; browserId: string; token: string };

export const LIVE_PATH_PREFIX = "/live";

const LIVE_PATTERN = /^\/live\/([0-9a-fA-F-]{36})\/([A-Za-z0-9_-]{16,128})(\/ws)?$/;

export function parseLiveRoute(url: string | undefined): LiveRoute | undefined {
  const path = (url ?? "").split("?")[0].replace(/\/+$/, "");
  const match = LIVE_PATTERN.exec(path);
  if (!match) return undefined;
  return { kind: match[3] ? "live-socket" : "live-page", browserId: match[1].toLowerCase(), token: match[2] };
}

/**
 * The live view credential of a mode, derived from the browser's CDP secret: a live link never reveals the secret
 * (nor the other mode's token), so a view-only link can be shared without giving control or CDP access.
 */
export function liveToken(cdpSecret: string, mode: LiveMode): string {
  return createHmac("sha256", cdpSecret).update(`live-view:${mode}`).digest("base64url").slice(0, 32);
}

/** Which mode a token opens for a browser of this secret; undefined for a wrong one. */
export function liveModeOf(cdpSecret: string, token: string): LiveMode | undefined {
  for (const mode of ["control", "view"] as const) {
    if (secretMatches(liveToken(cdpSecret, mode), token)) return mode;
  }
  return undefined;
}

/**
 * A browser's live view link in `mode`, beside its CDP URL (same host and port, http(s) for ws(s)); undefined for a
 * CDP URL of another form.
 */
export function liveUrlFor(cdpUrl: string, mode: LiveMode = "control"): string | undefined {
  const url = new URL(cdpUrl);
  const match = /^(.*)\/cdp\/([0-9a-fA-F-]{36})\/([A-Za-z0-9_-]{16,128})$/.exec(url.pathname);
  if (!match) return undefined;
  const [, base, browserId, secret] = match;
  const scheme = url.protocol === "wss:" ? "https:" : "http:";
  return `${scheme}//${url.host}${base}${LIVE_PATH_PREFIX}/${browserId}/${liveToken(secret, mode)}`;
}
