import { createHash } from "node:crypto";
import { status } from "@grpc/grpc-js";
import { gateway } from "@bas/proto";
import { connectClient, type PromiseClient } from "@bas/service-kit";
import { ROUTES } from "../src/service";
import { type Stack, startStack } from "./harness";

let stack: Stack;
let admin: PromiseClient<InstanceType<typeof gateway.ProjectAdminClient>>;

beforeAll(async () => {
  // A cache TTL far longer than any test: a revocation that works can only have come through the notification.
  stack = await startStack({ env: { API_KEY_CACHE_TTL_MS: String(60 * 60 * 1000) } });
  admin = connectClient(gateway.ProjectAdminClient, `127.0.0.1:${stack.gateway.grpcPort}`);
});
afterAll(async () => {
  admin.close();
  await stack.close();
});

const SOME_ID = "0b8f8a5e-1d2c-4e8b-9f1a-3c5d7e9f1a2b";
const protectedRoutes = ROUTES.filter((r) => r.auth === "api-key").map((r) => [
  r.method.toUpperCase(),
  r.path.replace("{id}", SOME_ID),
]);

describe("every /api route needs X-Service-API-Key", () => {
  test("the registry's protected routes are exactly the /api/v3 resource routes", () => {
    expect(protectedRoutes.length).toBeGreaterThanOrEqual(6);
    for (const [, path] of protectedRoutes) expect(path.startsWith("/api/")).toBe(true);
  });

  test.each(protectedRoutes)("%s %s without a key → 401", async (method, path) => {
    const reply = await stack.request(method, path, { key: null, body: method === "GET" ? undefined : {} });
    expect(reply.status).toBe(401);
    expect(reply.body).toEqual({ detail: "Missing API key: send it in the X-Service-API-Key header" });
  });

  test.each(protectedRoutes)("%s %s with a wrong key → 401", async (method, path) => {
    for (const key of [`bas_${"x".repeat(43)}`, "not-even-a-key", `${stack.bootstrapKey}x`]) {
      const reply = await stack.request(method, path, { key, body: method === "GET" ? undefined : {} });
      expect(reply.status).toBe(401);
      expect(reply.body).toEqual({ detail: "Invalid API key" });
    }
  });

  test("the official clients' X-Browser-Use-API-Key header is taken too, with the same checks", async () => {
    const viaTheirs = (key: string, headers: Record<string, string> = {}) =>
      stack.request("GET", "/api/v3/sessions", { key: null, headers: { "X-Browser-Use-API-Key": key, ...headers } });
    const good = await viaTheirs(stack.bootstrapKey);
    expect(good.status).toBe(200);
    expect(good.body).toMatchObject({ page: 1, pageSize: 20 });
    expect((await viaTheirs(`${stack.bootstrapKey}x`)).body).toEqual({ detail: "Invalid API key" });
    // The same key in both is one key; two different keys are refused rather than one of them chosen.
    expect((await viaTheirs(stack.bootstrapKey, { "X-Service-API-Key": stack.bootstrapKey })).status).toBe(200);
    const two = await viaTheirs(stack.bootstrapKey, { "X-Service-API-Key": await stack.newProjectKey() });
    expect(two.status).toBe(401);
    expect(two.body).toEqual({ detail: "Two different API keys: send one, in X-Service-API-Key" });
  });

  test("auth comes before validation: an invalid request without a key is 401, not 422", async () => {
    const reply = await stack.request("GET", "/api/v3/sessions?page=0", { key: null });
    expect(reply.status).toBe(401);
  });

  test("the OpenAPI document and docs page are public", async () => {
    expect((await stack.request("GET", "/api/v3/openapi.json", { key: null })).status).toBe(200);
    const docs = await stack.request("GET", "/api/v3/docs", { key: null });
    expect(docs.status).toBe(200);
    expect(docs.text).toContain("swagger-ui-bundle.js");
  });
});

describe("projects are isolated", () => {
  let keyA: string;
  let keyB: string;
  let sessionOfA: string;

  beforeAll(async () => {
    const a = await admin.createProject({ name: "project-a" });
    const b = await admin.createProject({ name: "project-b" });
    keyA = (await admin.createApiKey({ projectId: a.id, label: "a" })).plainKey;
    keyB = (await admin.createApiKey({ projectId: b.id, label: "b" })).plainKey;
    const created = await stack.request("POST", "/api/v3/sessions", { key: keyA, body: { keepAlive: true } });
    expect(created.status).toBe(200);
    sessionOfA = created.body.id;
  });

  test("another project's session is 404 on every route, and absent from its list", async () => {
    for (const [method, suffix, body] of [
      ["GET", "", undefined],
      ["GET", "/messages", undefined],
      ["POST", "/stop", { strategy: "session" }],
      ["DELETE", "", undefined],
    ] as const) {
      const reply = await stack.request(method, `/api/v3/sessions/${sessionOfA}${suffix}`, { key: keyB, body });
      expect(reply.status).toBe(404);
      expect(reply.body).toEqual({ detail: "Session not found" });
    }
    const dispatch = await stack.request("POST", "/api/v3/sessions", {
      key: keyB,
      body: { task: "hijack", sessionId: sessionOfA },
    });
    expect(dispatch.status).toBe(404);
    const listB = await stack.request("GET", "/api/v3/sessions", { key: keyB });
    expect(listB.body).toEqual({ sessions: [], total: 0, page: 1, pageSize: 20 });
  });

  test("the owner still sees it, untouched by the other project's attempts", async () => {
    const reply = await stack.request("GET", `/api/v3/sessions/${sessionOfA}`, { key: keyA });
    expect(reply.status).toBe(200);
    expect(reply.body.status).not.toBe("stopped");
    const list = await stack.request("GET", "/api/v3/sessions", { key: keyA });
    expect(list.body.sessions.map((s: { id: string }) => s.id)).toEqual([sessionOfA]);
  });

  test("the bootstrap key's default project sees neither", async () => {
    const list = await stack.request("GET", "/api/v3/sessions");
    expect(list.body.sessions.map((s: { id: string }) => s.id)).not.toContain(sessionOfA);
  });
});

describe("API keys", () => {
  test("a key is shown once, stored only as its SHA-256, and listed by prefix", async () => {
    const project = await admin.createProject({ name: "stored-keys" });
    const created = await admin.createApiKey({ projectId: project.id, label: "ci" });
    expect(created.plainKey).toMatch(/^bas_[A-Za-z0-9_-]{43}$/);
    expect(created.key).toMatchObject({ projectId: project.id, label: "ci", prefix: created.plainKey.slice(0, 12) });
    const rows = await stack.infra.db
      .selectFrom("gateway_api_keys")
      .selectAll()
      .where("id", "=", created.key!.id)
      .execute();
    expect(rows).toHaveLength(1);
    expect(JSON.stringify(rows)).not.toContain(created.plainKey);
    expect(Buffer.from(rows[0].hash).equals(createHash("sha256").update(created.plainKey).digest())).toBe(true);
    const listed = await admin.listApiKeys({ projectId: project.id });
    expect(JSON.stringify(listed)).not.toContain(created.plainKey);
    expect(listed.keys.map((k) => k.id)).toEqual([created.key!.id]);
  });

  test("a key revoked through ProjectAdmin is refused at once", async () => {
    const project = await admin.createProject({ name: "revoke-grpc" });
    const { key, plainKey } = await admin.createApiKey({ projectId: project.id, label: "" });
    expect((await stack.request("GET", "/api/v3/sessions", { key: plainKey })).status).toBe(200);
    await admin.revokeApiKey({ keyId: key!.id });
    const reply = await stack.request("GET", "/api/v3/sessions", { key: plainKey });
    expect(reply.status).toBe(401);
    expect((await admin.listApiKeys({ projectId: project.id })).keys[0].revokedAt).toBeInstanceOf(Date);
  });

  test("ProjectAdmin errors: unknown project is NOT_FOUND, a taken name FAILED_PRECONDITION, a bad name INVALID_ARGUMENT", async () => {
    await expect(admin.createApiKey({ projectId: SOME_ID, label: "" })).rejects.toMatchObject({
      code: status.NOT_FOUND,
    });
    await admin.createProject({ name: "taken" });
    await expect(admin.createProject({ name: "taken" })).rejects.toMatchObject({ code: status.FAILED_PRECONDITION });
    await expect(admin.createProject({ name: "" })).rejects.toMatchObject({ code: status.INVALID_ARGUMENT });
    await expect(admin.revokeApiKey({ keyId: SOME_ID })).rejects.toMatchObject({ code: status.NOT_FOUND });
  });

  test("the bootstrap key belongs to the default project", async () => {
    const { projects } = await admin.listProjects({});
    const defaults = projects.filter((p) => p.name === "default");
    expect(defaults).toHaveLength(1);
    const keys = await admin.listApiKeys({ projectId: defaults[0].id });
    expect(keys.keys.map((k) => k.prefix)).toContain(stack.bootstrapKey.slice(0, 12));
  });
});
