import { InvalidArgumentError } from "@bas/errors";
import { MAX_ALLOWED_DOMAINS, normaliseDomains, PROXY_HOST_PATTERN } from "@bas/egress-policy/domains";

/** How a browser is launched. Resolved: defaults applied, so two equal values launch equal browsers. */
export interface BrowserSettings {
  /** Lowercase two-letter country of the network proxy; null = no proxy. */
  proxyCountryCode: string | null;
  profileId: string | null;
  screenWidth: number;
  screenHeight: number;
  record: boolean;
  /** The caller's own upstream proxy (it overrides the country, and is not metered); never its credentials. */
  customProxy: CustomProxy | null;
  /** The only hosts the browser may reach (lowercase patterns, `*.` = subdomains only); null = no limit. */
  allowedDomains: string[] | null;
}

/** A custom proxy as recorded: where it is and whether it needs credentials, which are kept in memory only. */
export interface CustomProxy {
  host: string;
  port: number;
  ignoreCertErrors: boolean;
  authenticated: boolean;
}

export interface ProxyCredentials {
  username?: string;
  password?: string;
}

export interface CustomProxyInput extends ProxyCredentials {
  host: string;
  port: number;
  ignoreCertErrors?: boolean;
}

/** What a caller may leave out; `undefined` takes the default, `null` proxy means "no proxy". */
export interface BrowserSettingsInput {
  proxyCountryCode?: string | null;
  profileId?: string | null;
  screenWidth?: number | null;
  screenHeight?: number | null;
  record?: boolean;
  customProxy?: CustomProxyInput | null;
  /** Host patterns (`example.com`, `*.example.com`); null or empty = no limit. */
  allowedDomains?: readonly string[] | null;
}

export const DEFAULT_PROXY_COUNTRY = "us";
export const DEFAULT_SCREEN = { width: 1920, height: 1080 } as const;
export const SCREEN_BOUNDS = { width: { min: 320, max: 7680 }, height: { min: 240, max: 4320 } } as const;
export const TIMEOUT_MINUTES = { default: 60, min: 1, max: 240 } as const;
export const MAX_METADATA_ENTRIES = 10;

/** The size of a browser's windows. */
export interface WindowSize {
  width: number;
  height: number;
}

export const windowOf = (settings: BrowserSettings): WindowSize => ({
  width: settings.screenWidth,
  height: settings.screenHeight,
});

export const sameWindow = (a: WindowSize, b: WindowSize) => a.width === b.width && a.height === b.height;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

const invalid = (field: string, message: string) => new InvalidArgumentError(message, { field: ["body", field] });

/**
 * Applies defaults and checks ranges. The gateway validates the REST body first with the same bounds; this is the
 * service's own guard for gRPC callers (the runner), so the `field` names are the REST ones.
 */
export function resolveSettings(input: BrowserSettingsInput = {}): BrowserSettings {
  const customProxy = checkCustomProxy(input.customProxy ?? null);
  const country = input.proxyCountryCode === undefined ? DEFAULT_PROXY_COUNTRY : input.proxyCountryCode;
  if (country !== null && !/^[a-z]{2}$/.test(country)) {
    throw invalid("proxyCountryCode", "proxyCountryCode must be a lowercase two-letter country code");
  }
  // A custom proxy overrides the country: the browser uses none of ours.
  const proxy = customProxy ? null : country;
  const profileId = input.profileId ?? null;
  if (profileId !== null && !UUID.test(profileId)) throw invalid("profileId", "profileId must be a UUID");
  const width = input.screenWidth ?? null;
  const height = input.screenHeight ?? null;
  if ((width === null) !== (height === null)) {
    throw invalid(
      width === null ? "browserScreenWidth" : "browserScreenHeight",
      "browserScreenWidth and browserScreenHeight must be given together",
    );
  }
  checkRange("browserScreenWidth", width, SCREEN_BOUNDS.width);
  checkRange("browserScreenHeight", height, SCREEN_BOUNDS.height);
  return {
    proxyCountryCode: proxy,
    profileId,
    screenWidth: width ?? DEFAULT_SCREEN.width,
    screenHeight: height ?? DEFAULT_SCREEN.height,
    record: input.record ?? false,
    customProxy,
    allowedDomains: checkAllowedDomains(input.allowedDomains ?? null),
  };
}

function checkAllowedDomains(input: readonly string[] | null): string[] | null {
  if (input === null || input.length === 0) return null;
  if (input.length > MAX_ALLOWED_DOMAINS) {
    throw invalid("allowedDomains", `allowedDomains holds at most ${MAX_ALLOWED_DOMAINS} host patterns`);
  }
  const checked = normaliseDomains(input);
  if ("badIndex" in checked) {
    throw new InvalidArgumentError(
      `allowedDomains[${checked.badIndex}] must be a host name like example.com or *.example.com`,
      { field: ["body", "allowedDomains", checked.badIndex] },
    );
  }
  return checked.domains;
}

function checkCustomProxy(input: CustomProxyInput | null): CustomProxy | null {
  if (input === null) return null;
  const field = (name: string) => ["body", "customProxy", name];
  const bad = (name: string, message: string) => new InvalidArgumentError(message, { field: field(name) });
  if (input.host.length > 255 || !PROXY_HOST_PATTERN.test(input.host)) {
    throw bad("host", "customProxy.host must be a host name or an IP address, without scheme, port or path");
  }
  if (!Number.isInteger(input.port) || input.port < 1 || input.port > 65535) {
    throw bad("port", "customProxy.port must be an integer from 1 to 65535");
  }
  for (const name of ["username", "password"] as const) {
    const value = input[name];
    if (value !== undefined && (value.length < 1 || value.length > 255)) {
      throw bad(name, `customProxy.${name} must have 1 to 255 characters`);
    }
  }
  if (input.username?.includes(":")) throw bad("username", "customProxy.username must not contain ':'");
  return {
    host: input.host.toLowerCase(),
    port: input.port,
    ignoreCertErrors: input.ignoreCertErrors ?? false,
    authenticated: input.username !== undefined || input.password !== undefined,
  };
}

/** The custom proxy's credentials, which go to the launcher and nowhere else. */
export function proxyCredentialsOf(input: BrowserSettingsInput | undefined): ProxyCredentials | undefined {
  const proxy = input?.customProxy;
  if (!proxy || (proxy.username === undefined && proxy.password === undefined)) return undefined;
  return { username: proxy.username, password: proxy.password };
}

function checkRange(field: string, value: number | null, bounds: { min: number; max: number }) {
  if (value === null) return;
  if (!Number.isInteger(value) || value < bounds.min || value > bounds.max) {
    throw invalid(field, `${field} must be an integer from ${bounds.min} to ${bounds.max}`);
  }
}

/** Minutes until the browser stops by itself; 0/absent (proto default) means the default. */
export function resolveTimeoutMinutes(minutes: number | undefined | null): number {
  if (minutes === undefined || minutes === null || minutes === 0) return TIMEOUT_MINUTES.default;
  if (!Number.isInteger(minutes) || minutes < TIMEOUT_MINUTES.min || minutes > TIMEOUT_MINUTES.max) {
    throw invalid("timeout", "Maximum session timeout is 4 hours (240 minutes); the minimum is 1 minute.");
  }
  return minutes;
}

export function checkMetadata(metadata: Record<string, string>): Record<string, string> {
  const entries = Object.entries(metadata);
  if (entries.length > MAX_METADATA_ENTRIES) {
    throw invalid("metadata", `metadata holds at most ${MAX_METADATA_ENTRIES} entries`);
  }
  for (const [key, value] of entries) {
    if (typeof value !== "string") throw invalid("metadata", `metadata.${key} must be a string`);
  }
  return { ...metadata };
}

/**
 * A warm (pre-launched, idle) browser serves every request it can be fitted to when handed out: its egress proxy takes
 * the request's route (country, none, the caller's own proxy) and allowedDomains, its window the screen size, and
 * recording starts then anyway. A profile needs its own user data, and ignoring certificate errors is a launch flag:
 * those two launch cold.
 */
export function isWarmEligible(settings: BrowserSettings): boolean {
  return settings.profileId === null && !settings.customProxy?.ignoreCertErrors;
}

/** The settings warm browsers are launched with. */
export const WARM_SETTINGS: BrowserSettings = resolveSettings();
