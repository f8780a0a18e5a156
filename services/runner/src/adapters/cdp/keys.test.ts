import { normalizeKeys } from "./keys";

test("key names, aliases, combinations and sequences; other words are typed", () => {
  expect(normalizeKeys("Enter")).toEqual([{ key: "Enter", modifiers: [] }]);
  expect(normalizeKeys("ctrl+a")).toEqual([{ key: "a", modifiers: ["Control"] }]);
  expect(normalizeKeys("Tab Tab esc")).toEqual([
    { key: "Tab", modifiers: [] },
    { key: "Tab", modifiers: [] },
    { key: "Escape", modifiers: [] },
  ]);
  expect(normalizeKeys("Shift+ArrowDown")).toEqual([{ key: "ArrowDown", modifiers: ["Shift"] }]);
  expect(normalizeKeys("hello")).toEqual([{ key: "hello", modifiers: [], text: "hello" }]);
  expect(normalizeKeys("f5")).toEqual([{ key: "F5", modifiers: [] }]);
});
