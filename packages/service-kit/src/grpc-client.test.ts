import { getEventListeners } from "node:events";
import { setTimeout as sleep } from "node:timers/promises";
import { status } from "@grpc/grpc-js";
import { billing } from "@bas/proto";
import { connectClient } from "./grpc-client";
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
        if (req.projectId === "slow") await sleep(10_000);
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
