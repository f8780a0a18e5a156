import Ajv2020 from "ajv/dist/2020";
import addFormats from "ajv-formats";
import { ROUTES } from "../src/service";
import { type Stack, startStack } from "./harness";
import { validateOpenApi } from "./openapi-validator";

let stack: Stack;
let doc: any;

beforeAll(async () => {
  stack = await startStack();
  const reply = await stack.request("GET", "/api/v3/openapi.json", { key: null });
  expect(reply.status).toBe(200);
  doc = reply.body;
});
afterAll(() => stack.close());

test("the document is a valid OpenAPI 3.1 document (checked by an OpenAPI schema validator)", async () => {
  expect(await validateOpenApi(doc)).toEqual({ valid: true });
  expect(doc.openapi).toBe("3.1.0");
});

test("every registered route is documented in its version's document, with its parameters, auth and errors", async () => {
  const v4 = (await stack.request("GET", "/api/v4/openapi.json", { key: null })).body;
  const documented = ROUTES.filter((r) => !r.hidden);
  expect(documented.length).toBeGreaterThanOrEqual(7);
  for (const route of documented) {
    const operation = (route.path.startsWith("/api/v4/") ? v4 : doc).paths[route.path]?.[route.method];
    expect(operation).toMatchObject({ operationId: route.operationId, summary: route.summary });
    if (route.auth === "api-key") expect(operation.responses["401"]).toBeDefined();
    else expect(operation.security).toEqual([]);
  }
  const list = doc.paths["/api/v3/sessions"].get;
  expect(list.parameters).toEqual([
    expect.objectContaining({
      name: "page",
      in: "query",
      required: false,
      schema: expect.objectContaining({ type: "integer", minimum: 1, default: 1 }),
    }),
    expect.objectContaining({
      name: "page_size",
      in: "query",
      required: false,
      schema: expect.objectContaining({ type: "integer", minimum: 1, maximum: 100, default: 20 }),
    }),
  ]);
  expect(doc.paths["/api/v3/sessions/{id}"].get.parameters[0]).toMatchObject({
    name: "id",
    in: "path",
    required: true,
  });
  expect(doc.components.securitySchemes.APIKeyHeader).toEqual({
    type: "apiKey",
    in: "header",
    name: "X-Service-API-Key",
  });
  expect(doc.components.securitySchemes.BrowserUseAPIKeyHeader).toMatchObject({
    in: "header",
    name: "X-Browser-Use-API-Key",
  });
  expect(doc.security).toEqual([{ APIKeyHeader: [] }, { BrowserUseAPIKeyHeader: [] }]);
  expect(doc.components.schemas.Model.enum).toHaveLength(21);
  expect(doc.components.schemas.ProxyCountryCode.enum).toHaveLength(248);
  expect(doc.components.schemas.SessionStatus.enum).toEqual([
    "created",
    "idle",
    "running",
    "stopped",
    "timed_out",
    "error",
  ]);
});

describe("real answers conform to the documented schemas", () => {
  const ajv = addFormats(new Ajv2020({ strict: false, allErrors: true }));
  const check = (schemaName: string, value: unknown) => {
    if (!ajv.getSchema("openapi")) ajv.addSchema({ $id: "openapi", components: doc.components }, "openapi");
    const validate = ajv.compile({ $ref: `openapi#/components/schemas/${schemaName}` });
    const ok = validate(value);
    return ok ? [] : validate.errors;
  };

  test("SessionResponse, SessionListResponse, MessageListResponse, HTTPValidationError", async () => {
    const created = await stack.request("POST", "/api/v3/sessions", { body: { task: "conform", maxCostUsd: 3 } });
    expect(check("SessionResponse", created.body)).toEqual([]);
    const list = await stack.request("GET", "/api/v3/sessions");
    expect(check("SessionListResponse", list.body)).toEqual([]);
    const messages = await stack.request("GET", `/api/v3/sessions/${created.body.id}/messages`);
    expect(check("MessageListResponse", messages.body)).toEqual([]);
    // The first message (the task) conforms too: its summary is a string, as the contract's MessageResponse says.
    expect(messages.body.messages[0]).toMatchObject({ type: "user_message", summary: "" });
    expect(doc.components.schemas.MessageResponse.properties.summary).toMatchObject({ type: "string", default: "" });
    const invalid = await stack.request("GET", "/api/v3/sessions?page=0");
    expect(check("HTTPValidationError", invalid.body)).toEqual([]);
    // And the checker can fail: a session without its required fields does not conform.
    expect(check("SessionResponse", { id: created.body.id })).not.toEqual([]);
  });
});

describe("the docs page", () => {
  test("serves swagger-ui from the installed package, and only its own files", async () => {
    const page = await stack.request("GET", "/api/v3/docs", { key: null });
    expect(page.headers.get("content-type")).toMatch(/^text\/html/);
    expect(page.text).toContain('url: "openapi.json"');
    const bundle = await fetch(`${stack.baseUrl}/api/v3/docs/swagger-ui-bundle.js`);
    expect(bundle.status).toBe(200);
    expect(bundle.headers.get("content-type")).toMatch(/javascript/);
    expect((await bundle.text()).length).toBeGreaterThan(100_000);
    const css = await fetch(`${stack.baseUrl}/api/v3/docs/swagger-ui.css`);
    expect(css.status).toBe(200);
    for (const name of ["package.json", "..%2F..%2Fpackage.json", "index.html"]) {
      const reply = await stack.request("GET", `/api/v3/docs/${name}`, { key: null });
      expect(reply.status).toBe(404);
      expect(reply.body).toEqual({ detail: "Not Found" });
    }
  });
});
