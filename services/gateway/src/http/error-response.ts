import { status as grpcStatus } from "@grpc/grpc-js";
import { ClientError } from "@bas/service-kit";
import { ServiceError } from "@bas/errors";
import { HttpError } from "./http-error";
import { RequestValidationError, type ValidationErrorItem } from "./validation-error";

export interface ErrorResponse {
  status: number;
  body: { detail: string | ValidationErrorItem[] };
  headers?: Record<string, string>;
  /** A fault of ours (not the caller's): logged with the cause, answered without it. */
  internal?: boolean;
}

const detail = (status: number, text: string, headers?: Record<string, string>): ErrorResponse => ({
  status,
  body: { detail: text },
  ...(headers ? { headers } : {}),
});

// Messages of deliberate service errors are written for callers; cap them anyway.
const clip = (text: string | undefined, fallback: string) => (text ? text.slice(0, 500) : fallback);

/** The answer for a deliberate service error, by the stable kind it carries across gRPC. */
function byKind(
  kind: string | undefined,
  message: string,
  field: (string | number)[] | undefined,
): ErrorResponse | undefined {
  switch (kind) {
    case "not_found":
      return detail(404, clip(message, "Not found"));
    case "illegal_state":
      return detail(409, clip(message, "The resource is not in a state that allows this"));
    case "limit_exceeded":
    case "at_capacity":
      return detail(429, clip(message, "Too many concurrent active sessions. Stop one or wait for one to finish."));
    case "insufficient_credit":
      return detail(402, "Insufficient credits");
    case "bad_request":
      return detail(400, clip(message, "Bad request"));
    case "quota_exceeded":
      return detail(413, clip(message, "Storage quota exceeded"));
    case "plan_limit":
      // As the hosted service answers a plan that allows no more profiles.
      return detail(402, clip(message, "Subscription required for additional resources"));
    case "invalid_argument":
      return {
        status: 422,
        body: {
          detail: [{ loc: field?.length ? field : ["body"], msg: clip(message, "Invalid value"), type: "value_error" }],
        },
      };
    default:
      return undefined;
  }
}

function fromGrpc(err: ClientError): ErrorResponse {
  const known = byKind(err.kind, err.details, err.field);
  if (known) return known;
  switch (err.code) {
    case grpcStatus.NOT_FOUND:
      return detail(404, "Not found");
    case grpcStatus.ALREADY_EXISTS:
    case grpcStatus.FAILED_PRECONDITION:
      return detail(409, "The resource is not in a state that allows this");
    case grpcStatus.INVALID_ARGUMENT:
      return { status: 422, body: { detail: [{ loc: ["body"], msg: "Invalid request", type: "value_error" }] } };
    case grpcStatus.RESOURCE_EXHAUSTED:
      return detail(429, "Too many requests", { "Retry-After": "1" });
    case grpcStatus.UNAVAILABLE:
    case grpcStatus.DEADLINE_EXCEEDED:
      return {
        ...detail(503, "Service temporarily unavailable; retry shortly", { "Retry-After": "1" }),
        internal: true,
      };
    default:
      return { ...detail(500, "Internal server error"), internal: true };
  }
}

/** Body-reading failures from raw-body: they carry a `type` and a client-error status. */
function fromBodyReader(err: { status?: number; type?: string }): ErrorResponse | undefined {
  if (err.type === "entity.too.large") return detail(413, "Request body too large");
  if (err.type === "encoding.unsupported") return detail(415, "Unsupported content encoding");
  if (err.type === "charset.unsupported") return detail(415, "Unsupported charset");
  if (err.type === "request.aborted" || err.type === "request.size.invalid")
    return detail(400, "Request body incomplete");
  return undefined;
}

/**
 * The one place that turns any failure into an HTTP answer. Unknown failures are a 500 whose body says nothing
 * about the cause.
 */
export function toErrorResponse(err: unknown): ErrorResponse {
  if (err instanceof RequestValidationError) return { status: 422, body: { detail: err.detail } };
  if (err instanceof HttpError) return detail(err.status, err.detail, err.headers);
  if (err instanceof ClientError) return fromGrpc(err);
  if (err instanceof ServiceError) {
    const known = byKind(err.kind, err.message, err.field);
    if (known) return known;
  }
  if (err && typeof err === "object") {
    const body = fromBodyReader(err as { status?: number; type?: string });
    if (body) return body;
  }
  return { ...detail(500, "Internal server error"), internal: true };
}
