import type { Frame, Page } from "puppeteer-core";
import type { ContentLine, ScrollInfo } from "../../domain/page-state";
import type { ElementDescription } from "../../domain/step-summary";
import { loadPageScript } from "./page-script";

const SOURCE = loadPageScript("observe-page-script.js").source;

const FRAME_TIMEOUT_MS = 5_000;
const MAX_FRAME_DEPTH = 3;

interface RawLine {
  k: "t" | "e" | "f";
  y: number;
  s?: string;
  id?: number | string;
  l?: string;
  tag?: string;
}

interface RawFrame {
  url: string;
  title: string;
  fresh: boolean;
  nextId: number;
  lines: RawLine[];
  omittedAbove: number;
  omittedBelow: number;
  elementCount: number;
  scroll: ScrollInfo;
}

/** Per-tab memory between observations: ids keep growing across the frames of one document. */
export interface TabIds {
  nextId: number;
}

export interface ObservedFrames {
  url: string;
  title: string;
  scroll: ScrollInfo;
  lines: ContentLine[];
  omittedAbove: number;
  omittedBelow: number;
  elements: Map<number, ElementDescription>;
  /** The frame each element index lives in, to act on it later. */
  elementFrames: Map<number, Frame>;
}

export class FrameTimeoutError extends Error {
  override name = "FrameTimeoutError";
}

async function evaluateFrame(frame: Frame, options: object): Promise<RawFrame> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      frame.evaluate(`(${SOURCE})(${JSON.stringify(options)})`) as Promise<RawFrame>,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new FrameTimeoutError("the page did not answer in time")), FRAME_TIMEOUT_MS);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

async function markerOf(frame: Frame): Promise<string | undefined> {
  const element = await frame.frameElement().catch(() => null);
  if (!element) return undefined;
  try {
    return (await element.evaluate((el) => (el as unknown as { __basFrame?: string }).__basFrame)) ?? undefined;
  } finally {
    await element.dispose().catch(() => undefined);
  }
}

/**
 * Serializes a tab: the main frame in one evaluation, then each visible child frame (same- or cross-origin) in
 * one evaluation each, spliced in where its iframe is.
 */
export async function observeFrames(page: Page, ids: TabIds, maxChars: number): Promise<ObservedFrames> {
  const elements = new Map<number, ElementDescription>();
  const elementFrames = new Map<number, Frame>();

  async function visit(
    frame: Frame,
    isMain: boolean,
    depth: number,
    budget: number,
  ): Promise<RawFrame & { out: ContentLine[] }> {
    const raw = await evaluateFrame(frame, { isMain, minNextId: ids.nextId, maxChars: budget });
    ids.nextId = raw.nextId;
    const out: ContentLine[] = [];
    const placeholders = raw.lines.some((l) => l.k === "f");
    const children = new Map<string, Frame>();
    if (placeholders && depth < MAX_FRAME_DEPTH) {
      // All at once: each costs round trips of its own, and the order does not matter.
      const marked = await Promise.all(
        frame.childFrames().map(async (child) => [await markerOf(child), child] as const),
      );
      for (const [marker, child] of marked) if (marker) children.set(marker, child);
    }
    for (const line of raw.lines) {
      if (line.k === "t") out.push({ kind: "text", text: line.s ?? "" });
      else if (line.k === "e") {
        const index = line.id as number;
        out.push({ kind: "element", index, text: line.s ?? "" });
        elements.set(index, { tag: line.tag ?? "element", label: line.l ?? "" });
        elementFrames.set(index, frame);
      } else {
        const child = children.get(String(line.id));
        if (!child) continue;
        try {
          const inner = await visit(child, false, depth + 1, Math.floor(budget / 2));
          out.push({ kind: "text", text: `--- iframe ${inner.url} ---` }, ...inner.out, {
            kind: "text",
            text: "--- end of iframe ---",
          });
        } catch (err) {
          out.push({ kind: "text", text: `--- iframe (${(err as Error).message}) ---` });
        }
      }
    }
    return { ...raw, out };
  }

  const main = await visit(page.mainFrame(), true, 0, maxChars);
  return {
    url: main.url,
    title: main.title,
    scroll: main.scroll,
    lines: main.out,
    omittedAbove: main.omittedAbove,
    omittedBelow: main.omittedBelow,
    elements,
    elementFrames,
  };
}
