import { z } from "zod";

/**
 * What a live view sends while a person has taken over, checked before anything reaches the browser: a message of
 * another shape, or with values out of range, is dropped.
 */
const modifiers = z.int().min(0).max(15).default(0);
const coordinate = z.number().min(0).max(100_000);

const LiveInput = z.discriminatedUnion("type", [
  z.strictObject({
    type: z.literal("mouse"),
    action: z.enum(["down", "up", "move"]),
    x: coordinate,
    y: coordinate,
    button: z.enum(["none", "left", "middle", "right"]).default("left"),
    clickCount: z.int().min(0).max(3).default(1),
    modifiers,
  }),
  z.strictObject({
    type: z.literal("wheel"),
    x: coordinate,
    y: coordinate,
    deltaX: z.number().min(-10_000).max(10_000),
    deltaY: z.number().min(-10_000).max(10_000),
    modifiers,
  }),
  z.strictObject({
    type: z.literal("key"),
    action: z.enum(["down", "up"]),
    key: z.string().min(1).max(32),
    code: z.string().max(32).default(""),
    keyCode: z.int().min(0).max(255).default(0),
    text: z.string().max(4).optional(),
    modifiers,
  }),
  z.strictObject({ type: z.literal("text"), text: z.string().min(1).max(10_000) }),
  z.strictObject({ type: z.literal("tab"), targetId: z.string().regex(/^[A-Za-z0-9_-]{1,128}$/) }),
]);

/** A CDP command for the followed page, or a switch of the tab the view follows. */
export type LiveCommand =
  | { kind: "cdp"; method: string; params: Record<string, unknown> }
  | { kind: "switch-tab"; targetId: string };

const MOUSE_EVENT = { down: "mousePressed", up: "mouseReleased", move: "mouseMoved" } as const;

/** The command a live view's message asks for; undefined for anything that is not a valid input message. Pure. */
export function liveCommandOf(raw: string): LiveCommand | undefined {
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    return undefined;
  }
  const parsed = LiveInput.safeParse(value);
  if (!parsed.success) return undefined;
  const input = parsed.data;
  switch (input.type) {
    case "mouse":
      return {
        kind: "cdp",
        method: "Input.dispatchMouseEvent",
        params: {
          type: MOUSE_EVENT[input.action],
          x: input.x,
          y: input.y,
          button: input.action === "move" ? "none" : input.button,
          clickCount: input.action === "move" ? 0 : input.clickCount,
          modifiers: input.modifiers,
        },
      };
    case "wheel":
      return {
        kind: "cdp",
        method: "Input.dispatchMouseEvent",
        params: { type: "mouseWheel", x: input.x, y: input.y, deltaX: input.deltaX, deltaY: input.deltaY },
      };
    case "key":
      return {
        kind: "cdp",
        method: "Input.dispatchKeyEvent",
        params: {
          // A key that types something is a keyDown with its text; the others (arrows, Backspace) are raw.
          type: input.action === "up" ? "keyUp" : input.text ? "keyDown" : "rawKeyDown",
          key: input.key,
          code: input.code,
          windowsVirtualKeyCode: input.keyCode,
          modifiers: input.modifiers,
          ...(input.action === "down" && input.text ? { text: input.text, unmodifiedText: input.text } : {}),
        },
      };
    case "text":
      return { kind: "cdp", method: "Input.insertText", params: { text: input.text } };
    case "tab":
      return { kind: "switch-tab", targetId: input.targetId };
  }
}
