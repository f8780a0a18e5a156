import { stepMessages } from "./prompt";

const base = {
  task: "Now add it to the cart",
  mode: {},
  secretKeys: [],
  step: 1,
  maxSteps: 10,
  history: "",
  page: "about:blank",
  notes: [],
  today: "2026-11-25",
};
const text = (input: Parameters<typeof stepMessages>[0]) => String(stepMessages(input)[1].content);

test("a follow-up task comes with the earlier turns of its session, oldest first, before the task", () => {
  const prompt = text({
    ...base,
    earlierTurns: [
      { task: "Find the cheapest earbuds", outcome: "Orbit earbuds, $89.50" },
      { task: "Open their page", outcome: "Task failed: the page did not load" },
    ],
  });
  expect(prompt).toContain(
    "1. Task: Find the cheapest earbuds\n   Result: Orbit earbuds, $89.50\n2. Task: Open their page\n   Result: Task failed: the page did not load",
  );
  expect(prompt.indexOf("<earlier_turns>")).toBeLessThan(prompt.indexOf("<task>"));
});

test("a session's first task has no earlier turns section", () => {
  expect(text({ ...base, earlierTurns: [] })).not.toContain("earlier_turns");
});

test("a browser limited to some domains: the prompt lists them in one line; without a limit it says nothing", () => {
  const prompt = text({ ...base, earlierTurns: [], allowedDomains: ["shop.test", "*.cdn.test"] });
  expect(prompt).toContain(
    "<allowed_domains>\nThe browser can reach only these hosts (a domain includes its subdomains); others are blocked: shop.test, *.cdn.test\n</allowed_domains>",
  );
  expect(text({ ...base, earlierTurns: [], allowedDomains: [] })).not.toContain("allowed_domains");
  expect(text({ ...base, earlierTurns: [] })).not.toContain("allowed_domains");
});

test("a session with a temporary mailbox: the prompt gives its address and the mail tools; without one, nothing", () => {
  const prompt = text({ ...base, earlierTurns: [], inboxEmail: "abc123@mail.test" });
  expect(prompt).toContain("<mailbox>\nYou have a temporary email address: abc123@mail.test.");
  expect(prompt).toContain("wait_for_email");
  expect(text({ ...base, earlierTurns: [] })).not.toContain("<mailbox>");
});
