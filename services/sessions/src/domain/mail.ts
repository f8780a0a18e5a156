import type { MailData } from "./events";

/**
 * What one session's mailbox keeps. Every mail is an event of the session, loaded with it by every command: the text
 * is cut and the links bounded so that a mailbox never makes its session heavy, and the count is capped so that
 * nobody can fill a session's stream by mailing it.
 */
export const MAILBOX_LIMITS = {
  /** Characters of text kept per mail (~32 KB); the rest is dropped and `textTruncated` says so. */
  textChars: 32 * 1024,
  /** Links kept per mail, and the longest link kept. */
  links: 50,
  linkChars: 2_048,
  /** Characters of the From and subject kept. */
  headerChars: 500,
  /** Mails one session accepts; later ones are refused (mailbox full). */
  mailsPerSession: 200,
} as const;

/** A mail as parsed from the wire, before it is bounded. */
export interface ParsedMail {
  from: string;
  to: string;
  subject: string;
  date: Date | null;
  /** The text part, or the text of the HTML part when there is none (the parser's `text`). */
  text: string;
  html: string | null;
  sizeBytes: number;
}

const cut = (value: string, max: number) => (value.length > max ? value.slice(0, max) : value);

const HREF = /<a\b[^>]*?\bhref\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]+))/gi;
const URL_IN_TEXT = /\bhttps?:\/\/[^\s<>"'()]+/gi;

/** Undoes the entity escapes an href may carry (`&amp;` in a query string above all). */
function unescapeHref(href: string): string {
  return href
    .replace(/&amp;/gi, "&")
    .replace(/&quot;/gi, '"')
    .replace(/&#39;|&apos;/gi, "'")
    .replace(/&lt;/gi, "<")
    .replace(/&gt;/gi, ">");
}

/**
 * The http(s) links of a mail: the HTML's hrefs first (what a reader clicks), then URLs written in the text, each
 * once, in order, at most `MAILBOX_LIMITS.links`. Trailing punctuation of a URL in prose is not part of it.
 */
export function linksOf(text: string, html: string | null): string[] {
  const found: string[] = [];
  for (const m of (html ?? "").matchAll(HREF)) found.push(unescapeHref((m[1] ?? m[2] ?? m[3] ?? "").trim()));
  for (const m of text.matchAll(URL_IN_TEXT)) found.push(m[0].replace(/[.,;:!?]+$/, ""));
  const links: string[] = [];
  for (const link of found) {
    if (!/^https?:\/\//i.test(link) || link.length > MAILBOX_LIMITS.linkChars || links.includes(link)) continue;
    links.push(link);
    if (links.length === MAILBOX_LIMITS.links) break;
  }
  return links;
}

/** The mail as the mailbox records it: text cut, links found and bounded, headers cut. */
export function boundedMail(mail: ParsedMail): MailData {
  const text = mail.text.trim();
  const date = mail.date && !Number.isNaN(mail.date.getTime()) ? mail.date.toISOString() : null;
  return {
    from: cut(mail.from, MAILBOX_LIMITS.headerChars),
    to: mail.to,
    subject: cut(mail.subject, MAILBOX_LIMITS.headerChars),
    date,
    text: cut(text, MAILBOX_LIMITS.textChars),
    textTruncated: text.length > MAILBOX_LIMITS.textChars,
    links: linksOf(text, mail.html),
    sizeBytes: mail.sizeBytes,
  };
}

/**
 * A new mailbox address: an unguessable local part (`randomHex`, 20 hex characters = 80 bits, from the caller's
 * random source) at the configured domain. Lowercase, as addresses are compared.
 */
export function mailboxAddress(randomHex: string, domain: string): string {
  return `${randomHex.toLowerCase()}@${domain.toLowerCase()}`;
}
