import { createCleanupStack, startWithCleanup } from "./cleanup-stack";

test("steps run last first, once, and a failing one does not keep the others from running", async () => {
  const cleanup = createCleanupStack();
  const ran: string[] = [];
  cleanup.defer(() => ran.push("connection"));
  cleanup.defer(() => {
    ran.push("server");
    throw new Error("server would not close");
  });
  cleanup.defer(async () => ran.push("health"));
  await expect(cleanup.close()).rejects.toThrow("server would not close");
  await expect(cleanup.close()).rejects.toThrow("server would not close");
  expect(ran).toEqual(["health", "server", "connection"]);
  expect(() => cleanup.defer(() => undefined)).toThrow(/after close/);
});

test("a start-up that fails half-way undoes what it set up, and passes its error on", async () => {
  const ran: string[] = [];
  await expect(
    startWithCleanup(async (cleanup) => {
      cleanup.defer(() => ran.push("database closed"));
      throw new Error("NATS is not there");
    }),
  ).rejects.toThrow("NATS is not there");
  expect(ran).toEqual(["database closed"]);
});
