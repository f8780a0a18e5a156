import { createHash } from "node:crypto";

/** Every key starts with this, so a leaked key is recognisable (secret scanners, logs). */
export const API_KEY_PREFIX = "bas_";
/** How much of a key is stored in clear: the prefix plus 8 characters. */
export const DISPLAY_PREFIX_LENGTH = API_KEY_PREFIX.length + 8;

/** A new key from 32 random bytes (256 bits), e.g. `bas_2N3q...`; the randomness is injected. */
export function newApiKey(randomBytes: (n: number) => Uint8Array): string {
  return API_KEY_PREFIX + Buffer.from(randomBytes(32)).toString("base64url");
}

/** Whether a header value could be a key at all; anything else is rejected before any lookup. */
export function looksLikeApiKey(value: string): boolean {
  return value.startsWith(API_KEY_PREFIX) && value.length >= 20 && value.length <= 200 && /^[\x21-\x7e]+$/.test(value);
}

export function displayPrefix(key: string): string {
  return key.slice(0, DISPLAY_PREFIX_LENGTH);
}

/**
 * SHA-256 of the key. Keys are 256-bit random strings, so a fast hash is as safe as a slow one here (there is
 * nothing to brute-force) and keeps the uncached lookup cheap.
 */
export function hashApiKey(key: string): Buffer {
  return createHash("sha256").update(key, "utf8").digest();
}
