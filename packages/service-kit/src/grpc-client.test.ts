import { getEventListeners } from "node:events";
import { setTimeout as sleep } from "node:timers/promises";
import { status } from "@grpc/grpc-js";
import { billing } from "@bas/proto";
import { AtCapacityError, NotFoundError } from "@bas/errors";
import { connectClient, onReplicaWithRoom } from "./grpc-client";
import { unaryService } from "./grpc-handler";
import { createGrpcServer } from "./grpc-server";

const server = createGrpcServer();
let address: string;
const notImplemented = async () => {
  throw new Error("not used");
};
beforeAll(async () => {
  server.add(
    billing.BillingService,
    unaryService({
      getCredit: async (req: billing.GetCreditRequest) => {
        // Unreferenced: the call is cancelled long before, and the sleep must not keep the test worker alive.
        if (req.projectId === "slow") await sleep(10_000, undefined, { ref: false });
        return { spentUsd: "0" };
      },
      checkBudget: notImplemented,
      getTotals: notImplemented,
      batchGetTotals: notImplemented,
      setCredit: notImplemented,
      requireCredit: notImplemented,
    }),
  );
  address = `127.0.0.1:${await server.listen("127.0.0.1", 0)}`;
});
afterAll(() => server.close(0));

test("calls that share a long-lived signal leave no listener on it", async () => {
  const client = connectClient(billing.BillingClient, address);
  const task = new AbortController();
  for (let i = 0; i < 20; i++) await client.getCredit({ projectId: "p" }, { signal: task.signal });
  expect(getEventListeners(task.signal, "abort")).toHaveLength(0);
  client.close();
});

test("aborting the signal cancels the call in flight", async () => {
  const client = connectClient(billing.BillingClient, address);
  const task = new AbortController();
  const call = client.getCredit({ projectId: "slow" }, { signal: task.signal });
  setTimeout(() => task.abort(), 100);
  await expect(call).rejects.toMatchObject({ code: status.CANCELLED });
  client.close();
});

test("a client of one address reaches a server restarted on the same port with its very next call", async () => {
  const start = async (port: number) => {
    const server = createGrpcServer();
    server.add(
      billing.BillingService,
      unaryService({
        getCredit: async () => ({ spentUsd: "0" }),
        checkBudget: notImplemented,
        getTotals: notImplemented,
        batchGetTotals: notImplemented,
        setCredit: notImplemented,
        requireCredit: notImplemented,
      }),
    );
    return { server, port: await server.listen("127.0.0.1", port) };
  };
  const first = await start(0);
  const client = connectClient(billing.BillingClient, `127.0.0.1:${first.port}`);
  await client.getCredit({ projectId: "p" });
  await first.server.close(0);
  const again = await start(first.port);
  await expect(client.getCredit({ projectId: "p" })).resolves.toEqual({ spentUsd: "0" });
  client.close();
  await again.server.close(0);
});

describe("a target with several replicas", () => {
  // Two replicas, each answering with its name; "a" is full, and neither knows project "gone".
  const replicas = ["a", "b"].map((name) => {
    const replica = createGrpcServer();
    const calls: string[] = [];
    replica.add(
      billing.BillingService,
      unaryService({
        getCredit: async (req: billing.GetCreditRequest) => {
          calls.push(req.projectId);
          if (req.projectId === "gone") throw new NotFoundError("no such project");
          if (req.projectId === "new" && name === "a") throw new AtCapacityError(`replica ${name} is full`);
          return { spentUsd: name };
        },
        checkBudget: notImplemented,
        getTotals: notImplemented,
        batchGetTotals: notImplemented,
        setCredit: notImplemented,
        requireCredit: notImplemented,
      }),
    );
    return { replica, calls };
  });
  let client: ReturnType<typeof connectClient<InstanceType<typeof billing.BillingClient>>>;
  beforeAll(async () => {
    const ports = await Promise.all(replicas.map(({ replica }) => replica.listen("127.0.0.1", 0)));
    client = connectClient(billing.BillingClient, `ipv4:${ports.map((p) => `127.0.0.1:${p}`).join(",")}`);
  });
  afterAll(async () => {
    client.close();
    await Promise.all(replicas.map(({ replica }) => replica.close(0)));
  });

  test("calls go to every replica in turn, once each is connected", async () => {
    // The first calls go to whichever replica is connected first: a client connects to all of them at once.
    const seen = new Set<string>();
    for (let i = 0; i < 100 && seen.size < 2; i++) seen.add((await client.getCredit({ projectId: "p" })).spentUsd);
    const answers = [];
    for (let i = 0; i < 6; i++) answers.push((await client.getCredit({ projectId: "p" })).spentUsd);
    expect(answers.filter((a) => a === "a")).toHaveLength(3);
    expect(answers.filter((a) => a === "b")).toHaveLength(3);
  });

  test("a call a full replica refuses goes to the next; one every replica refuses, or any other error, is answered", async () => {
    for (let i = 0; i < 4; i++) {
      await expect(onReplicaWithRoom(() => client.getCredit({ projectId: "new" }), 2)).resolves.toEqual({
        spentUsd: "b",
      });
    }
    await expect(
      Promise.all([0, 1].map(() => onReplicaWithRoom(() => client.getCredit({ projectId: "new" }), 1))),
    ).rejects.toMatchObject({ kind: "at_capacity", details: "replica a is full" });
    const before = replicas.map(({ calls }) => calls.length);
    await expect(onReplicaWithRoom(() => client.getCredit({ projectId: "gone" }), 2)).rejects.toMatchObject({
      kind: "not_found",
    });
    expect(replicas.map(({ calls }) => calls.length).reduce((a, b) => a + b)).toBe(before.reduce((a, b) => a + b) + 1);
  });
});
