import { InvalidArgumentError } from "@bas/errors";

/** Where a newest-first page ended: the last row's creation time and id. Opaque to callers (base64url JSON). */
export interface Keyset {
  at: Date;
  id: string;
}

export function encodeCursor(key: Keyset): string {
  return Buffer.from(JSON.stringify([key.at.toISOString(), key.id])).toString("base64url");
}

export function decodeCursor(cursor: string): Keyset {
  try {
    const [at, id] = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
    const date = new Date(at);
    if (typeof id === "string" && typeof at === "string" && !Number.isNaN(date.getTime())) return { at: date, id };
  } catch {
    // answered below
  }
  throw new InvalidArgumentError("cursor is not one this API returned", { field: ["query", "cursor"] });
}
