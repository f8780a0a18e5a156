import { summarizeAction, summarizeStep } from "./step-summary";

const elements = new Map([
  [3, { tag: "button", label: "Add to cart" }],
  [4, { tag: "input", label: "" }],
]);
const describe_ = (i: number) => elements.get(i);

test("one line a person understands, per action", () => {
  expect(summarizeAction({ name: "click", index: 3 }, describe_)).toBe("Clicking 'Add to cart'");
  expect(summarizeAction({ name: "input_text", index: 4, text: "shoes", clear: true }, describe_)).toBe(
    "Typing 'shoes' into the input [4]",
  );
  expect(summarizeAction({ name: "click", index: 9 }, describe_)).toBe("Clicking element 9");
  expect(summarizeAction({ name: "go_to_url", url: "https://example.com/" }, describe_)).toBe(
    "Navigating to example.com",
  );
  expect(summarizeAction({ name: "go_to_url", url: "shop.test/a" }, describe_)).toBe("Navigating to shop.test/a");
  expect(summarizeAction({ name: "done", success: false, text: "" }, describe_)).toBe("Task ended without success");
  expect(summarizeStep(["Typing 'a' into 'b'", "Pressing Enter"])).toBe("Typing 'a' into 'b', then Pressing Enter");
  expect(summarizeStep([])).toBe("Thinking");
});
