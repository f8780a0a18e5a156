import { hostAllowed } from "@bas/egress-policy/domains";

/** `<secret>key</secret>`: how the model refers to a sensitive value it never sees. */
const PLACEHOLDER = /<secret>\s*([^<]*?)\s*<\/secret>/g;

export const placeholder = (key: string) => `<secret>${key}</secret>`;

/** The keys a text refers to through placeholders. */
export function secretKeysIn(text: string): string[] {
  return [...text.matchAll(PLACEHOLDER)].map((m) => m[1]);
}

export class UnknownSecretError extends Error {
  override name = "UnknownSecretError";
  constructor(readonly keys: string[]) {
    super(`unknown secret key${keys.length > 1 ? "s" : ""}: ${keys.join(", ")}`);
  }
}

/** Replaces placeholders with their values, only at the moment of typing. */
export function expandSecrets(text: string, values: Readonly<Record<string, string>>): string {
  const missing = secretKeysIn(text).filter((k) => !Object.hasOwn(values, k));
  if (missing.length) throw new UnknownSecretError(missing);
  return text.replace(PLACEHOLDER, (_m, key: string) => values[key]);
}

/** Secret key → the hosts it may be typed on; a key not named here may be typed anywhere. */
export type SecretDomains = Readonly<Record<string, readonly string[]>>;

/** The secrets `text` refers to that may not be typed on a page at `host`. */
export function secretsRefusedOn(text: string, host: string, secretDomains: SecretDomains): string[] {
  return secretKeysIn(text).filter((k) => secretDomains[k] && !hostAllowed(host, secretDomains[k]));
}

export type Redactor = (text: string) => string;

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/**
 * Replaces every occurrence of a secret value with its placeholder. Runs over everything that leaves the runner
 * (prompts, messages, summaries, outputs, logs): the values must never appear there, even when a page echoes them.
 */
export function createRedactor(values: Readonly<Record<string, string>>): Redactor {
  const entries = Object.entries(values).filter(([, v]) => v.length > 0);
  if (entries.length === 0) return (text) => text;
  // Longest first, so a value that contains another is replaced whole.
  entries.sort((a, b) => b[1].length - a[1].length);
  const keyOf = new Map(entries.map(([k, v]) => [v, k]));
  const pattern = new RegExp(entries.map(([, v]) => escapeRegExp(v)).join("|"), "g");
  return (text) => (text ? text.replace(pattern, (m) => placeholder(keyOf.get(m) ?? "")) : text);
}

/** Redacts every string inside a JSON-like value. */
export function redactDeep<T>(value: T, redact: Redactor): T {
  if (typeof value === "string") return redact(value) as T;
  if (Array.isArray(value)) return value.map((v) => redactDeep(v, redact)) as T;
  if (value && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, redactDeep(v, redact)])) as T;
  }
  return value;
}
