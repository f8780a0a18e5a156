import { status } from "@grpc/grpc-js";
import { eventually } from "@bas/testing";
import { createRequest, failure, type Harness, newProject, startHarness } from "./harness";

// The service's clock stands still unless the test moves it: a session times out when the test says so, never because
// the machine was slow to set it up (the idle one once timed out before it was ready).
let offset = 0;
const start = Date.now();
const now = () => new Date(start + offset);

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ SESSION_INACTIVITY_TIMEOUT_MS: "400" }, { now });
});
afterAll(() => h.close());

const project = newProject();
const get = (sessionId: string) => h.api.getSession({ projectId: project, sessionId });

test("idle and stuck created sessions time out; a running one, quiet for longer, does not", async () => {
  const busy = await h.api.createSession(createRequest(project, { task: "long thinking" }));
  const work = await h.takeAssignment();
  await h.reports.sandboxReady({ sessionId: busy.id, browserId: "b" });
  await h.reports.taskStarted({ sessionId: busy.id, taskId: work.taskId, attempt: 1 });

  const idle = await h.api.createSession(createRequest(project));
  await h.takeAssignment();
  await h.reports.sandboxReady({ sessionId: idle.id, browserId: "b" });
  const stuck = await h.api.createSession(createRequest(project, { task: "never picked up" }));
  offset += 1_000; // quiet for a second, all of them: past the timeout

  expect(
    await eventually(
      () => get(idle.id),
      (s) => s.status === "timed_out",
    ),
  ).toMatchObject({ status: "timed_out" });
  expect(
    await eventually(
      () => get(stuck.id),
      (s) => s.status === "timed_out",
    ),
  ).toMatchObject({
    isTaskSuccessful: false,
  });
  // The running session has been quiet longer than the idle one that timed out, and is still running.
  expect((await get(busy.id)).status).toBe("running");
  const refused = await failure(h.api.createSession(createRequest(project, { task: "late", sessionId: idle.id })));
  expect(refused).toMatchObject({ code: status.FAILED_PRECONDITION, kind: "illegal_state" });
});
