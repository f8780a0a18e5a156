/** The longest file name and source URL kept for a download (a `data:` URL can be megabytes). */
export const MAX_FILE_NAME = 255;
export const MAX_SOURCE_URL = 2_048;

/**
 * The name a download is listed under: the page chose it, so it is reduced to a plain file name (no folders, no
 * control characters, no leading dots) of at most MAX_FILE_NAME characters; `download` when nothing is left.
 */
export function safeFileName(offered: string): string {
  const name = (offered.split(/[/\\]/).at(-1) ?? "")
    // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is removed
    .replace(/[\u0000-\u001f\u007f]/g, "")
    .replace(/^[.\s]+/, "")
    .trim();
  return [...(name || "download")].slice(0, MAX_FILE_NAME).join("");
}

/** The source URL as kept: `data:` and `blob:` URLs only by their scheme, any other cut to MAX_SOURCE_URL. */
export function keptSourceUrl(url: string): string {
  if (/^(data|blob):/i.test(url)) return `${url.slice(0, url.indexOf(":") + 1)}…`;
  return url.slice(0, MAX_SOURCE_URL);
}
