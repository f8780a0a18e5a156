import { randomUUID } from "node:crypto";
import { runner } from "@bas/proto";
import { createTestInfra, eventually, type TestInfra } from "@bas/testing";
import { createTaskLeases, leaseBucketName } from "../src/adapters/nats/task-leases";
import {
  type Disposition,
  startWorkConsumer,
  type WorkConsumer,
  type WorkItem,
} from "../src/adapters/nats/work-consumer";

let infra: TestInfra;
const consumers: WorkConsumer[] = [];
beforeEach(async () => {
  infra = await createTestInfra();
});
afterEach(async () => {
  for (const c of consumers.splice(0)) await c.stop();
  await infra.jsm.streams.delete(`KV_${leaseBucketName(infra.namespace)}`).catch(() => undefined);
  await infra.close();
});

const log = { warn: () => {}, error: () => {} };
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function publish(taskId: string) {
  const assignment = runner.TaskAssignment.fromPartial({
    taskId,
    sessionId: randomUUID(),
    projectId: "p",
    task: "t",
    model: "svc-max",
  });
  await infra.js.publish(
    infra.streams.work.subject("tasks"),
    JSON.stringify(runner.TaskAssignment.toJSON(assignment)),
    { msgID: taskId },
  );
}

async function consumer(
  concurrency: number,
  handle: (item: WorkItem) => Promise<Disposition>,
  ackWaitMs = 1_000,
  maxDeliver = 3,
) {
  const c = await startWorkConsumer(
    { js: infra.js, jsm: infra.jsm, streams: infra.streams, concurrency, ackWaitMs, maxDeliver, log },
    handle,
  );
  consumers.push(c);
  return c;
}

async function until(check: () => boolean, timeoutMs = 20_000) {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error("condition not met in time");
    await sleep(50);
  }
}

/**
 * Heartbeats go every third of it: a handler's event loop may stall for two thirds (GC, pages read back in on a slow
 * machine) before JetStream hands its task out again.
 */
const ACK_WAIT_MS = 2_000;

test("competing runners: every task is worked exactly once, at most `concurrency` at a time per runner, even past the ack wait", async () => {
  const handled: Record<string, string[]> = {};
  const active = { a: 0, b: 0 };
  const peak = { a: 0, b: 0 };
  const worker =
    (name: "a" | "b") =>
    async (item: WorkItem): Promise<Disposition> => {
      active[name]++;
      peak[name] = Math.max(peak[name], active[name]);
      handled[item.assignment.taskId] = [...(handled[item.assignment.taskId] ?? []), `${name}#${item.attempt}`];
      // Longer than the ack wait: only the working() heartbeats keep the task from being redelivered.
      await sleep(ACK_WAIT_MS + 500);
      active[name]--;
      return { kind: "ack" };
    };
  await consumer(2, worker("a"), ACK_WAIT_MS);
  await consumer(2, worker("b"), ACK_WAIT_MS);
  const ids = Array.from({ length: 6 }, () => randomUUID());
  for (const id of ids) await publish(id);
  await until(() => Object.keys(handled).length === 6 && active.a + active.b === 0);
  await sleep(ACK_WAIT_MS + 500);
  expect(Object.values(handled).every((h) => h.length === 1 && h[0].endsWith("#1"))).toBe(true);
  expect(peak.a).toBeLessThanOrEqual(2);
  expect(peak.b).toBeLessThanOrEqual(2);
  // Both runners took part.
  const by = Object.values(handled).map((h) => h[0][0]);
  expect(new Set(by)).toEqual(new Set(["a", "b"]));
  const info = await infra.jsm.streams.info(infra.streams.work.stream);
  expect(info.state.messages).toBe(0);
});

test("a task handed back (nak) comes again as the next attempt; a silent runner's task is redelivered after the ack wait", async () => {
  const attempts: number[] = [];
  let silent: ((d: Disposition) => void) | undefined;
  await consumer(
    1,
    async (item) => {
      attempts.push(item.attempt);
      if (item.attempt === 1) return { kind: "nak" };
      if (item.attempt === 2)
        return new Promise<Disposition>((resolve) => {
          // Never answers in time; its heartbeat keeps going, so stop it from outside below.
          silent = resolve;
        });
      return { kind: "ack" };
    },
    1_000,
    4,
  );
  await publish(randomUUID());
  await until(() => attempts.length === 2);
  expect(attempts).toEqual([1, 2]);
  silent?.({ kind: "abandon" });
  // Abandoned: no ack, no heartbeat; JetStream redelivers it after the ack wait.
  await until(() => attempts.length === 3);
  expect(attempts).toEqual([1, 2, 3]);
});

test("tasks that run longer than a pull's heartbeat window end cleanly: no pull fails, nothing pauses a slot", async () => {
  const warnings: unknown[] = [];
  const done: string[] = [];
  const c = await startWorkConsumer(
    {
      js: infra.js,
      jsm: infra.jsm,
      streams: infra.streams,
      concurrency: 2,
      ackWaitMs: 30_000,
      maxDeliver: 3,
      log: { warn: (o: object, msg: string) => warnings.push({ ...o, msg }), error: log.error },
    },
    async ({ assignment }) => {
      // Past the fetch's idle-heartbeat check: a 5 s pull expects a heartbeat every 2.5 s and fails after two misses.
      if (assignment.taskId !== "short") await sleep(6_300);
      done.push(assignment.taskId);
      return { kind: "ack" };
    },
  );
  consumers.push(c);
  // Tasks come while both slots' pulls wait, part-way through their heartbeat windows, and each outlasts its window.
  await sleep(1_200);
  await publish("long-1");
  await sleep(3_000);
  await publish("long-2");
  await until(() => done.length === 2);
  await publish("short");
  await until(() => done.length === 3);
  expect(warnings).toEqual([]);
});

test("an unreadable assignment is dropped, not retried forever", async () => {
  const seen: string[] = [];
  await consumer(1, async (item) => {
    seen.push(item.assignment.taskId);
    return { kind: "ack" };
  });
  await infra.js.publish(infra.streams.work.subject("tasks"), "not json", { msgID: "junk" });
  const id = randomUUID();
  await publish(id);
  await until(() => seen.length === 1);
  expect(seen).toEqual([id]);
  // Both leave the work queue: the junk dropped, the task acked once its handler returned (just after it was seen).
  await eventually(
    async () => (await infra.jsm.streams.info(infra.streams.work.stream)).state.messages,
    (messages) => messages === 0,
  );
});

test("task leases: the latest attempt wins and the earlier one learns it at its next check", async () => {
  const leases = await createTaskLeases(infra.js, infra.namespace);
  const first = await leases.claim("task-1", { runnerId: "a", attempt: 1 });
  expect(await first.holds()).toBe(true);
  expect(await first.holds()).toBe(true);
  const second = await leases.claim("task-1", { runnerId: "b", attempt: 2 });
  expect(await first.holds()).toBe(false);
  expect(await second.holds()).toBe(true);
  await first.release();
  expect(await second.holds()).toBe(true);
  await second.release();
  const third = await leases.claim("task-1", { runnerId: "c", attempt: 3 });
  expect(await third.holds()).toBe(true);
});

test("task leases: the step an attempt was acting on when it died is what the next attempt learns on claiming", async () => {
  const leases = await createTaskLeases(infra.js, infra.namespace);
  const first = await leases.claim("task-2", { runnerId: "a", attempt: 1 });
  expect(first.previousPending).toBeUndefined();
  const pending = {
    step: 4,
    browserId: "browser-1",
    summary: "Clicking 'Press'",
    messages: [{ role: "ai" as const, type: "browser_action", data: "{}", hidden: false }],
    record: { step: 4, actions: [{ call: "click", summary: "Clicking 'Press'", result: "", error: false }] },
  };
  expect(await first.holds(pending)).toBe(true);
  // Attempt 1 dies here (no release); attempt 2 takes the lease over.
  const second = await leases.claim("task-2", { runnerId: "b", attempt: 2 });
  expect(second.previousPending).toEqual(pending);
  expect(await first.holds()).toBe(false);
});
