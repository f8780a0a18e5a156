/**
 * The errors a service raises on purpose, free of any transport: domain code throws them, and each adapter maps the
 * `kind` to its own answer in one table (the gRPC status in @bas/service-kit's handler, the HTTP status in the
 * gateway). The kind also travels in gRPC trailers, so the gateway answers exactly (402 vs 409, for instance).
 * This module imports nothing, so a domain file that throws one loads nothing else.
 */
export type ErrorKind =
  | "not_found"
  | "illegal_state"
  | "superseded"
  | "invalid_argument"
  | "limit_exceeded"
  | "at_capacity"
  | "unavailable"
  | "insufficient_credit"
  | "bad_request"
  | "quota_exceeded"
  | "plan_limit";

export abstract class ServiceError extends Error {
  abstract readonly kind: ErrorKind;
  /** For validation errors: the field that is wrong, as the REST layer names it (e.g. ["body", "task"]). */
  readonly field?: (string | number)[];
  constructor(message: string, options?: ErrorOptions & { field?: (string | number)[] }) {
    super(message, options);
    this.name = new.target.name;
    if (options?.field) this.field = options.field;
  }
}

export class NotFoundError extends ServiceError {
  readonly kind = "not_found";
}
/** The aggregate is in a state where the command is not allowed (a stopped session takes no task). */
export class IllegalStateError extends ServiceError {
  readonly kind = "illegal_state";
}
/** A report from a worker whose job was handed to a newer one (a later attempt): that worker must stop. */
export class SupersededError extends ServiceError {
  readonly kind = "superseded";
}
export class InvalidArgumentError extends ServiceError {
  readonly kind = "invalid_argument";
}
/** A limit on concurrent work was reached; retrying later may succeed. */
export class LimitExceededError extends ServiceError {
  readonly kind = "limit_exceeded";
}
/**
 * The replica that took the call has no room for more (a browser node at its maximum); another replica of the same
 * service may have: a client that reaches several replicas tries the next one (@bas/service-kit `onReplicaWithRoom`).
 */
export class AtCapacityError extends ServiceError {
  readonly kind = "at_capacity";
}
/**
 * The work could not be done now (the caller's deadline would pass first, the service is overloaded, no browser
 * could be started) and nothing was done: retrying later may succeed.
 */
export class UnavailableError extends ServiceError {
  readonly kind = "unavailable";
}
export class InsufficientCreditError extends ServiceError {
  readonly kind = "insufficient_credit";
}
/** Storing this would pass a storage quota (a workspace's): retrying does not help, deleting something does. */
export class QuotaExceededError extends ServiceError {
  readonly kind = "quota_exceeded";
}
/**
 * The project has as many of a kind of resource as it may keep (profiles, workspaces): retrying does not help,
 * deleting one does.
 */
export class PlanLimitError extends ServiceError {
  readonly kind = "plan_limit";
}
/** The caller asked for something it is not set up for (a model that needs an own key it has not stored). */
export class BadRequestError extends ServiceError {
  readonly kind = "bad_request";
}
