import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";

export interface KeyCipher {
  encrypt(plain: string): string;
  decrypt(sealed: string): string;
}

const VERSION = "v1";

/** AES-256-GCM with a fresh IV per value; sealed as `v1.<iv>.<tag>.<ciphertext>` (base64url parts). */
export function createKeyCipher(key: Buffer): KeyCipher {
  if (key.length !== 32) throw new Error("the key cipher needs a 32-byte key");
  return {
    encrypt(plain) {
      const iv = randomBytes(12);
      const cipher = createCipheriv("aes-256-gcm", key, iv);
      const data = Buffer.concat([cipher.update(plain, "utf8"), cipher.final()]);
      return [VERSION, iv, cipher.getAuthTag(), data]
        .map((p) => (typeof p === "string" ? p : p.toString("base64url")))
        .join(".");
    },
    decrypt(sealed) {
      const [version, iv, tag, data] = sealed.split(".");
      if (version !== VERSION || !iv || !tag || data === undefined) throw new Error("not a sealed key");
      const decipher = createDecipheriv("aes-256-gcm", key, Buffer.from(iv, "base64url"));
      decipher.setAuthTag(Buffer.from(tag, "base64url"));
      return Buffer.concat([decipher.update(Buffer.from(data, "base64url")), decipher.final()]).toString("utf8");
    },
  };
}
