import { status } from "@grpc/grpc-js";
import { ClientError, retryUnavailable } from "./grpc-client";

const failure = (code: status) => new ClientError(code, "nope", undefined, undefined);

test("an unreachable service is tried again until it answers", async () => {
  const answers = [failure(status.UNAVAILABLE), failure(status.DEADLINE_EXCEEDED), "budget ok"];
  let calls = 0;
  const result = await retryUnavailable(async () => {
    const next = answers[calls++];
    if (next instanceof Error) throw next;
    return next;
  });
  expect(result).toBe("budget ok");
  expect(calls).toBe(3);
});

test("a refusal is not retried, and an outage longer than the attempts is passed on", async () => {
  let calls = 0;
  await expect(
    retryUnavailable(async () => {
      calls++;
      throw failure(status.INVALID_ARGUMENT);
    }),
  ).rejects.toMatchObject({ code: status.INVALID_ARGUMENT });
  expect(calls).toBe(1);

  calls = 0;
  await expect(
    retryUnavailable(async () => {
      calls++;
      throw failure(status.UNAVAILABLE);
    }, 2),
  ).rejects.toMatchObject({ code: status.UNAVAILABLE });
  expect(calls).toBe(2);
});
