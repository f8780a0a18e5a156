import { randomUUID } from "node:crypto";
import { billing } from "@bas/proto";
import { eventually } from "@bas/testing";
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

test("billing/account (the official client's billing.account) shows what billing holds: no limit, then a limit less what was spent", async () => {
  await billingClient.setCredit({ projectId });
  const unlimited = await stack.request("GET", "/api/v3/billing/account");
  expect(unlimited).toMatchObject({
    status: 200,
    body: {
      name: "default",
      projectId,
      totalCreditsBalanceUsd: Number.MAX_SAFE_INTEGER,
      monthlyCreditsBalanceUsd: 0,
      additionalCreditsBalanceUsd: Number.MAX_SAFE_INTEGER,
      creditLimitUsd: null,
      spentUsd: "0",
      rateLimit: 0,
      isFreeTier: false,
      tracingDisabled: true,
      planInfo: {
        planName: "self-hosted",
        subscriptionStatus: null,
        subscriptionId: null,
        subscriptionCurrentPeriodEnd: null,
        subscriptionCanceledAt: null,
      },
    },
  });

  // A model call charged to the project, as the runner reports one.
  const usage = billing.UsageRecorded.fromPartial({
    id: randomUUID(),
    occurredAt: new Date(),
    projectId,
    sessionId: randomUUID(),
    llm: { model: "gpt-4o", inputTokens: 100_000, outputTokens: 10_000, ownKey: false },
  });
  const { js, streams } = stack.infra;
  await js.publish(streams.usage.subject("llm"), JSON.stringify(billing.UsageRecorded.toJSON(usage)), {
    msgID: usage.id,
  });
  const charged = await eventually(
    () => billingClient.getCredit({ projectId }),
    (credit) => credit.spentUsd !== "0",
  );

  await billingClient.setCredit({ projectId, limitUsd: "5" });
  const limited = (await stack.request("GET", "/api/v3/billing/account")).body;
  expect(limited).toMatchObject({ creditLimitUsd: "5", spentUsd: charged.spentUsd });
  expect(limited.totalCreditsBalanceUsd).toBeCloseTo(5 - Number(charged.spentUsd), 9);
  expect(limited.additionalCreditsBalanceUsd).toBe(limited.totalCreditsBalanceUsd);

  const nobody = await stack.request("GET", "/api/v3/billing/account", { key: null });
  expect(nobody.status).toBe(401);
});
