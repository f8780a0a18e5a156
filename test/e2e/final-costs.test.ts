import { billing } from "@bas/proto";
import Decimal from "decimal.js";
import { toolCallReply } from "../support/scripted-llm";
import { type AgentStack, startAgentStack } from "./support/agent-stack";

// A caller polls until the status is terminal and then reads the costs once. Browser time used to be priced after
// the session ended (browser-pool stops the browser when it sees the end, then billing prices its last report), so
// that read said browserCostUsd "0". A terminal status now comes with final costs.

let stack: AgentStack;
beforeAll(async () => {
  stack = await startAgentStack();
});
afterAll(() => stack?.close());

const TERMINAL = ["stopped", "timed_out", "error"];

/** Every usage fact of the session on the USAGE stream, as billing charges them. */
async function usageOf(sessionId: string): Promise<billing.UsageRecorded[]> {
  const { jsm, streams } = stack.infra;
  const info = await jsm.streams.info(streams.usage.stream);
  const facts: billing.UsageRecorded[] = [];
  for (let seq = info.state.first_seq; seq <= info.state.last_seq && info.state.messages > 0; seq++) {
    const m = await jsm.streams.getMessage(streams.usage.stream, { seq }).catch(() => null);
    const usage = m ? billing.UsageRecorded.fromJSON(m.json()) : undefined;
    if (usage?.sessionId === sessionId) facts.push(usage);
  }
  return facts;
}

/** The default price table (docs/billing.md), each charge rounded half-up to 1e-10 USD. */
function priced(facts: billing.UsageRecorded[]) {
  const charge = (usd: Decimal) => usd.toDecimalPlaces(10, Decimal.ROUND_HALF_UP);
  const sum = (values: Decimal[]) => values.reduce((a, b) => a.plus(b), new Decimal(0));
  return {
    llm: sum(
      facts.flatMap((f) =>
        f.llm
          ? [charge(new Decimal(f.llm.inputTokens).times(2.5).plus(new Decimal(f.llm.outputTokens).times(10)).div(1e6))]
          : [],
      ),
    ),
    browser: sum(
      facts.flatMap((f) => (f.browser ? [charge(new Decimal(f.browser.milliseconds).times(0.06).div(3.6e6))] : [])),
    ),
    proxy: sum(facts.flatMap((f) => (f.proxy ? [charge(new Decimal(f.proxy.bytes).times(4).div(1e9))] : []))),
  };
}

test("polled until terminal and read once, the costs are the final figures: browser time included", async () => {
  stack.llm.script("gpt-4o", [
    toolCallReply(
      "done",
      { success: true, text: "Nothing to do." },
      { usage: { promptTokens: 1200, completionTokens: 30 } },
    ),
  ]);
  const created = await stack.request("POST", "/api/v3/sessions", {
    task: "Say that there is nothing to do.",
    model: "gpt-4o",
  });
  expect(created.status).toBe(200);

  // The caller's loop, as eager as a caller can be: poll back to back until terminal, keep that one read.
  const ended = await stack.waitFor(created.body.id, (s) => TERMINAL.includes(s.status), 45_000, 0);
  expect(ended.status).toBe("stopped");
  expect(new Decimal(ended.browserCostUsd).gt(0)).toBe(true);

  // The final figures: what the session's usage facts cost. The browser's last report is among them already.
  const facts = await usageOf(created.body.id);
  const expected = priced(facts);
  expect(ended.browserCostUsd).toBe(expected.browser.toFixed());
  expect(ended.llmCostUsd).toBe(expected.llm.toFixed());
  expect(ended.proxyCostUsd).toBe(expected.proxy.toFixed());
  expect(ended.totalCostUsd).toBe(expected.llm.plus(expected.browser).plus(expected.proxy).toFixed());
  expect(facts.some((f) => f.browser && f.lastReport)).toBe(true);

  // And nothing changes afterwards: a later read says the same.
  const later = await stack.request("GET", `/api/v3/sessions/${created.body.id}`);
  expect(later.body).toMatchObject({
    browserCostUsd: ended.browserCostUsd,
    llmCostUsd: ended.llmCostUsd,
    totalCostUsd: ended.totalCostUsd,
  });
});

test("a stop answers with the session stopped and its final costs", async () => {
  const created = await stack.request("POST", "/api/v3/sessions", {});
  expect(created.status).toBe(200);
  await stack.waitFor(created.body.id, (s) => s.status === "idle");
  const stopped = await stack.request("POST", `/api/v3/sessions/${created.body.id}/stop`, { strategy: "session" });
  expect(stopped.status).toBe(200);
  expect(stopped.body.status).toBe("stopped");
  expect(new Decimal(stopped.body.browserCostUsd).gt(0)).toBe(true);
  const facts = await usageOf(created.body.id);
  expect(stopped.body.browserCostUsd).toBe(priced(facts).browser.toFixed());
  expect(facts.some((f) => f.browser && f.lastReport)).toBe(true);
});
