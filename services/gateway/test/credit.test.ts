import { billing } from "@bas/proto";
import { connectClient, type PromiseClient } from "@bas/service-kit";
import { sql } from "kysely";
import { type Stack, startStack } from "./harness";

let stack: Stack;
let billingClient: PromiseClient<InstanceType<typeof billing.BillingClient>>;
let projectId: string;

beforeAll(async () => {
  stack = await startStack({ billing: true });
  billingClient = connectClient(billing.BillingClient, `127.0.0.1:${stack.billing!.grpcPort}`);
  const { rows } = await sql<{ id: string }>`select id from gateway_projects where name = 'default'`.execute(
    stack.infra.db,
  );
  projectId = rows[0].id;
});
afterAll(async () => {
  billingClient.close();
  await stack.close();
});

test("a project with no credit left gets 402 Insufficient credits when creating a session or a browser", async () => {
  await billingClient.setCredit({ projectId, limitUsd: "0" });
  const session = await stack.request("POST", "/api/v3/sessions", { body: { task: "anything" } });
  expect(session.status).toBe(402);
  expect(session.body).toEqual({ detail: "Insufficient credits" });
  const browser = await stack.request("POST", "/api/v4/browsers", { body: {} });
  expect(browser.status).toBe(402);
  expect(browser.body).toEqual({ detail: "Insufficient credits" });
  // Nothing was created.
  const list = await stack.request("GET", "/api/v3/sessions");
  expect(list.body.total).toBe(0);
});

test("with credit left the same request is accepted", async () => {
  await billingClient.setCredit({ projectId, limitUsd: "5" });
  const session = await stack.request("POST", "/api/v3/sessions", { body: { task: "anything" } });
  expect(session.status).toBe(200);
  expect(session.body.status).toBe("created");
});
