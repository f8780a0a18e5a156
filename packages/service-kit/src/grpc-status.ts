import type { ErrorKind } from "@bas/errors";
import { status } from "@grpc/grpc-js";

/** The gRPC status each kind of service error is answered with; the gateway maps kinds to HTTP in its own table. */
export const GRPC_STATUS_OF: Record<ErrorKind, status> = {
  not_found: status.NOT_FOUND,
  illegal_state: status.FAILED_PRECONDITION,
  superseded: status.FAILED_PRECONDITION,
  invalid_argument: status.INVALID_ARGUMENT,
  limit_exceeded: status.RESOURCE_EXHAUSTED,
  at_capacity: status.RESOURCE_EXHAUSTED,
  unavailable: status.UNAVAILABLE,
  insufficient_credit: status.FAILED_PRECONDITION,
  bad_request: status.FAILED_PRECONDITION,
  quota_exceeded: status.FAILED_PRECONDITION,
  plan_limit: status.FAILED_PRECONDITION,
};
