import { status } from "@grpc/grpc-js";

/**
 * Errors a service raises on purpose. Each carries the gRPC status it maps to and a stable `kind` that travels in
 * the gRPC trailers, so the gateway can map it to the exact HTTP answer (402 vs 409, for instance).
 */
export abstract class ServiceError extends Error {
  abstract readonly code: status;
  abstract readonly kind: string;
  /** For validation errors: the field that is wrong, as the REST layer names it (e.g. ["body", "task"]). */
  readonly field?: (string | number)[];
  constructor(message: string, options?: ErrorOptions & { field?: (string | number)[] }) {
    super(message, options);
    this.name = new.target.name;
    if (options?.field) this.field = options.field;
  }
}

export class NotFoundError extends ServiceError {
  readonly code = status.NOT_FOUND;
  readonly kind = "not_found";
}
/** The aggregate is in a state where the command is not allowed (a stopped session takes no task). */
export class IllegalStateError extends ServiceError {
  readonly code = status.FAILED_PRECONDITION;
  readonly kind = "illegal_state";
}
/** A report from a worker whose job was handed to a newer one (a later attempt): that worker must stop. */
export class SupersededError extends ServiceError {
  readonly code = status.FAILED_PRECONDITION;
  readonly kind = "superseded";
}
export class InvalidArgumentError extends ServiceError {
  readonly code = status.INVALID_ARGUMENT;
  readonly kind = "invalid_argument";
}
/** A limit on concurrent work was reached; retrying later may succeed. */
export class LimitExceededError extends ServiceError {
  readonly code = status.RESOURCE_EXHAUSTED;
  readonly kind = "limit_exceeded";
}
/**
 * The work could not be done now (the caller's deadline would pass first, the service is overloaded) and nothing was
 * done: retrying later may succeed.
 */
export class UnavailableError extends ServiceError {
  readonly code = status.UNAVAILABLE;
  readonly kind = "unavailable";
}
export class InsufficientCreditError extends ServiceError {
  readonly code = status.FAILED_PRECONDITION;
  readonly kind = "insufficient_credit";
}
/** The caller asked for something it is not set up for (a model that needs an own key it has not stored). */
export class BadRequestError extends ServiceError {
  readonly code = status.FAILED_PRECONDITION;
  readonly kind = "bad_request";
}
