import { status } from "@grpc/grpc-js";
import { ClientError } from "@bas/service-kit";
import {
  BadRequestError,
  IllegalStateError,
  InsufficientCreditError,
  InvalidArgumentError,
  LimitExceededError,
  NotFoundError,
} from "@bas/errors";
import { toErrorResponse } from "./error-response";
import { HttpError } from "./http-error";

const fromService = (code: status, details: string, kind?: string, field?: (string | number)[]) =>
  toErrorResponse(new ClientError(code, details, kind, field));

test.each([
  [status.NOT_FOUND, "Session not found", "not_found", 404, { detail: "Session not found" }],
  [status.FAILED_PRECONDITION, "Session is stopped", "illegal_state", 409, { detail: "Session is stopped" }],
  [
    status.RESOURCE_EXHAUSTED,
    "Too many concurrent active sessions. Max 5",
    "limit_exceeded",
    429,
    { detail: "Too many concurrent active sessions. Max 5" },
  ],
  [
    status.FAILED_PRECONDITION,
    "budget of project p-1 is 0",
    "insufficient_credit",
    402,
    { detail: "Insufficient credits" },
  ],
  [status.FAILED_PRECONDITION, "Model needs own key", "bad_request", 400, { detail: "Model needs own key" }],
])("given a gRPC error of kind %#, then the HTTP answer follows the kind", (code, details, kind, httpStatus, body) => {
  const response = fromService(code, details, kind);
  expect(response.status).toBe(httpStatus);
  expect(response.body).toEqual(body);
  expect(response.internal).toBeFalsy();
});

test("given invalid_argument with a field, then it is a 422 located at that field", () => {
  expect(
    fromService(status.INVALID_ARGUMENT, "after does not name a message", "invalid_argument", ["query", "after"]),
  ).toEqual({
    status: 422,
    body: { detail: [{ loc: ["query", "after"], msg: "after does not name a message", type: "value_error" }] },
  });
});

test("given an unreachable service, then 503 with Retry-After, logged as ours", () => {
  const response = fromService(status.UNAVAILABLE, "connect ECONNREFUSED 10.0.0.7:50051");
  expect(response).toMatchObject({ status: 503, headers: { "Retry-After": "1" }, internal: true });
  expect(JSON.stringify(response.body)).not.toContain("10.0.0.7");
});

test("given an internal gRPC error or any unexpected exception, then 500 saying nothing about the cause", () => {
  for (const err of [
    new ClientError(status.INTERNAL, "relation sessions_view does not exist", undefined, undefined),
    new TypeError("Cannot read properties of undefined (reading 'id')"),
    "a thrown string",
  ]) {
    expect(toErrorResponse(err)).toEqual({ status: 500, body: { detail: "Internal server error" }, internal: true });
  }
});

test("given a gRPC error without a kind, then its details are not echoed", () => {
  expect(fromService(status.NOT_FOUND, "row 42 in table x")).toMatchObject({
    status: 404,
    body: { detail: "Not found" },
  });
});

test("given errors raised in the gateway itself, then they map like the same kinds from a service", () => {
  expect(toErrorResponse(new NotFoundError("Project not found")).status).toBe(404);
  expect(toErrorResponse(new IllegalStateError("x")).status).toBe(409);
  expect(toErrorResponse(new LimitExceededError("x")).status).toBe(429);
  expect(toErrorResponse(new InsufficientCreditError("x")).body).toEqual({ detail: "Insufficient credits" });
  expect(toErrorResponse(new BadRequestError("x")).status).toBe(400);
  expect(toErrorResponse(new InvalidArgumentError("bad", { field: ["body", "task"] })).status).toBe(422);
  expect(toErrorResponse(new HttpError(410, "This link has expired"))).toMatchObject({
    status: 410,
    body: { detail: "This link has expired" },
  });
});
