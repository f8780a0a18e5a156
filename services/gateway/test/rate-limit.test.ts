import { setTimeout as sleep } from "node:timers/promises";
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
