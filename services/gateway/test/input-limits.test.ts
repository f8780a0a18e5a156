import { request as httpRequest } from "node:http";
import { jsonDepth } from "../src/schemas/json-limits";
import { type Stack, startStack } from "./harness";

let stack: Stack;
beforeAll(async () => {
  stack = await startStack();
});
afterAll(() => stack.close());

const item = (loc: (string | number)[], msg: string, type: string) => ({ loc, msg, type });
const INT32_BOUND = "Input should be less than or equal to 2147483647";

describe("integers that travel as int32 are bounded: 2^31 and beyond is a 422, never a 500", () => {
  test.each([
    ["/api/v3/sessions?page=2147483648", "page"],
    ["/api/v3/sessions?page=999999999999999", "page"],
    ["/api/v4/browsers?pageNumber=2147483648", "pageNumber"],
    ["/api/v3/browsers?pageNumber=4294967296", "pageNumber"],
  ])("GET %s", async (path, field) => {
    const reply = await stack.request("GET", path);
    expect(reply.status).toBe(422);
    expect(reply.body).toEqual({ detail: [item(["query", field], INT32_BOUND, "less_than_equal")] });
  });

  test("the bound itself is a valid (empty) page", async () => {
    const reply = await stack.request("GET", "/api/v3/sessions?page=2147483647&page_size=100");
    expect(reply.status).toBe(200);
    expect(reply.body).toMatchObject({ sessions: [], page: 2147483647, pageSize: 100 });
  });

  test("the OpenAPI document states the bound", async () => {
    const doc = (await stack.request("GET", "/api/v3/openapi.json", { key: null })).body;
    const page = doc.paths["/api/v3/sessions"].get.parameters.find((p: { name: string }) => p.name === "page");
    expect(page.schema).toMatchObject({ minimum: 1, maximum: 2147483647 });
  });
});

/** A valid JSON Schema whose objects nest exactly `depth` levels (properties inside properties). */
function schemaOfDepth(depth: number): object {
  let schema: object = depth % 2 === 0 ? { type: "object", properties: {} } : { type: "string" };
  for (let level = depth % 2 === 0 ? 2 : 1; level < depth; level += 2)
    schema = { type: "object", properties: { a: schema } };
  return schema;
}

describe("outputSchema is limited in depth and size", () => {
  const tooDeep = [
    item(
      ["body", "outputSchema"],
      "outputSchema should be nested at most 32 levels deep (objects and arrays)",
      "json_too_deep",
    ),
  ];

  test("32 levels is accepted, and the session reads back whole by id and in the list", async () => {
    const schema = schemaOfDepth(32);
    expect(jsonDepth(schema)).toBe(32);
    const created = await stack.request("POST", "/api/v3/sessions", { body: { task: "deep", outputSchema: schema } });
    expect(created.status).toBe(200);
    expect(created.body.outputSchema).toEqual(schema);
    const read = await stack.request("GET", `/api/v3/sessions/${created.body.id}`);
    expect(read.status).toBe(200);
    expect(read.body.outputSchema).toEqual(schema);
    const list = await stack.request("GET", "/api/v3/sessions?page_size=100");
    expect(list.status).toBe(200);
    expect(list.body.sessions.find((s: { id: string }) => s.id === created.body.id).outputSchema).toEqual(schema);
  });

  test.each([33, 40, 1_000])("%i levels of objects is 422 json_too_deep", async (depth) => {
    const schema = schemaOfDepth(depth);
    const reply = await stack.request("POST", "/api/v3/sessions", { body: { task: "deep", outputSchema: schema } });
    expect(reply.status).toBe(422);
    expect(reply.body).toEqual({ detail: tooDeep });
  });

  test("100,000 levels of arrays inside it is 422 json_too_deep, and the gateway keeps answering", async () => {
    const raw = `{"task":"deep","outputSchema":{"allOf":${"[".repeat(100_000)}${"]".repeat(100_000)}}}`;
    const reply = await stack.request("POST", "/api/v3/sessions", { raw });
    expect(reply.status).toBe(422);
    expect(reply.body).toEqual({ detail: tooDeep });
    expect((await stack.request("GET", "/api/v3/sessions")).status).toBe(200);
  });

  test("more than 100,000 characters is 422 json_too_large", async () => {
    const schema = { type: "string", description: "x".repeat(100_000) };
    const reply = await stack.request("POST", "/api/v3/sessions", { body: { task: "big", outputSchema: schema } });
    expect(reply.status).toBe(422);
    expect(reply.body).toEqual({
      detail: [
        item(["body", "outputSchema"], "outputSchema should have at most 100000 characters as JSON", "json_too_large"),
      ],
    });
  });
});

describe("a body sent to a route that takes none", () => {
  /** A GET with a body, through node:http (fetch refuses one), its answer read to the end. */
  function getWithBody(path: string, payload: string) {
    return new Promise<{ status: number; bytes: number; length: number }>((resolve, reject) => {
      const out = httpRequest(
        `${stack.baseUrl}${path}`,
        { method: "GET", agent: false, headers: { "Content-Length": String(Buffer.byteLength(payload)) } },
        (res) => {
          let bytes = 0;
          res.on("data", (chunk: Buffer) => {
            bytes += chunk.length;
          });
          res.on("end", () =>
            resolve({ status: res.statusCode ?? 0, bytes, length: Number(res.headers["content-length"] ?? -1) }),
          );
          res.on("error", reject);
        },
      );
      out.on("error", reject);
      out.end(payload);
    });
  }

  test("is read and dropped, so a large answer reaches the caller whole (it was cut off by a reset)", async () => {
    const reply = await getWithBody("/api/v4/docs/swagger-ui.css", "[".repeat(200_000));
    expect(reply.status).toBe(200);
    expect(reply.bytes).toBe(reply.length);
  });
});
