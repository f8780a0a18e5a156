import { liveCommandOf } from "./live-input";

const of = (message: unknown) => liveCommandOf(JSON.stringify(message));

test("a person's input becomes the CDP command for the followed page", () => {
  expect(of({ type: "mouse", action: "down", x: 10, y: 20 })).toEqual({
    kind: "cdp",
    method: "Input.dispatchMouseEvent",
    params: { type: "mousePressed", x: 10, y: 20, button: "left", clickCount: 1, modifiers: 0 },
  });
  expect(of({ type: "mouse", action: "move", x: 1, y: 2, button: "right" })).toMatchObject({
    params: { type: "mouseMoved", button: "none", clickCount: 0 },
  });
  expect(of({ type: "wheel", x: 1, y: 2, deltaX: 0, deltaY: 120 })).toMatchObject({
    params: { type: "mouseWheel", deltaY: 120 },
  });
  expect(of({ type: "key", action: "down", key: "a", code: "KeyA", keyCode: 65, text: "a" })).toMatchObject({
    method: "Input.dispatchKeyEvent",
    params: { type: "keyDown", key: "a", text: "a", windowsVirtualKeyCode: 65 },
  });
  expect(of({ type: "key", action: "down", key: "Backspace", keyCode: 8 })).toMatchObject({
    params: { type: "rawKeyDown", key: "Backspace" },
  });
  expect(of({ type: "text", text: "pasted" })).toEqual({
    kind: "cdp",
    method: "Input.insertText",
    params: { text: "pasted" },
  });
  expect(of({ type: "tab", targetId: "ABC123" })).toEqual({ kind: "switch-tab", targetId: "ABC123" });
});

test("anything else is dropped: other shapes, other methods, values out of range, not JSON", () => {
  for (const message of [
    { type: "cdp", method: "Runtime.evaluate", params: { expression: "1" } },
    { type: "mouse", action: "down", x: -1, y: 2 },
    { type: "mouse", action: "down", x: 1, y: 2, extra: true },
    { type: "key", action: "down", key: "" },
    { type: "tab", targetId: "../../etc" },
    { type: "text", text: "" },
  ]) {
    expect(of(message)).toBeUndefined();
  }
  expect(liveCommandOf("not json")).toBeUndefined();
});
