import { replayScript, secretEnvName } from "./replay-script";

test("the script repeats the actions with their selectors and keeps secrets in the environment", () => {
  const code = replayScript("Log in", [
    { action: { name: "go_to_url", url: "http://site.test/login" }, url: "about:blank", tabId: 1 },
    {
      action: { name: "input_text", index: 2, text: "me@x.test", clear: true },
      url: "http://site.test/login",
      tabId: 1,
      selector: "#user",
    },
    {
      action: { name: "input_text", index: 3, text: "<secret>password</secret>", clear: true },
      url: "http://site.test/login",
      tabId: 1,
      selector: "#pw",
    },
    {
      action: { name: "click", index: 4 },
      url: "http://site.test/login",
      tabId: 1,
      selector: "form > button",
      frameUrl: "http://site.test/frame",
    },
    { action: { name: "send_keys", keys: "Control+a Enter" }, url: "http://site.test/home", tabId: 1 },
  ]);
  expect(code).toContain('await page.goto("http://site.test/login", { waitUntil: "domcontentloaded" });');
  expect(code).toContain('await page.locator("#user").fill("me@x.test");');
  expect(code).toContain(`await page.locator("#pw").fill((process.env.${secretEnvName("password")} ?? ""));`);
  expect(code).toContain(
    '(page.frames().find((f) => f.url() === "http://site.test/frame") ?? page).locator("form > button").click()',
  );
  expect(code).toContain('await pressKeys(page, "Control+a");');
  expect(code).not.toContain("<secret>");
  expect(secretEnvName("my-key")).toBe("SECRET_MY_KEY");
  // It is valid JavaScript.
  expect(() => new Function(code.replace('"use strict";', ""))).not.toThrow();
});

test("a task that starts on a page it did not open goes there first", () => {
  const code = replayScript("x", [
    { action: { name: "click", index: 1 }, url: "http://site.test/cart", tabId: 2, selector: "a" },
  ]);
  expect(code).toContain('page = await tab(2);\n    await page.goto("http://site.test/cart"');
});
