import { timingSafeEqual } from "node:crypto";
import { displayPrefix, hashApiKey, looksLikeApiKey } from "../domain/api-key";
import type { AuthenticatedProject } from "../http/route";
import type { ProjectStore } from "./project-store";

export interface Authenticator {
  /** The key's project, or null for a missing, unknown or revoked key. */
  authenticate(key: string): Promise<AuthenticatedProject | null>;
  /** Drops a key from the cache (it was revoked). */
  forget(keyId: string): void;
  /** Drops everything (revocation notices may have been missed). */
  forgetAll(): void;
}

export interface AuthenticatorOptions {
  store: Pick<ProjectStore, "keysByPrefix">;
  /** How long a valid key is trusted without asking Postgres; bounds how late a missed revocation notice bites. */
  ttlMs?: number;
  /** How long an unknown key is remembered as unknown, so a flood of bad keys does not become a flood of queries. */
  negativeTtlMs?: number;
  maxEntries?: number;
  now?: () => number;
}

interface Entry {
  value: AuthenticatedProject | null;
  expiresAt: number;
}

/**
 * API key checks with a short cache: the read path must not cost a query per request. Keys are looked up by their
 * clear prefix and confirmed by comparing SHA-256 hashes in constant time. Revocations reach the cache through
 * `forget` (a Postgres notification), and the TTL bounds the damage of a missed one.
 */
export function createAuthenticator(options: AuthenticatorOptions): Authenticator {
  const ttlMs = options.ttlMs ?? 5_000;
  const negativeTtlMs = options.negativeTtlMs ?? 1_000;
  const maxEntries = options.maxEntries ?? 10_000;
  const now = options.now ?? Date.now;
  const cache = new Map<string, Entry>();
  const inFlight = new Map<string, Promise<AuthenticatedProject | null>>();
  let generation = 0;

  async function lookup(key: string, hash: Buffer): Promise<AuthenticatedProject | null> {
    for (const candidate of await options.store.keysByPrefix(displayPrefix(key))) {
      if (candidate.hash.length === hash.length && timingSafeEqual(candidate.hash, hash)) {
        return candidate.revokedAt ? null : { projectId: candidate.projectId, keyId: candidate.id };
      }
    }
    return null;
  }

  function remember(cacheKey: string, value: AuthenticatedProject | null) {
    if (cache.size >= maxEntries) cache.delete(cache.keys().next().value as string);
    cache.set(cacheKey, { value, expiresAt: now() + (value ? ttlMs : negativeTtlMs) });
  }

  return {
    async authenticate(key) {
      if (!looksLikeApiKey(key)) return null;
      const hash = hashApiKey(key);
      const cacheKey = hash.toString("base64");
      const hit = cache.get(cacheKey);
      if (hit && hit.expiresAt > now()) return hit.value;
      let pending = inFlight.get(cacheKey);
      if (!pending) {
        const startedIn = generation;
        pending = lookup(key, hash).finally(() => inFlight.delete(cacheKey));
        inFlight.set(cacheKey, pending);
        // A revocation that arrived while the query ran may not be reflected in its answer: do not cache that one.
        pending.then((value) => startedIn === generation && remember(cacheKey, value)).catch(() => undefined);
      }
      return pending;
    },
    forget(keyId) {
      generation++;
      for (const [cacheKey, entry] of cache) if (entry.value?.keyId === keyId) cache.delete(cacheKey);
    },
    forgetAll() {
      generation++;
      cache.clear();
    },
  };
}
