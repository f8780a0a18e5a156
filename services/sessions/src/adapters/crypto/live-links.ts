import { createHmac, hkdfSync, timingSafeEqual } from "node:crypto";
import type { LiveLinks } from "../../app/ports";

/**
 * Session live view links, `<publicUrl>/live/sessions/<sessionId>/<token>`: the token is an HMAC of the session id under a key
 * derived from SECRETS_KEY (never the encryption key itself), so a link cannot be guessed from the id, and a link
 * carries no other secret.
 */
export function createLiveLinks(secretsKey: Buffer, publicUrl: string): LiveLinks {
  const key = Buffer.from(hkdfSync("sha256", secretsKey, Buffer.alloc(0), "bas session live view links", 32));
  const tokenOf = (sessionId: string) =>
    createHmac("sha256", key).update(sessionId.toLowerCase()).digest("base64url").slice(0, 32);
  const base = publicUrl.replace(/\/+$/, "");
  return {
    urlFor: (sessionId) => `${base}/live/sessions/${sessionId}/${tokenOf(sessionId)}`,
    verify(sessionId, token) {
      const expected = Buffer.from(tokenOf(sessionId));
      const given = Buffer.from(token);
      return expected.length === given.length && timingSafeEqual(expected, given);
    },
  };
}
