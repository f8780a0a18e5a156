import { METHODS } from "node:http";
import fc from "fast-check";

/**
 * Generated requests for the gateway fuzz test, derived from the OpenAPI document: mostly plausible values for each
 * parameter and field (so that requests get past validation to the handlers and services), with bounds, wrong types,
 * deep JSON and malformed bodies mixed in. Requests are small descriptions (printed as is when a run fails), rendered
 * to bytes only when sent: a 100,000-level JSON body is `{deep: {depth: 100000, shape: "array"}}` here.
 */

/** A JSON Schema from the document, with its `$ref`s resolved. */
export type Schema = Record<string, any>;

/** One documented operation: where, how, and what it takes. */
export interface Operation {
  method: string;
  /** OpenAPI-style template: `/api/v3/sessions/{id}`. */
  path: string;
  query: { name: string; schema: Schema }[];
  /** The body's fields; null when the operation takes no body. */
  body: Record<string, Schema> | null;
}

/** A JSON value to put somewhere, as text. */
export type ValueSpec =
  | { json: unknown }
  | { number: string }
  | { deep: { depth: number; shape: "object" | "array" | "mixed" } }
  | { long: number };

export type BodySpec = { none: true } | { fields: [string, ValueSpec][] } | { value: ValueSpec } | { raw: string };

export interface Headers {
  key: "valid" | "none" | "wrong" | "malformed" | "long" | "oversized";
  contentType?: string;
  contentEncoding?: string;
  idempotencyKey?: string;
  accept?: string;
}

export type Expectation =
  | { kind: "documented" }
  /** A path no route serves: exactly 404 `{"detail":"Not Found"}`. */
  | { kind: "unknown-route" }
  /** A known path with a method it may not support: 405 with `Allow`, 200 for OPTIONS. */
  | { kind: "other-method"; allowed: string[] };

export interface FuzzRequest {
  method: string;
  path: string;
  query: string;
  body: BodySpec;
  headers: Headers;
  expect: Expectation;
  /** Send half the body, then hang up. */
  hangUp?: boolean;
}

const weirdText = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.string({ unit: "grapheme", maxLength: 20 }),
  fc.constantFrom("", " ", "%", "%00", "..", "../..", "null", "-1", "١٢", "\u0000", "' OR 1=1 --", "<script>"),
);

/** Integers around the wire's bounds (int32, uint32, safe integers) and numbers that are not integers at all. */
const WIRE_NUMBERS = [
  "2147483647",
  "2147483648",
  "-2147483648",
  "-2147483649",
  "4294967296",
  "9007199254740993",
  "999999999999999",
  "99999999999999999999",
  "1.5",
  "-0",
  "1e309",
  "-1e309",
  "1e-400",
];
const numberText = fc.oneof(fc.constantFrom(...WIRE_NUMBERS), fc.integer().map(String), fc.double().map(String));

/** Numbers just outside a schema's bounds, and the wire's. */
function edgeNumbers(schema: Schema): fc.Arbitrary<string> {
  const bounds = [schema.minimum, schema.maximum].filter((b) => typeof b === "number");
  const near = bounds.flatMap((b: number) => [b - 1, b + 1].map(String));
  return near.length ? fc.oneof(fc.constantFrom(...near), numberText) : numberText;
}

/** A value the schema accepts (as far as a JSON Schema can say; cross-field rules may still refuse it). */
function plausible(schema: Schema): fc.Arbitrary<unknown> {
  if (Array.isArray(schema.enum)) return fc.constantFrom(...schema.enum);
  const choices = schema.anyOf ?? schema.oneOf;
  if (Array.isArray(choices)) return fc.oneof(...choices.map(plausible));
  switch (schema.type) {
    case "integer": {
      const min = schema.minimum ?? 0;
      const max = schema.maximum ?? 1_000;
      return fc.constantFrom(...new Set([min, max, schema.default ?? min, Math.min(max, min + 1)]));
    }
    case "number":
      return fc.constantFrom(0.5, 2, 10);
    case "boolean":
      return fc.boolean();
    case "null":
      return fc.constant(null);
    case "string":
      if (schema.format === "uuid") return fc.uuid();
      if (schema.pattern) return fc.constantFrom("1.5", "10", "0.01");
      return fc.constantFrom("Open example.com and read the title", "x");
    case "object":
      // A map of strings (metadata, sensitiveData) or free-form JSON (outputSchema, as a valid JSON Schema).
      return schema.additionalProperties?.type === "string"
        ? fc.constantFrom({}, { k: "v" }, { a: "1", b: "2" })
        : fc.constantFrom({ type: "object", properties: { name: { type: "string" } } }, { type: "string" }, {});
    default:
      return fc.jsonValue({ maxDepth: 2 });
  }
}

/** Fields that hold a caller's free-form JSON, which crosses gRPC as it is. */
const FREE_FORM = new Set(["outputSchema", "metadata", "sensitiveData"]);

const deepValue: fc.Arbitrary<ValueSpec> = fc
  .record({
    depth: fc.constantFrom(31, 32, 33, 34, 50, 1_000, 100_000),
    shape: fc.constantFrom<"object" | "array" | "mixed">("object", "array", "mixed"),
  })
  .map((deep) => ({ deep }));

const wildValue: fc.Arbitrary<ValueSpec> = fc.oneof(
  fc.jsonValue({ maxDepth: 3 }).map((json) => ({ json })),
  weirdText.map((json) => ({ json })),
  fc.constantFrom(10_001, 100_001, 300_000).map((long) => ({ long })),
);

function fieldValue(name: string, schema: Schema): fc.Arbitrary<ValueSpec> {
  return fc.oneof(
    { arbitrary: plausible(schema).map((json) => ({ json })), weight: 10 },
    { arbitrary: edgeNumbers(schema).map((number) => ({ number })), weight: 1 },
    { arbitrary: wildValue, weight: 1 },
    { arbitrary: deepValue, weight: FREE_FORM.has(name) ? 3 : 0 },
  );
}

function body(fields: Record<string, Schema> | null): fc.Arbitrary<BodySpec> {
  const names = Object.keys(fields ?? {});
  const documented = names.length
    ? fc
        .subarray(names, { maxLength: Math.min(5, names.length) })
        .chain((chosen) =>
          fc.tuple(...chosen.map((n) => fieldValue(n, fields![n]).map((v) => [n, v] as [string, ValueSpec]))),
        )
        .map((pairs): BodySpec => ({ fields: pairs }))
    : fc.constant<BodySpec>({ none: true });
  return fc.oneof(
    { arbitrary: documented, weight: fields ? 12 : 0 },
    { arbitrary: fc.constant<BodySpec>({ none: true }), weight: fields ? 2 : 12 },
    {
      arbitrary: fc
        .tuple(fc.constantFrom("unknown", "__proto__", "constructor", ""), wildValue)
        .map(([n, v]): BodySpec => ({ fields: [[n, v]] })),
      weight: 1,
    },
    { arbitrary: fc.oneof(wildValue, deepValue).map((v): BodySpec => ({ value: v })), weight: 1 },
    {
      arbitrary: fc
        .oneof(
          weirdText,
          fc.constantFrom('{"task":', "{'task':'x'}", "[", '{"a":1}}', "\u0000", "{}".repeat(10_000), '{"task":"x",}'),
        )
        .map((raw): BodySpec => ({ raw })),
      weight: 1,
    },
  );
}

function queryString(params: Operation["query"]): fc.Arbitrary<string> {
  const value = (schema: Schema) =>
    fc.oneof(
      { arbitrary: plausible(schema).map(String), weight: 6 },
      { arbitrary: edgeNumbers(schema), weight: 3 },
      { arbitrary: weirdText, weight: 1 },
    );
  const documented = fc.tuple(
    ...params.map((p) =>
      fc.option(
        value(p.schema).map((v) => [p.name, v] as [string, string]),
        { nil: undefined },
      ),
    ),
  );
  const junk = fc.array(fc.tuple(fc.constantFrom("x", "", "page[]", "__proto__"), weirdText), { maxLength: 2 });
  const encode = (pairs: [string, string][]) =>
    pairs.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`).join("&");
  return fc.oneof(
    {
      arbitrary: documented.map((pairs) => encode(pairs.filter((p): p is [string, string] => p !== undefined))),
      weight: 8,
    },
    { arbitrary: junk.map(encode), weight: 1 },
    { arbitrary: fc.constantFrom("a=%zz", "&&&", "=", "page=1;DROP TABLE", "%", "page=1&page=0"), weight: 1 },
  );
}

const noisyHeaders: fc.Arbitrary<Headers> = fc.record(
  {
    key: fc.constantFrom<Headers["key"]>("valid", "none", "wrong", "malformed", "long", "oversized"),
    contentType: fc.constantFrom(
      "application/json",
      "text/plain",
      "application/x-www-form-urlencoded",
      "multipart/form-data; boundary=x",
      "application/json; charset=utf-16",
      "application/json; charset=bogus",
      "",
    ),
    contentEncoding: fc.constantFrom("gzip", "deflate", "br", "identity", "x-unknown"),
    idempotencyKey: fc.oneof(
      weirdText.filter((s) => /^[\x20-\x7e]*$/.test(s)),
      fc.constant("k".repeat(500)),
    ),
    accept: fc.constantFrom("*/*", "text/html", "application/xml", ""),
  },
  { requiredKeys: ["key"] },
);
const headers: fc.Arbitrary<Headers> = fc.oneof(
  { arbitrary: fc.constant<Headers>({ key: "valid", contentType: "application/json" }), weight: 4 },
  { arbitrary: noisyHeaders, weight: 1 },
);

const pathSegment = (realId: string) =>
  fc.oneof(
    { arbitrary: fc.constant(realId), weight: 3 },
    { arbitrary: fc.uuid(), weight: 3 },
    { arbitrary: fc.uuid().map((u) => u.toUpperCase()), weight: 1 },
    { arbitrary: weirdText.map(encodeURIComponent), weight: 2 },
    {
      arbitrary: fc.constantFrom("%", "%zz", "%2F", "..%2F..%2Fpackage.json", "swagger-ui.css", "x".repeat(3000)),
      weight: 1,
    },
  );

// CONNECT takes over the socket and PRI is the HTTP/2 preface: neither is a request a route could answer.
const OTHER_METHODS = METHODS.filter((m) => m !== "CONNECT" && m !== "PRI");

const fill = (template: string, segment: string) => template.replace(/\{\w+\}/g, segment);

/**
 * Every documented operation with generated parameters, headers and bodies; every other method on known paths;
 * paths no route serves; and callers that hang up half way through their body.
 */
export function fuzzRequest(
  operations: Operation[],
  methodsByPath: Map<string, string[]>,
  realId: string,
): fc.Arbitrary<FuzzRequest> {
  const documented = fc
    .record({ op: fc.constantFrom(...operations), segment: pathSegment(realId), slash: fc.integer({ min: 0, max: 9 }) })
    .chain(({ op, segment, slash }) =>
      fc.record({
        method: fc.constant(op.method),
        // Now and then a trailing slash: the same route to the router.
        path: fc.constant(fill(op.path, segment) + (slash === 0 ? "/" : "")),
        query: queryString(op.query),
        body: body(op.body),
        headers,
        expect: fc.constant<Expectation>({ kind: "documented" }),
      }),
    );
  const otherMethod = fc
    .record({
      path: fc.constantFrom(...methodsByPath.keys()),
      id: fc.uuid(),
      method: fc.constantFrom(...OTHER_METHODS),
    })
    .chain(({ path, id, method }) =>
      fc.record({
        method: fc.constant(method),
        path: fc.constant(fill(path, id)),
        query: fc.constant(""),
        body: body(null),
        headers,
        expect: fc.constant<Expectation>({ kind: "other-method", allowed: methodsByPath.get(path)! }),
      }),
    );
  const unknownRoute = fc.record({
    method: fc.constantFrom(...OTHER_METHODS),
    path: fc.oneof(
      fc.uuid().map((id) => `/live/${id}`),
      fc.uuid().map((id) => `/api/v3/sessions/${id}/messages/${id}`),
      fc.constantFrom(
        "/",
        "/api",
        "/api/v2/sessions",
        "/api/v4/mailboxes",
        "/api/v3/profile",
        "/nope",
        "/.env",
        "/admin",
      ),
      weirdText.map((s) => `/x/${encodeURIComponent(s)}`),
    ),
    query: queryString([]),
    body: body(null),
    headers,
    expect: fc.constant<Expectation>({ kind: "unknown-route" }),
  });
  const hangUp = fc.record({
    method: fc.constant("POST"),
    path: fc.constantFrom("/api/v3/sessions", "/api/v4/browsers", `/api/v3/sessions/${realId}/stop`),
    query: fc.constant(""),
    body: fc.constant<BodySpec>({ value: { json: { task: "x".repeat(2_000) } } }),
    headers: fc.constant<Headers>({ key: "valid", contentType: "application/json" }),
    expect: fc.constant<Expectation>({ kind: "documented" }),
    hangUp: fc.constant(true),
  });
  return fc.oneof(
    { arbitrary: documented, weight: 16 },
    { arbitrary: otherMethod, weight: 3 },
    { arbitrary: unknownRoute, weight: 3 },
    { arbitrary: hangUp, weight: 1 },
  );
}

function deepJson({ depth, shape }: { depth: number; shape: "object" | "array" | "mixed" }): string {
  if (shape === "object") return `${'{"a":'.repeat(depth - 1)}{}${"}".repeat(depth - 1)}`;
  if (shape === "array") return `{"a":${"[".repeat(depth - 1)}${"]".repeat(depth - 1)}}`;
  const pairs = Math.floor(depth / 2);
  return `${'{"a":['.repeat(pairs)}1${"]}".repeat(pairs)}`;
}

export function renderValue(spec: ValueSpec): string {
  if ("json" in spec) return JSON.stringify(spec.json) ?? "null";
  if ("number" in spec) return spec.number;
  if ("deep" in spec) return deepJson(spec.deep);
  return JSON.stringify("x".repeat(spec.long));
}

/** The body's bytes, or undefined for none. */
export function renderBody(spec: BodySpec): string | undefined {
  if ("none" in spec) return undefined;
  if ("raw" in spec) return spec.raw;
  if ("value" in spec) return renderValue(spec.value);
  return `{${spec.fields.map(([name, v]) => `${JSON.stringify(name)}:${renderValue(v)}`).join(",")}}`;
}

export function renderHeaders(spec: Headers, validKey: string): Record<string, string> {
  const keys: Record<Headers["key"], string | undefined> = {
    valid: validKey,
    none: undefined,
    wrong: `bas_${"A".repeat(43)}`,
    malformed: "not a key",
    long: `bas_${"a".repeat(5_000)}`,
    // Past Node's 16 KB header limit: the server's parser answers 431 itself.
    oversized: `bas_${"a".repeat(20_000)}`,
  };
  const out: Record<string, string> = {};
  const key = keys[spec.key];
  if (key !== undefined) out["X-Service-API-Key"] = key;
  if (spec.contentType !== undefined) out["Content-Type"] = spec.contentType;
  if (spec.contentEncoding !== undefined) out["Content-Encoding"] = spec.contentEncoding;
  if (spec.idempotencyKey !== undefined) out["Idempotency-Key"] = spec.idempotencyKey;
  if (spec.accept !== undefined) out.Accept = spec.accept;
  return out;
}
