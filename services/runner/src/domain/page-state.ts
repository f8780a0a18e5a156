import type { ElementDescription } from "./step-summary";

export interface TabInfo {
  id: number;
  url: string;
  title: string;
}

export interface ScrollInfo {
  x: number;
  y: number;
  viewportWidth: number;
  viewportHeight: number;
  pageWidth: number;
  pageHeight: number;
}

/** One line of page content: text in reading order, or an interactive element with its index. */
export type ContentLine = { kind: "text"; text: string } | { kind: "element"; index: number; text: string };

/** What the agent sees of the browser at the start of a step. */
export interface PageSnapshot {
  url: string;
  title: string;
  tabs: TabInfo[];
  activeTabId: number;
  scroll: ScrollInfo;
  lines: ContentLine[];
  /** Lines left out above and below the window sent (huge pages). */
  omittedAbove: number;
  omittedBelow: number;
  /** Interactive elements by index, for summaries ("Clicking 'Add to cart'"). */
  elements: Map<number, ElementDescription>;
  /** JPEG of the viewport, when one was taken. */
  screenshot?: Uint8Array;
}

const pages = (px: number, viewport: number) => (viewport > 0 ? Math.max(0, px / viewport) : 0).toFixed(1);

/** The page as text for the prompt; bounded by `maxChars` (the serializer already windows huge pages). */
export function renderSnapshot(s: PageSnapshot, maxChars: number): string {
  const tabs = s.tabs.map(
    (t) => `  [${t.id}]${t.id === s.activeTabId ? " (current)" : ""} ${t.title || "(no title)"} - ${t.url}`,
  );
  const below = s.scroll.pageHeight - s.scroll.y - s.scroll.viewportHeight;
  const out = [
    `Current URL: ${s.url}`,
    `Title: ${s.title || "(no title)"}`,
    `Open tabs:\n${tabs.join("\n")}`,
    `Scroll: ${pages(s.scroll.y, s.scroll.viewportHeight)} pages above, ${pages(below, s.scroll.viewportHeight)} pages below the viewport`,
    "Page content (interactive elements are shown as [index]<tag>; use the index in actions):",
  ];
  if (s.omittedAbove) out.push(`... ${s.omittedAbove} lines above not shown (scroll up to see them) ...`);
  let used = out.reduce((n, l) => n + l.length + 1, 0);
  let cutAt = s.lines.length;
  for (const [i, line] of s.lines.entries()) {
    const text = line.kind === "element" ? `[${line.index}]${line.text}` : line.text;
    if (used + text.length + 1 > maxChars) {
      cutAt = i;
      break;
    }
    out.push(text);
    used += text.length + 1;
  }
  const hidden = s.omittedBelow + (s.lines.length - cutAt);
  if (hidden) out.push(`... ${hidden} lines below not shown (scroll down to see them, or use extract) ...`);
  if (s.lines.length === 0) out.push("(empty page)");
  return out.join("\n");
}

/** Rough token count: about four characters per token for English text and markup. */
export const estimateTokens = (text: string) => Math.ceil(text.length / 4);
