import { titleOf } from "./title";

test("the title is the task's first sentence, shortened at a word boundary", () => {
  expect(titleOf("find the cheapest laptop. Then add it to the cart.")).toBe("Find the cheapest laptop.");
  expect(titleOf("Search for running shoes in size 42 and compare the three cheapest offers by delivery time")).toBe(
    "Search for running shoes in size 42 and compare the three…",
  );
  expect(titleOf("Log in with <secret>password</secret>")).toBe("Log in with password");
  expect(titleOf("   ")).toBe("Browser session");
});
