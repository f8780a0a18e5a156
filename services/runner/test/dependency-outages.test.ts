import { eventually } from "@bas/testing";
import { toolCallReply } from "../../../test/support/scripted-llm";
import { OUTAGE_PROJECT, type OutageStack, startOutageStack } from "./support/outage-stack";
import { press, pressUnlessDone } from "./support/press-script";

let stack: OutageStack;
beforeAll(async () => {
  stack = await startOutageStack();
}, 120_000);
afterAll(() => stack?.close(), 60_000);

const usage = { promptTokens: 700, completionTokens: 30 };

function deferred() {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

/** Each task opens its counter page and presses the button once; the model's press waits for `decide`. */
function scriptTasks(name: string, decide: Promise<void>): string[] {
  // As many as the runner works at once, so that all of them are in the middle of a step together.
  const keys = [1, 2].map((i) => `${name}-${i}`);
  for (const key of keys) {
    stack.llm.script(key, [
      toolCallReply("go_to_url", { url: `${stack.sites.url}/counter/${key}/` }, { usage }),
      async (req) => {
        await decide;
        return press(usage)(req);
      },
      pressUnlessDone(usage),
      // Only reached where the press above was lost to the outage and pressed again (see expectAllDone).
      pressUnlessDone(usage),
    ]);
  }
  return keys;
}

/** Waits until the runner says it waits for a dependency (after the log line `seen`). */
async function runnerWaits(seen: number, waits: RegExp) {
  await eventually(
    async () => stack.logLines().slice(seen),
    (lines) => lines.some((line) => waits.test(line)),
    60_000,
  );
}

/**
 * Every task ended on its own after the outage: successful, one press each (nothing done twice), every model call's
 * tokens on its session once, and what billing charged. Three model calls, or four where the outage cut the
 * connection as the press was sent: the step says its outcome is unknown, and the model, seeing the count still at
 * 0, presses again. A step per model call, unless the task was resumed by a new attempt (the outage outlasted the
 * work queue's ack wait, or an attempt failed): a decision made but not acted on before the old attempt stopped is
 * made again, a call without a step of its own.
 */
async function expectAllDone(keys: string[], created: { id: string }[]) {
  const ended = await Promise.all(
    created.map((s) => stack.waitFor(s.id, (x) => ["stopped", "error", "timed_out"].includes(x.status))),
  );
  for (const [i, session] of ended.entries()) {
    const calls = stack.llm.requests(keys[i]).length;
    expect([3, 4]).toContain(calls);
    expect({ key: keys[i], ...session }).toMatchObject({
      key: keys[i],
      status: "stopped",
      isTaskSuccessful: true,
      output: "Pressed the button once.",
      totalInputTokens: calls * usage.promptTokens,
      totalOutputTokens: calls * usage.completionTokens,
    });
    if (resumed(session.id)) {
      expect(session.stepCount).toBeGreaterThanOrEqual(3);
      expect(session.stepCount).toBeLessThanOrEqual(calls);
    } else {
      expect(session.stepCount).toBe(calls);
    }
    expect(stack.sites.presses(keys[i])).toBe(1);
    const billed = await eventually(
      () => stack.billing.getTotals({ projectId: OUTAGE_PROJECT, sessionId: session.id }),
      (t) => t.inputTokens >= session.totalInputTokens,
      30_000,
    );
    expect(billed).toMatchObject({ inputTokens: session.totalInputTokens, outputTokens: session.totalOutputTokens });
  }
}

/** Whether a later attempt took the session's task up again (the runner logs each attempt's start). */
function resumed(sessionId: string): boolean {
  return stack
    .logLines()
    .map((line) => JSON.parse(line) as { msg?: string; sessionId?: string; attempt?: number })
    .some((l) => l.sessionId === sessionId && /^task (started|resumed)$/.test(l.msg ?? "") && (l.attempt ?? 1) > 1);
}

/** Until each task made its second model request (its first step done, the press not decided yet). */
async function pressPending(keys: string[]) {
  await eventually(
    async () => keys.map((key) => stack.llm.requests(key).length),
    (counts) => counts.every((n) => n === 2),
    60_000,
  );
}

/**
 * Tasks each open their counter page, then wait for the model's decision to press. Meanwhile `part` is killed
 * (kill -9); then the model answers, so every task meets the outage while it acts and reports. Once the runner is
 * seen waiting (`waits`), `part` comes back, and every task must finish on its own.
 */
async function surviveMidTask(part: "nats" | "browser-pool", waits: RegExp) {
  const decide = deferred();
  const keys = scriptTasks(part, decide.promise);
  const created = await Promise.all(keys.map((key) => stack.create("Press the button once.", key)));
  await pressPending(keys);
  const seen = stack.logLines().length;
  await stack.kill(part);
  decide.resolve();
  await runnerWaits(seen, waits);
  await stack.restart(part);
  await expectAllDone(keys, created);
}

test("NATS killed (kill -9) while tasks run, back within the grace: every task completes, none repeats an action", async () => {
  await surviveMidTask("nats", /waiting for (sessions|NATS|billing) to answer/);
}, 180_000);

test("Postgres killed (kill -9) with tasks running and more queued: the runner waits for their browsers, every task completes", async () => {
  // Running tasks hardly touch Postgres (reads fall back to the aggregate): the outage bites where a queued task
  // starts (browser-pool looks up and records the session's browser) or when billing reads the project's credit.
  const decide = deferred();
  const running = scriptTasks("postgres-running", decide.promise);
  const queued = scriptTasks("postgres-queued", Promise.resolve());
  const created = await Promise.all(running.map((key) => stack.create("Press the button once.", key)));
  await pressPending(running);
  created.push(...(await Promise.all(queued.map((key) => stack.create("Press the button once.", key)))));
  await eventually(
    () => stack.queuedTasks(),
    (n) => n === running.length + queued.length,
  );
  const seen = stack.logLines().length;
  await stack.kill("postgres");
  decide.resolve();
  await runnerWaits(seen, /waiting for (browser-pool|billing) to answer/);
  await stack.restart("postgres");
  await expectAllDone([...running, ...queued], created);
}, 180_000);

test("browser-pool killed (kill -9) while tasks run, back within the grace: the tasks continue in their browsers", async () => {
  await surviveMidTask("browser-pool", /waiting for browser-pool to answer/);
}, 180_000);
