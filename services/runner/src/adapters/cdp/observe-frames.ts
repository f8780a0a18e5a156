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
  lines: RawLine[];
  omittedAbove: number;
  omittedBelow: number;
  elementCount: number;
  scroll: ScrollInfo;
}

/** An element index of the last observation: the frame the element is in, and its number there. */
export interface ElementRef {
  frame: Frame;
  id: number;
}

/**
 * Per tab, between observations: each frame numbers its own elements (the number is kept on the element, so it keeps
 * it); the tab gives each (frame, number) the index the model sees, the same across observations and never the same
 * for two elements. Because the numbering is the tab's, the frames of one observation can be read at once.
 */
export class TabIndices {
  private next = 1;
  private byFrame = new WeakMap<Frame, Map<number, number>>();

  /** A new document in the main frame: a new page, whose indices start at 1 again. */
  restart(): void {
    this.next = 1;
    this.byFrame = new WeakMap();
  }

  /** A new document in a child frame: its elements are new, their numbers too. */
  forget(frame: Frame): void {
    this.byFrame.delete(frame);
  }

  indexOf(frame: Frame, id: number): number {
    const ids = this.byFrame.get(frame) ?? new Map<number, number>();
    this.byFrame.set(frame, ids);
    const index = ids.get(id) ?? this.next++;
    ids.set(id, index);
    return index;
  }
}

export interface ObservedFrames {
  url: string;
  title: string;
  scroll: ScrollInfo;
  lines: ContentLine[];
  omittedAbove: number;
  omittedBelow: number;
  elements: Map<number, ElementDescription>;
  /** Where each element index lives, to act on it later. */
  elementRefs: Map<number, ElementRef>;
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

/** Which iframe element of its parent each frame is: the marker the page script put on it, read once per frame. */
const markers = new WeakMap<Frame, string>();

async function markerOf(frame: Frame): Promise<string | undefined> {
  const known = markers.get(frame);
  if (known) return known;
  const element = await frame.frameElement().catch(() => null);
  if (!element) return undefined;
  try {
    const marker = await element.evaluate((el) => (el as unknown as { __basFrame?: string }).__basFrame);
    if (marker) markers.set(frame, marker);
    return marker ?? undefined;
  } finally {
    await element.dispose().catch(() => undefined);
  }
}

type Evaluated = { raw: RawFrame } | { error: Error };

/**
 * Serializes a tab. Every frame within reach (the main one and its descendants, same- or cross-origin) is read at
 * once, one evaluation each, rather than one after another; then each visible child frame's lines are spliced in
 * where its iframe is, and element indices are handed out in that order.
 */
export async function observeFrames(page: Page, indices: TabIndices, maxChars: number): Promise<ObservedFrames> {
  const elements = new Map<number, ElementDescription>();
  const elementRefs = new Map<number, ElementRef>();
  // Each level of nesting gets half of its parent's share of the text.
  const read = (frame: Frame, depth: number): Promise<Evaluated> =>
    evaluateFrame(frame, { maxChars: Math.floor(maxChars / 2 ** depth) }).then(
      (raw) => ({ raw }),
      (error: Error) => ({ error }),
    );
  const evaluated = new Map<Frame, Promise<Evaluated>>();
  (function readAll(frame: Frame, depth: number) {
    evaluated.set(frame, read(frame, depth));
    if (depth < MAX_FRAME_DEPTH) for (const child of frame.childFrames()) readAll(child, depth + 1);
  })(page.mainFrame(), 0);

  async function splice(frame: Frame, raw: RawFrame, depth: number): Promise<ContentLine[]> {
    if (raw.fresh) {
      if (frame === page.mainFrame()) indices.restart();
      else indices.forget(frame);
    }
    const indexOf = new Map<number, number>();
    for (const line of raw.lines) {
      if (line.k !== "e") continue;
      const index = indices.indexOf(frame, line.id as number);
      indexOf.set(line.id as number, index);
      elements.set(index, { tag: line.tag ?? "element", label: line.l ?? "" });
      elementRefs.set(index, { frame, id: line.id as number });
    }
    const children = new Map<string, Frame>();
    if (depth < MAX_FRAME_DEPTH && raw.lines.some((l) => l.k === "f")) {
      // All at once: each costs round trips of its own, and the order does not matter.
      const marked = await Promise.all(
        frame.childFrames().map(async (child) => [await markerOf(child), child] as const),
      );
      for (const [marker, child] of marked) if (marker) children.set(marker, child);
    }
    const out: ContentLine[] = [];
    for (const line of raw.lines) {
      if (line.k === "t") out.push({ kind: "text", text: line.s ?? "" });
      else if (line.k === "e")
        out.push({ kind: "element", index: indexOf.get(line.id as number)!, text: line.s ?? "" });
      else {
        const child = children.get(String(line.id));
        if (!child) continue;
        // A frame that appeared after the others were read is read now.
        const inner = await (evaluated.get(child) ?? read(child, depth + 1));
        if ("error" in inner) {
          out.push({ kind: "text", text: `--- iframe (${inner.error.message}) ---` });
          continue;
        }
        out.push(
          { kind: "text", text: `--- iframe ${inner.raw.url} ---` },
          ...(await splice(child, inner.raw, depth + 1)),
          { kind: "text", text: "--- end of iframe ---" },
        );
      }
    }
    return out;
  }

  const main = await evaluated.get(page.mainFrame())!;
  if ("error" in main) throw main.error;
  const lines = await splice(page.mainFrame(), main.raw, 0);
  return {
    url: main.raw.url,
    title: main.raw.title,
    scroll: main.raw.scroll,
    lines,
    omittedAbove: main.raw.omittedAbove,
    omittedBelow: main.raw.omittedBelow,
    elements,
    elementRefs,
  };
}
