import { Metadata, type ServerUnaryCall, type sendUnaryData, status } from "@grpc/grpc-js";
import { ServiceError } from "@bas/errors";
import { GRPC_STATUS_OF } from "./grpc-status";
import { isUnavailable } from "./retry";

export const ERROR_KIND_KEY = "x-error-kind";
export const ERROR_FIELD_KEY = "x-error-field";

export interface HandlerLog {
  error(o: object, msg: string): void;
  warn?(o: object, msg: string): void;
}

/**
 * Adapts an async function to a grpc-js unary handler. A ServiceError becomes its gRPC status with its kind (and
 * field) in the trailers; an error that says a dependency is down (NATS, Postgres, another service: `isUnavailable`)
 * is UNAVAILABLE, so that callers wait and retry instead of failing their work; anything else is INTERNAL with a
 * generic message, logged here and never sent.
 */
export function unary<Req, Res>(
  fn: (request: Req, call: ServerUnaryCall<Req, Res>) => Promise<Res>,
  log?: HandlerLog,
): (call: ServerUnaryCall<Req, Res>, callback: sendUnaryData<Res>) => void {
  return (call, callback) => {
    // Through a promise chain so that a synchronous throw is mapped like a rejection.
    Promise.resolve()
      .then(() => fn(call.request, call))
      .then(
        (response) => callback(null, response),
        (err: unknown) => {
          if (err instanceof ServiceError) {
            const metadata = new Metadata();
            metadata.set(ERROR_KIND_KEY, err.kind);
            if (err.field) metadata.set(ERROR_FIELD_KEY, JSON.stringify(err.field));
            callback({ code: GRPC_STATUS_OF[err.kind], details: err.message, metadata });
            return;
          }
          if (isUnavailable(err)) {
            (log?.warn ?? log?.error)?.call(log, { err, path: call.getPath() }, "a dependency is unavailable");
            callback({ code: status.UNAVAILABLE, details: "temporarily unavailable: a dependency did not answer" });
            return;
          }
          log?.error({ err, path: call.getPath() }, "unhandled error in gRPC handler");
          callback({ code: status.INTERNAL, details: "internal error" });
        },
      );
  };
}

/** Builds a whole service implementation from async functions. */
export function unaryService<T extends Record<string, (req: any, call: any) => Promise<any>>>(
  handlers: T,
  log?: HandlerLog,
): { [K in keyof T]: ReturnType<typeof unary<Parameters<T[K]>[0], Awaited<ReturnType<T[K]>>>> } {
  return Object.fromEntries(Object.entries(handlers).map(([name, fn]) => [name, unary(fn, log)])) as any;
}
