import { InvalidArgumentError } from "@bas/errors";

/** Longest path (UTF-8 bytes) and path segment a workspace file may have. */
export const MAX_PATH_BYTES = 1024;
export const MAX_SEGMENT_BYTES = 255;

// Control characters (C0, DEL, C1) and the Unicode line and paragraph separators: nothing a file name needs, and
// what makes a name lie in a listing or a log.
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/;

function refuse(what: string, field: (string | number)[]): never {
  throw new InvalidArgumentError(what, { field });
}

/** The segments of a relative path: "." and empty ones dropped; anything that could leave the root refused. */
function segmentsOf(raw: string, field: (string | number)[]): string[] {
  const text = raw.normalize("NFC");
  if (CONTROL.test(text)) refuse("path must not contain control characters", field);
  if (text.includes("\\")) refuse('path must use "/" between folders, not "\\"', field);
  if (text.startsWith("/")) refuse("path must be relative to the workspace root, not absolute", field);
  const segments = text.split("/").filter((s) => s !== "" && s !== ".");
  if (segments.includes("..")) refuse('path must not contain ".."', field);
  for (const s of segments) {
    if (Buffer.byteLength(s) > MAX_SEGMENT_BYTES)
      refuse(`a path segment is longer than ${MAX_SEGMENT_BYTES} bytes`, field);
  }
  return segments;
}

/**
 * The normal form of a file's path in a workspace ("a//./b.csv" → "a/b.csv"). Refused: empty, absolute, `..`,
 * backslashes, control characters, a trailing "/" (a folder), too long.
 */
export function normalizeFilePath(raw: string, field: (string | number)[] = ["path"]): string {
  if (raw.endsWith("/")) refuse("path names a folder; give a file name after the last /", field);
  const path = segmentsOf(raw, field).join("/");
  if (!path) refuse("path is empty", field);
  if (Buffer.byteLength(path) > MAX_PATH_BYTES) refuse(`path is longer than ${MAX_PATH_BYTES} bytes`, field);
  return path;
}

/** The normal form of a folder prefix: "" (the root) or segments ending in "/" ("./uploads" → "uploads/"). */
export function normalizeFolder(raw: string, field: (string | number)[] = ["prefix"]): string {
  const segments = segmentsOf(raw, field);
  return segments.length ? `${segments.join("/")}/` : "";
}
