import { status } from "@grpc/grpc-js";
import { ClientError } from "./grpc-client";
import { isUnavailable, retry } from "./retry";

const failure = (code: status) => new ClientError(code, "nope", undefined, undefined);
const fast = { initialDelayMs: 1, maxDelayMs: 5 };

test("an unreachable service is tried again until it answers", async () => {
  const answers = [failure(status.UNAVAILABLE), failure(status.DEADLINE_EXCEEDED), "budget ok"];
  let calls = 0;
  const result = await retry(async () => {
    const next = answers[calls++];
    if (next instanceof Error) throw next;
    return next;
  }, fast);
  expect(result).toBe("budget ok");
  expect(calls).toBe(3);
});

test("a refusal is not retried, and an outage longer than the grace is passed on after trying until its end", async () => {
  let calls = 0;
  await expect(
    retry(async () => {
      calls++;
      throw failure(status.INVALID_ARGUMENT);
    }, fast),
  ).rejects.toMatchObject({ code: status.INVALID_ARGUMENT });
  expect(calls).toBe(1);

  calls = 0;
  const waits: number[] = [];
  await expect(
    retry(
      async () => {
        calls++;
        throw failure(status.UNAVAILABLE);
      },
      { ...fast, graceMs: 50, onRetry: (_err, { waitedMs }) => waits.push(waitedMs) },
    ),
  ).rejects.toMatchObject({ code: status.UNAVAILABLE });
  // Tried again while the grace lasted, never after it.
  expect(calls).toBeGreaterThanOrEqual(2);
  expect(calls).toBe(waits.length + 1);
  expect(waits.every((waited) => waited < 50)).toBe(true);
});

test("aborting ends the wait with the last error", async () => {
  const controller = new AbortController();
  const waiting = retry(
    async () => {
      throw failure(status.UNAVAILABLE);
    },
    { graceMs: 60_000, signal: controller.signal, onRetry: () => controller.abort() },
  );
  await expect(waiting).rejects.toMatchObject({ code: status.UNAVAILABLE });
});

test("errors that say a dependency is down are told apart from errors of the request", () => {
  const refused = Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:5432"), { code: "ECONNREFUSED" });
  const shutdown = Object.assign(new Error("terminating connection due to administrator command"), { code: "57P01" });
  const natsTimeout = Object.assign(new Error("timeout"), { name: "TimeoutError" });
  const wrapped = new Error("append failed", { cause: natsTimeout });
  for (const err of [failure(status.UNAVAILABLE), refused, shutdown, natsTimeout, wrapped]) {
    expect(isUnavailable(err)).toBe(true);
  }
  const unique = Object.assign(new Error("duplicate key"), { code: "23505" });
  for (const err of [failure(status.NOT_FOUND), new Error("bug"), unique, "text"]) {
    expect(isUnavailable(err)).toBe(false);
  }
});
