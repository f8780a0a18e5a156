import { setTimeout as sleep } from "node:timers/promises";
import { createPool } from "@bas/event-store";
import { freePort } from "@bas/embedded-infra";
import { loadGatewayConfig } from "../src/config";
import { createProjectRateLimit } from "../src/http/rate-limit";
import { type GatewayService, startGatewayService } from "../src/service";
import { type Stack, startStack } from "./harness";

let stack: Stack;

// Five requests of a project (three allowed, two refused) must fit in one window, also on a slow machine.
beforeAll(async () => {
  stack = await startStack({ env: { RATE_LIMIT_REQUESTS: "3", RATE_LIMIT_WINDOW_SECONDS: "5" } });
});
afterAll(() => stack.close());

test("past the project's request limit: 429 with Retry-After; other projects are not affected; the window reopens", async () => {
  const key = await stack.newProjectKey();
  for (let i = 0; i < 3; i++) expect((await stack.request("GET", "/api/v3/sessions", { key })).status).toBe(200);

  const refused = await stack.request("GET", "/api/v3/sessions", { key });
  expect(refused.status).toBe(429);
  expect(refused.body).toEqual({ detail: expect.stringMatching(/^Rate limit exceeded \(3 requests per 5 s/) });
  const retryAfter = Number(refused.headers.get("retry-after"));
  expect(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 5).toBe(true);
  // Refused requests do nothing: a create past the limit makes no session.
  expect((await stack.request("POST", "/api/v3/sessions", { key, body: { task: "x" } })).status).toBe(429);

  const other = await stack.newProjectKey();
  expect((await stack.request("GET", "/api/v3/sessions", { key: other })).status).toBe(200);

  await sleep(retryAfter * 1000);
  const after = await stack.request("GET", "/api/v3/sessions", { key });
  expect(after.status).toBe(200);
  expect(after.body.total).toBe(0);
});

test("the limit holds across gateway replicas: a project gets its requests once, not once per replica", async () => {
  // A second replica on the same database and NATS, as behind a load balancer.
  const replica: GatewayService = await startGatewayService(loadGatewayConfig(stack.env));
  try {
    const key = await stack.newProjectKey();
    const viaReplica = () =>
      fetch(`http://127.0.0.1:${replica.port}/api/v3/sessions`, { headers: { "X-Service-API-Key": key } });
    expect((await stack.request("GET", "/api/v3/sessions", { key })).status).toBe(200);
    expect((await viaReplica()).status).toBe(200);
    expect((await stack.request("GET", "/api/v3/sessions", { key })).status).toBe(200);
    // Three in all: the fourth is refused on either replica.
    const refused = await viaReplica();
    expect(refused.status).toBe(429);
    expect(refused.headers.get("retry-after")).toMatch(/^[1-5]$/);
    expect((await stack.request("GET", "/api/v3/sessions", { key })).status).toBe(429);
  } finally {
    await replica.close();
  }
});

test("while Postgres cannot be reached, each replica counts in its own memory: requests go on, and the limit still holds", async () => {
  const pool = createPool(`postgres://postgres@127.0.0.1:${await freePort()}/nowhere`, { connectionTimeoutMs: 500 });
  try {
    const limit = createProjectRateLimit({ requests: 2, windowSeconds: 60, pool, namespace: "away" });
    await limit.admit("p");
    await limit.admit("p");
    await expect(limit.admit("p")).rejects.toMatchObject({ status: 429 });
  } finally {
    await pool.end();
  }
});
